"""``qctl queues`` on a River database: list, show, throughput, pause, resume."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_detail, emit_rows, note
from qctl.cli.verbs import queue_command
from qctl.core.sqldb import row_record
from qctl.systems.river import actions, reads
from qctl.systems.river.cli import Many, database, group, writable

app = group("queues")

COLUMNS = [
    "queue",
    "paused_at",
    "available",
    "running",
    "scheduled",
    "retryable",
    "pending",
    "completed",
    "cancelled",
    "discarded",
    "oldest_available_age",
    "updated_at",
]


@app.command("list")
def list_queues(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: when it was paused (empty: it is not), its jobs in each state, how
    long the oldest available job has waited, and when a River client last reported it
    (River's queue row, updated_at; a queue with jobs but no row was never worked).
    Counting the finalized jobs reads every job; `qctl top`'s Queues tab counts the
    live ones from River's fetch index."""
    emit_rows([row_record(q) for q in reads.list_queues(database(ctx))], COLUMNS, output)


@app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="QUEUE", help="A queue's name.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """One queue: River's queue row (paused_at, when a client last reported it, its
    metadata decoded), its jobs in each state, each counted on River's fetch index for
    this queue alone, and how long its oldest available job has waited."""
    record = row_record(reads.get_queue(database(ctx), name))
    emit_detail(output, record, record)


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
    """Jobs finalized completed, cancelled and discarded per minute or hour, by when
    River finalized them (finalized_at), each state one range of River's index on state
    and finalized_at: never the whole table. A job River's cleaner deleted is no longer
    counted (completed and cancelled ones after 24 hours unless configured).

    \b
    Example:
      qctl queues throughput --last 6h --by hour --queue emails
    """
    window, bucket = common.window_and_bucket(last, by)
    points = reads.throughput(database(ctx), window, bucket, queue)
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
        note(f"no jobs were completed, cancelled or discarded in the last {last}")
    columns = ["start", *(["queue"] if per_queue else []), *reads.THROUGHPUT_MEASURES]
    emit_rows(list(totals.values()), columns, output)


queue_command(
    app,
    actions.PAUSE,
    writable,
    "Stop River's clients fetching from queues, as River's QueuePause does: paused_at set,"
    " then a pause on River's control topic; running jobs finish. A queue no River client"
    " has worked yet (no queue row) cannot be paused, as with River.",
)
queue_command(
    app,
    actions.RESUME,
    writable,
    "Let River's clients fetch from paused queues again, as River's QueueResume does"
    " (paused_at cleared, then a resume on River's control topic).",
)
