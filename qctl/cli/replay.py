"""``qctl replay`` (re-deliver ledger events) and ``qctl nuke`` (reset a source)."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, SinceOpt, UntilOpt, Yes
from qctl.cli.output import OutputFormat, as_dict, emit_result
from qctl_store.types import EventFilter, JobSearch, ReplayFilter, Source


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
    store = common.store(ctx)
    flt = ReplayFilter(
        subscriber=subscriber,
        event_type=event_type,
        event_id=common.resolve(ctx, "event", event_id) if event_id else None,
        since=common.instant(since, "--since"),
        until=common.instant(until, "--until"),
        limit=limit,
    )
    if flt.event_id is not None:
        store.get_event(flt.event_id)  # not found: exit 3 before anything is asked
        events = 1
    else:
        _, events = store.list_events(
            EventFilter(type=event_type, since=flt.since, until=flt.until), 0, 1
        )
    if limit:
        events = min(events, limit)
    subs = {
        v.subscriber
        for v in store.list_subscriber_views(event_type)
        if not subscriber or v.subscriber == subscriber
    }
    if not common.proceed(
        dry_run,
        yes,
        output,
        {"events": events, "subscribers": len(subs)},
        f"would replay up to {events} event(s) to their subscribers "
        f"({len(subs)} subscriber(s) match)",
        f"Replay up to {events} event(s) to {len(subs)} subscriber(s)?",
    ):
        return
    enqueued = store.replay(flt)
    emit_result(
        {"action": "replay", "deliveries": enqueued},
        f"enqueued {enqueued} replay deliveries",
        output,
    )


def nuke(
    ctx: typer.Context,
    source: Annotated[Source, typer.Option("--source", "-s", help="The source to reset.")],
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete every job, stats row and idempotency key of a source (a dev reset; the
    event ledger stays)."""
    if not dry_run:
        common.cli(ctx).require_writable("nuke")
    store = common.store(ctx)
    jobs, _ = store.count_jobs(JobSearch(source=source), exact=True)
    if not common.proceed(
        dry_run,
        yes,
        output,
        {"source": source, "jobs": jobs},
        f"would delete {jobs} {source} job(s) with their stats and keys",
        f"NUKE every {source} job ({jobs}), stats row and idempotency key?",
    ):
        return
    report = store.nuke_all(source)
    emit_result(
        {"source": source, **as_dict(report)},
        f"nuked {source}: {report.jobs} job(s), {report.stats} stats row(s), {report.keys} key(s)",
        output,
    )
