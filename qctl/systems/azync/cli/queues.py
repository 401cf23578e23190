"""``qctl queues``: per-kind depths and daily throughput."""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, as_dict, emit_detail, emit_rows, note
from qctl.cli.verbs import no_queue_command
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import KindOpt, SourceOpt
from qctl_store.types import DailyCount, Depths, Source, estimated_depths

app = common.app("queues", SYSTEM.commands["queues"].help)

# azync's dequeue (driver/azyncpgx/store_jobs.go dequeueClaimBody) takes any pending job
# of a kind: there is no queue to pause.
no_queue_command(
    app,
    "pause",
    "azync cannot pause a queue; `qctl jobs pause --kind KIND` holds the kind's jobs that"
    " exist now (new jobs of the kind still run)",
)
no_queue_command(
    app, "resume", "azync cannot pause a queue; `qctl jobs resume --kind KIND` resumes held jobs"
)

DEPTH_COLUMNS = [
    "pending",
    "scheduled",
    "active",
    "waiting",
    "blocked",
    "uncertain",
    "dead",
    "paused",
    "succeeded",
    "oldest_pending_age",
]
DAILY_COLUMNS = ["date", "enqueued", "processed", "failed", "reaped"]


def shown(record: dict[str, Any]) -> dict[str, Any]:
    """A depths record as printed: no oldest-pending age when nothing is pending (the
    store's 0 would read as "just enqueued"; absent values are null in JSON)."""
    return record if record["pending"] else {**record, "oldest_pending_age": None}


def status(d: Depths) -> str:
    """A kind's held jobs at a glance: ``N held`` while any of its jobs is paused. Never
    "paused": azync has no kind-level pause (its dequeue, driver/azyncpgx/store_jobs.go
    ``dequeueClaimBody``, takes any pending job of the kind), so ``jobs pause --kind K``
    holds only the jobs that exist then and new jobs of K still run."""
    return f"{d.paused} held" if d.paused else ""


def marked(record: dict[str, Any], d: Depths) -> dict[str, Any]:
    """A table row: the counts of ``d`` that may be estimates read ``~N``."""
    if not record["estimated"]:
        return record
    return {**record, **{c: f"~{record[c]}" for c in estimated_depths(d, record["source"])}}


