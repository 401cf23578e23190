"""``qctl replay`` (re-deliver ledger events) and ``qctl nuke`` (reset a source)."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, note
from qctl.core.audit import describe
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import SinceOpt, UntilOpt
from qctl.systems.azync.ops import events as ops_events
from qctl.systems.azync.ops import vacuum as ops_vacuum
from qctl_store.types import ReplayFilter, Source


def replay(
    ctx: typer.Context,
    subscriber: Annotated[str, typer.Option("--subscriber", help="Only to this subscriber.")] = "",
    event_type: Annotated[str, typer.Option("--event-type", "-t", help="Only this type.")] = "",
    event_id: Annotated[
        str | None, typer.Option("--event-id", help="Only this event (id or prefix).")
    ] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", "-n", metavar="N", min=0, help="At most this many (0: azync's 1,000,000)."
        ),
    ] = 0,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Re-deliver ledger events to their subscribers (as replay deliveries).

    \b
    Example:
      qctl replay --subscriber mailer --since -2h --dry-run
    """
    if not dry_run:
        common.cli(ctx).require_writable("replay")
    store = options.store(ctx)
    flt = ReplayFilter(
        subscriber=subscriber,
        event_type=event_type,
        event_id=options.resolve(ctx, "event", event_id) if event_id else None,
        since=common.instant(since, "--since"),
        until=common.instant(until, "--until"),
        limit=limit,
    )
    plan = ops_events.replay(store, flt, dry_run=True)
    if common.proceed(
        dry_run,
        yes,
        output,
        plan,
        f"would replay {plan.events} event(s) to {plan.subscribers} subscriber(s): "
        f"{plan.deliveries} replay deliveries",
        f"Replay {plan.events} event(s) to {plan.subscribers} subscriber(s) "
        f"({plan.deliveries} deliveries)?",
    ):
        done = ops_events.replay(store, flt)
        common.done(
            done, f"enqueued {done.deliveries} replay deliveries of {done.events} event(s)", output
        )


def nuke(
    ctx: typer.Context,
    source: Annotated[
        Source,
        typer.Option(
            "--source",
            "-s",
            help="The source to reset: azync's own reset is of the queue; the others "
            "strand the runs their jobs belong to (the dry run says how many).",
        ),
    ] = Source.QUEUE,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete every job, stats row and idempotency key of a source, in one transaction
    (a dev reset; the event ledger stays). On a terminal the operator types the
    context's name (else the schema, or the SQLite file's name) to confirm."""
    if not dry_run:
        common.cli(ctx).require_writable("nuke")
    store = options.store(ctx)
    plan = ops_vacuum.nuke(store, source, dry_run=True)
    schema = store.schema_status().schema
    target = describe(common.cli(ctx).audit_where(schema=schema))
    breaks = f"; {plan.breaks}" if plan.breaks else ""
    if not common.proceed(
        dry_run,
        yes,
        output,
        plan,
        f"would delete {plan.jobs} {source} job(s) with their stats and keys on {target},"
        f" in one transaction{breaks}",
        f"NUKE every {source} job ({plan.jobs}), stats row and idempotency key on"
        f" {target}{breaks}?",
        typed=common.typed_name(ctx, schema),
    ):
        return
    if plan.breaks and yes:
        note(f"nuke: {plan.breaks}")  # the question --yes skipped said it
    done = ops_vacuum.nuke(store, source)
    common.done(
        done,
        f"nuked {source} in one transaction: {done.jobs} job(s), {done.stats} stats "
        f"row(s), {done.keys} key(s)",
        output,
    )
