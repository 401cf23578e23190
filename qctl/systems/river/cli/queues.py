"""``qctl queues`` on a River database: list, pause, resume."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.cli.verbs import queue_command
from qctl.core.sqldb import row_record
from qctl.systems.river import actions, reads
from qctl.systems.river.cli import database, group, writable

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
