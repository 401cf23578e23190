"""``qctl clients`` on a hopper database (hopper's ``hopper clients list``)."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.sqldb import row_record
from qctl.systems.hopper import reads
from qctl.systems.hopper.cli import database, group

app = group("clients")

COLUMNS = ["id", "hostname", "started_at", "expires_at", "live", "leader", "running", "info"]


@app.command("list")
def list_clients(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Every client lease, live or expired (the leader prunes expired ones), with the
    jobs each holds running and which is the leader."""
    rows = [row_record(c) for c in reads.list_clients(database(ctx))]
    emit_rows(rows, COLUMNS, output)
