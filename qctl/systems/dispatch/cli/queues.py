"""``qctl queues`` on a dispatch database."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import database, group

app = group("queues")

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
    rows = [reads.as_record(q) for q in reads.queue_stats(database(ctx))]
    emit_rows(rows, COLUMNS, output)
