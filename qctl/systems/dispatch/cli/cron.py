"""``qctl cron`` on a dispatch database."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import database, group

app = group("cron")

COLUMNS = ["id", "name", "schedule", "job_name", "queue", "enabled", "next_run_at", "last_run_at"]


@app.command("list")
def list_cron(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Cron entries by name: schedule, the job each enqueues, whether enabled, next and
    last run, and the scheduler's lock."""
    rows = [reads.as_record(c) for c in reads.list_cron(database(ctx))]
    emit_rows(rows, COLUMNS, output)
