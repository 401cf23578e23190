"""``qctl workers`` on a dispatch database."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import database, group

app = group("workers")

COLUMNS = ["id", "hostname", "queues", "concurrency", "state", "is_leader", "last_seen"]


@app.command("list")
def list_workers(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Registered workers (``dispatch_workers``), the leader first, then by last
    heartbeat."""
    rows = [row_record(w) for w in reads.list_workers(database(ctx))]
    emit_rows(rows, COLUMNS, output)
