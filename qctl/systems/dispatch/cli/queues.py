"""``qctl queues`` on a dispatch database."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows, note
from qctl.cli.verbs import no_queue_command
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import Many, database, group

app = group("queues")

# dispatch keeps no queue rows: its workers claim from the queues they were started with.
no_queue_command(
    app,
    "pause",
    "dispatch cannot pause a queue (its workers claim from the queues they were started with)",
)
no_queue_command(app, "resume", "dispatch cannot pause a queue")

COLUMNS = [
    "queue",
    "pending",
    "retrying",
    "running",
    "completed",
    "failed",
    "cancelled",
    "oldest_pending_age",
]


@app.command("list")
def list_queues(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: jobs in each state, and how long the oldest due pending or retrying
    job has waited (its run_at passed, not yet claimed). Counting the finished jobs
    reads the whole table; `qctl top`'s Queues tab shows what waits and runs, from the
    indexes."""
    rows = [row_record(q) for q in reads.queue_stats(database(ctx))]
    emit_rows(rows, COLUMNS, output)


@app.command("throughput")
def throughput(
    ctx: typer.Context,
    last: common.LastOpt = "1h",
    by: common.ByOpt = "minute",
    queue: Annotated[
        Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable; default: all).")
    ] = None,
    per_queue: Annotated[
        bool, typer.Option("--per-queue", help="One row per queue and bucket.")
    ] = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Jobs enqueued, completed, failed (into the DLQ) and cancelled per minute or hour.

    Read from the window's jobs, one range of the primary key (dispatch's ids are
    TypeIDs of the instant they were made), and the DLQ's failed_at on its queue index:
    never the whole table. dispatch indexes no completed_at, so completed and cancelled
    count the jobs enqueued from five minutes before the window on (the command says
    from when); a DLQ entry deleted or purged is no longer counted as failed.

    \b
    Example:
      qctl queues throughput --last 6h --by hour --queue emails
    """
    window, bucket = common.window_and_bucket(last, by)
    points, horizon = reads.throughput(database(ctx), window, bucket, queue)
    note(
        f"partial: completed and cancelled count jobs enqueued since {horizon:%Y-%m-%d %H:%M}"
        " UTC (dispatch indexes no completed_at)"
    )
    totals: dict[tuple[Any, ...], dict[str, Any]] = {}
    for point in points:  # oldest first, by queue
        key = (point.start, point.queue) if per_queue else (point.start,)
        row = totals.setdefault(
            key,
            {
                "start": point.start,
                **({"queue": point.queue} if per_queue else {}),
                **dict.fromkeys(reads.THROUGHPUT_MEASURES, 0),
            },
        )
        for measure in reads.THROUGHPUT_MEASURES:
            row[measure] += getattr(point, measure)
    if not totals:
        note(f"no jobs were enqueued, completed, failed or cancelled in the last {last}")
    columns = ["start", *(["queue"] if per_queue else []), *reads.THROUGHPUT_MEASURES]
    emit_rows(list(totals.values()), columns, output)
