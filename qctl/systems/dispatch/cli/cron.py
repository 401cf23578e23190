"""``qctl cron`` on a dispatch database: list, enable, disable, trigger, delete."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.cli.verbs import job_command
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import Many, database, group, writable
from qctl.systems.dispatch.database import Database

app = group("cron")

COLUMNS = ["id", "name", "schedule", "job_name", "queue", "enabled", "next_run_at", "last_run_at"]
NamesArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="[NAME]...", help="Cron entry names or ids; or select by filter."),
]


@app.command("list")
def list_cron(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Cron entries by name: schedule, the job each enqueues, whether enabled, next and
    last run, and the scheduler's lock."""
    rows = [row_record(c) for c in reads.list_cron(database(ctx))]
    emit_rows(rows, COLUMNS, output)


QueueOpt = Annotated[
    Many, typer.Option("--queue", metavar="QUEUE", help="Entries of this queue (repeatable).")
]
JobNameOpt = Annotated[
    Many,
    typer.Option("--job-name", metavar="NAME", help="Entries enqueuing this job (repeatable)."),
]


def _where(queue: QueueOpt = None, job_name: JobNameOpt = None) -> dict[str, Any]:
    return {"queues": queue, "names": job_name}


def _resolve(db: Database, key: str) -> str:
    return reads.get_cron(db, key).id


job_command(
    app,
    actions.CRON_ENABLE,
    writable,
    NamesArg,
    _resolve,
    _where,
    """Enable cron entries (the enabled column written, a disable's fire lock released;
    passed over while the scheduler is firing one).""",
)
job_command(
    app,
    actions.CRON_DISABLE,
    writable,
    NamesArg,
    _resolve,
    _where,
    """Disable cron entries: the scheduler skips them until enabled. The entry's fire
    lock is held 2m, so a fire from entries the scheduler read before cannot run and
    write the entry back enabled (passed over while the scheduler is firing one).""",
)
job_command(
    app,
    actions.CRON_DELETE,
    writable,
    NamesArg,
    _resolve,
    _where,
    """Delete cron entries (dispatch's DeleteCron; an application registering the entry
    again on start recreates it).""",
)
job_command(
    app,
    actions.CRON_TRIGGER,
    writable,
    NamesArg,
    _resolve,
    _where,
    """Run cron entries' jobs now (dispatch's TriggerCron): the job a scheduled fire
    enqueues, disabled entries too; the schedule stays as it was.""",
)
