"""``qctl subscriptions`` on a hopper database."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.sqldb import row_record
from qctl.systems.hopper import reads
from qctl.systems.hopper.cli import database, group

app = group("subscriptions")


@app.command("list")
def list_subscriptions(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Topic subscriptions: a published message matching the pattern (AMQP topic syntax)
    becomes a job of the kind on the queue."""
    rows = [row_record(s) for s in reads.list_subscriptions(database(ctx))]
    emit_rows(rows, ["name", "pattern", "kind", "queue", "max_attempts", "created_at"], output)
