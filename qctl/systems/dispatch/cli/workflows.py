"""``qctl workflows`` on a dispatch database: its workflow runs, read-only (running a
workflow again needs the application's code)."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common, complete
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_detail
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import Many, database, group, listing
from qctl_kit.errors import InvalidInput

app = group("workflows")

COLUMNS = ["id", "name", "state", "started_at", "completed_at", "error"]
CHECKPOINT_COLUMNS = ["step_name", "created_at", "data"]


@app.command("list")
def list_runs(
    ctx: typer.Context,
    state: Annotated[
        Many,
        typer.Option(
            "--state",
            metavar="STATE",
            help="Run state (repeatable): " + ", ".join(reads.RUN_STATES) + ".",
            autocompletion=complete.choices(reads.RUN_STATES),
        ),
    ] = None,
    name: Annotated[
        Many, typer.Option("--name", metavar="NAME", help="Workflow name (repeatable).")
    ] = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Workflow runs, newest first, one page at a time (keyset: ``--after``)."""
    for s in state or []:
        if s not in reads.RUN_STATES:
            raise InvalidInput(f"--state: {s!r} is not a dispatch workflow run state")
    db = database(ctx)
    listing(lambda n, at: reads.list_runs(db, state, name, n, at), COLUMNS, output, limit, after)


@app.command("show")
def show(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(metavar="ID", help="Run id (wfrun_...) or a prefix.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """One run: state, error, input and output, and its checkpoints (the steps that
    finished)."""
    db = database(ctx)
    run, checkpoints = reads.get_run(db, reads.resolve_run(db, id))
    record = row_record(run)
    steps = [row_record(c) for c in checkpoints]
    emit_detail(output, record, {**record, "checkpoints": steps}, [(steps, CHECKPOINT_COLUMNS)])
