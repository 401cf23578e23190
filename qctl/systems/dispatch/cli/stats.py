"""``qctl stats`` on a dispatch database: dispatch's admin API stats."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_object
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import database


def stats(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Jobs per state, DLQ entries (and how many wait for a replay), workflow runs per
    state: what dispatch's GET /stats answers (api/stats_handler.go). Each count reads
    all the rows of its state (about a second at ten million jobs); `qctl top` shows
    what waits and runs, from the indexes."""
    emit_object(row_record(reads.stats(database(ctx))), output)