@app.command("list")
def list_queues(
    ctx: typer.Context,
    source: SourceOpt = None,
    exact: Annotated[
        bool,
        typer.Option("--exact", help="Count every state exactly (scans huge tables)."),
    ] = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Depths of every (source, kind). Pending, scheduled, active, waiting, blocked,
    uncertain, dead, paused, succeeded and the age of the oldest pending job; STATUS
    says "N held" for a kind with N paused jobs (new jobs of the kind still run).

    On a huge PostgreSQL table succeeded, paused and uncertain come from the planner's
    statistics, and a kind's pending, scheduled and dead jobs are counted up to a cap and
    estimated beyond it: shown as ~N in tables and with "estimated": true in JSON and CSV;
    --exact counts them all (a scan of the whole table)."""
    store = options.store(ctx)
    rows: list[dict[str, Any]] = []
    kinds: list[Depths] = []
    for src, (depths, estimated) in store.sources_depths(options.sources(source), exact).items():
        for kind, d in sorted(depths.items()):
            kinds.append(d)
            rows.append(
                {
                    "source": src,
                    "kind": kind,
                    "status": status(d),
                    **as_dict(d),
                    "estimated": estimated,
                }
            )
    columns = ["source", "kind", "status", *DEPTH_COLUMNS]
    if output == OutputFormat.TABLE:
        emit_rows([marked(shown(r), d) for r, d in zip(rows, kinds, strict=True)], columns, output)
    else:
        shown_rows = [shown(r) for r in rows]
        emit_rows(shown_rows, [*columns, "estimated"], output, full=shown_rows)


@app.command("stats")
def stats(
    ctx: typer.Context,
    kind: Annotated[str, typer.Argument(metavar="KIND", help="Job kind.")],
    source: Annotated[Source, typer.Option("--source", "-s", help="Job source.")] = Source.QUEUE,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Depths of one kind and its daily series. A kind no job of the source has is
    refused (exit 3)."""
    from qctl.systems.azync.ops.views import require_kind

    store = options.store(ctx)
    require_kind(store, kind, [source])
    depths, daily = store.stats(source, kind)
    days = [day_record(d) for d in daily]
    emit_detail(
        output,
        shown({"source": source, "kind": kind, **as_dict(depths)}),
        {"source": source, "kind": kind, "depths": depths, "daily": days},
        [(days, DAILY_COLUMNS)],
    )


@app.command("daily")
def daily(
    ctx: typer.Context,
    source: SourceOpt = None,
    days: Annotated[
        int,
        typer.Option("--days", metavar="N", min=1, max=30, help="The last N days (at most 30)."),
    ] = 30,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Daily enqueued / processed / failed / reaped totals per source (UTC days)."""
    store = options.store(ctx)
    rows = [
        {"source": src, **day_record(day)}
        for src in options.sources(source)
        for day in store.all_daily(src)[-days:]
    ]
    emit_rows(rows, ["source", *DAILY_COLUMNS], output)


THROUGHPUT_COLUMNS = ["start", "enqueued", "processed", "failed", "reaped"]


@app.command("throughput")
def throughput(
    ctx: typer.Context,
    last: common.LastOpt = "1h",
    by: common.ByOpt = "minute",
    kind: KindOpt = "",
    source: SourceOpt = None,
    per_kind: Annotated[
        bool, typer.Option("--per-kind", help="One row per kind and bucket.")
    ] = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueued, processed, failed and reaped jobs per minute or hour.

    Read from the job rows on their indexes (never the whole table): processed are
    succeeded jobs by completion time, failed the failed attempts, reaped the jobs the
    reaper killed (a reap back to pending is recorded per day only: `queues daily`),
    enqueued the jobs by enqueue time whatever their state now (on PostgreSQL, jobs now
    paused, cancelled, uncertain or skipped need `qctl db tune`'s indexes: without them
    the series says it is partial).

    \b
    Example:
      qctl queues throughput --last 6h --by hour --kind email.send
    """
    window, bucket = common.window_and_bucket(last, by)
    store = options.store(ctx)
    totals: dict[tuple[Any, ...], dict[str, Any]] = {}
    for src in options.sources(source):
        for point in store.throughput(src, window, bucket, kind):
            key = (point.start, point.kind) if per_kind else (point.start,)
            row = totals.setdefault(
                key,
                {"start": point.start, **({"kind": point.kind} if per_kind else {}), **ZERO},
            )
            for measure in ZERO:
                row[measure] += getattr(point, measure)
    omitted = store.throughput_omits()
    if omitted:
        note(
            "partial: enqueued leaves out jobs now "
            + ", ".join(s.value for s in omitted)
            + " (no index holds them; `qctl db tune` adds one)"
        )
    if not totals:
        note(f"no jobs were enqueued, processed or failed in the last {last}")
    # Each source's read takes the database's clock of its own; when a bucket boundary
    # passes between two reads, their grids differ by one bucket: keep the newest grid.
    starts = sorted({key[0] for key in totals})[-math.ceil(window / bucket) :]
    rows = [totals[k] for k in sorted(totals) if k[0] >= starts[0]] if starts else []
    columns = ["start", *(["kind"] if per_kind else []), *THROUGHPUT_COLUMNS[1:]]
    emit_rows(rows, columns, output)


ZERO = {"enqueued": 0, "processed": 0, "failed": 0, "reaped": 0}


def day_record(day: DailyCount) -> dict[str, Any]:
    """A day of the daily series with its date as a date (the store's midnight UTC)."""
    return {**as_dict(day), "date": day.date.date().isoformat()}
