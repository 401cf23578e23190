"""``qctl periodic`` on a hopper database."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.sqldb import row_record
from qctl.systems.hopper import reads
from qctl.systems.hopper.cli import database, group

app = group("periodic")


@app.command("list")
def list_periodic(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Each periodic job's last inserted slot (``hopper_periodic``); the schedules live in
    the applications' code, not in the database."""
    rows = [row_record(p) for p in reads.list_periodic(database(ctx))]
    emit_rows(rows, ["name", "last_slot"], output)
