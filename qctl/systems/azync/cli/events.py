"""``qctl events``: the event ledger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import After, DryRun, Output, PageLimit, Yes
from qctl.cli.output import (
    OutputFormat,
    as_dict,
    emit_detail,
    emit_object,
    iso,
    note,
    page_note,
    stream_listing,
)
from qctl.core import parse
from qctl.core.parse import ParseError
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import MetaOpt, SinceOpt, UntilOpt
from qctl.systems.azync.ops import events as ops_events
from qctl_kit.values import PageCursor
from qctl_store.types import EventAdminRow, EventFilter, JobSearch, PublishParams, Source

app = common.app("events", SYSTEM.commands["events"].help)

EVENT_COLUMNS = [
    "id",
    "type",
    "aggregate_type",
    "aggregate_id",
    "version",
    "occurred_at",
    "dispatched_at",
    "deliveries",
]
PayloadFlag = Annotated[bool, typer.Option("--payload", help="Include the payload.")]


def event_record(row: EventAdminRow, with_payload: bool) -> dict[str, Any]:
    record = as_dict(row)
    if not with_payload:
        record.pop("payload")
    return record


@app.command("list")
def list_events(
    ctx: typer.Context,
    type: Annotated[str, typer.Option("--type", "-t", help="Only this event type.")] = "",
    undispatched: Annotated[
        bool,
        typer.Option(
            "--undispatched",
            help="Only events with no delivery row: no subscriber when published, or "
            "deliveries vacuumed since (azync keeps no dispatch time).",
        ),
    ] = False,
    aggregate: Annotated[
        str | None,
        typer.Option(
            "--aggregate",
            metavar="[TYPE:]ID",
            help="Only the events of this aggregate (order:42, or an id of any type).",
        ),
    ] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: PageLimit = 50,
    after: After = None,
    payload: PayloadFlag = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Ledger events, newest first. --aggregate reads through the ledger (no index
    leads with the aggregate): on a large ledger bound it with --type or --since."""
    aggregate_type, aggregate_id = _aggregate(aggregate)
    flt = EventFilter(
        type=type,
        undispatched=True if undispatched else None,
        since=common.instant(since, "--since"),
        until=common.instant(until, "--until"),
        aggregate_type=aggregate_type,
        aggregate_id=aggregate_id,
    )
    store = options.store(ctx)
    fetch_events, totals = options.counted_first(
        lambda n, at: store.list_events(flt, 0, n, at),
        lambda n, at: store.event_page(flt, n, at),
        output == OutputFormat.TABLE,
    )
    noted: list[bool] = []

    def fetch(n: int, at: PageCursor | None) -> list[EventAdminRow]:
        rows = fetch_events(n, at)
        if undispatched and rows and not noted:
            noted.append(True)
            note(
                "no delivery row is not proof of no delivery: vacuums (azync's maintenance "
                "and `qctl vacuum`) delete succeeded deliveries, and replaying such an event "
                "delivers it again"
            )
        return rows

    shown, position = stream_listing(
        fetch,
        lambda e: PageCursor(e.occurred_at, e.id),
        lambda e: event_record(e, payload),
        EVENT_COLUMNS,
        output,
        limit,
        options.cursor(after),
    )
    total = totals[0] if totals else None
    page_note(output, shown, total, parse.cursor_text(position) if position else None)


def _aggregate(text: str | None) -> tuple[str, str]:
    """``--aggregate``'s (type, id): ``TYPE:ID``, or a bare id of any type."""
    if text is None:
        return "", ""
    type_, sep, id = text.partition(":")
    if not sep:
        type_, id = "", text
    if not id:
        raise ParseError(f"--aggregate: {text!r} names no aggregate id")
    return type_, id


DELIVERY_COLUMNS = ["subscriber", "state", "attempt", "max_attempts", "id", "run_at", "last_error"]


@app.command("show")
def show(
    ctx: typer.Context,
    id: Annotated[
        str, typer.Argument(metavar="ID", help="Event id or unique prefix (>= 8 hex chars).")
    ],
    output: Output = OutputFormat.TABLE,
) -> None:
    """One event, payload included, and each delivery: its subscriber and job state."""
    store = options.store(ctx)
    row = options.found(ctx, "event", id, store.get_event)
    jobs = store.search_jobs(JobSearch(source=Source.EVENT, event_id=row.id), limit=0)
    # A delivery job's kind is its subscriber's name.
    deliveries = [{"subscriber": j.kind, **as_dict(j)} for j in jobs]
    for d in deliveries:
        for key in ("kind", "payload", "result", "event"):
            d.pop(key, None)
    record = event_record(row, True)
    emit_detail(
        output,
        record,
        {**record, "delivery_jobs": deliveries},
        [(deliveries, DELIVERY_COLUMNS)],
    )


@app.command("publish")
@common.writes
def publish(
    ctx: typer.Context,
    type: Annotated[str, typer.Argument(metavar="TYPE", help="Event type.")],
    payload: Annotated[str, typer.Option("--payload", "-p", help="Payload (JSON).")] = "{}",
    aggregate_type: Annotated[
        str, typer.Option("--aggregate-type", metavar="TYPE", help="Aggregate type (order).")
    ] = "",
    aggregate_id: Annotated[
        str, typer.Option("--aggregate-id", metavar="ID", help="Aggregate id (order-42).")
    ] = "",
    version: Annotated[int, typer.Option("--version", metavar="N", help="Aggregate version.")] = 0,
    meta: MetaOpt = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Append an event and fan it out to its subscribers."""
    params = PublishParams(
        type=type,
        payload=common.json_value(payload, "--payload"),
        aggregate_type=aggregate_type,
        aggregate_id=aggregate_id,
        version=version,
        meta=options.meta(meta),
    )
    done = ops_events.publish(options.writable(ctx, "events publish"), params)
    common.done(
        done, f"published {type} event {done.id} to {done.deliveries} subscriber(s)", output
    )


@app.command("stats")
def stats(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Events with no delivery row ("undispatched": none subscribed when published, or
    deliveries vacuumed), last-24h volume and types, subscribers."""
    emit_object(as_dict(options.store(ctx).ops_stats()), output)


@app.command("retain")
def retain(
    ctx: typer.Context,
    before: Annotated[
        str | None,
        typer.Option("--before", metavar="INSTANT", help="Drop events that occurred before."),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", metavar="DURATION", help="Drop events older than this."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", metavar="N", min=1, help="At most this many.")
    ] = 1000,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete old settled events. Events with unsettled deliveries are kept.

    \b
    Example:
      qctl events retain --older-than 30d --dry-run
    """
    if (before is None) == (older_than is None):
        raise ParseError("give --before or --older-than (one of them)")
    age = common.duration(older_than, "--older-than")
    cutoff = common.instant(before, "--before") or datetime.now(UTC) - (age or timedelta(0))
    if not dry_run:
        common.cli(ctx).require_writable("events retain")
    store = options.store(ctx)
    plan = ops_events.retain(store, cutoff, limit, dry_run=True)
    if common.proceed(
        dry_run,
        yes,
        output,
        plan,
        f"would consider {plan.count} event(s) before {iso(cutoff)} "
        "(events with unsettled deliveries are kept)",
        f"Delete up to {plan.count} settled event(s) before {iso(cutoff)}?",
    ):
        done = ops_events.retain(store, cutoff, limit)
        common.done(done, f"removed {done.count} event(s)", output)
