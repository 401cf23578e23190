"""``qctl cron`` on a dispatch database: list, enable, disable, trigger, delete."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from qctl.cli import verbs
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows
from qctl.cli.verbs import PlanIn, PlanOut
from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
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


def _act(
    ctx: typer.Context,
    verb: Verb[Database],
    names: Many,
    queue: Many,
    job_name: Many,
    max_targets: int,
    dry_run: bool,
    plan_out: Path | None,
    plan_in: Path | None,
    yes: bool,
    output: OutputFormat,
) -> None:
    where = {"queues": queue, "names": job_name}
    verbs.act(
        ctx,
        verb,
        writable,
        lambda db: Selection.given(names, where, lambda k: reads.get_cron(db, k).id),
        max_targets=max_targets,
        dry_run=dry_run,
        yes=yes,
        output=output,
        plan_in=plan_in,
        plan_out=plan_out,
    )


@app.command("enable")
def enable(
    ctx: typer.Context,
    names: NamesArg = None,
    queue: QueueOpt = None,
    job_name: JobNameOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enable cron entries (the enabled column written, a disable's fire lock released;
    passed over while the scheduler is firing one)."""
    _act(ctx, actions.CRON_ENABLE, names, queue, job_name, max_targets, dry_run, plan_out, plan_in,
         yes, output)  # fmt: skip


@app.command("disable")
def disable(
    ctx: typer.Context,
    names: NamesArg = None,
    queue: QueueOpt = None,
    job_name: JobNameOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Disable cron entries: the scheduler skips them until enabled. The entry's fire
    lock is held 2m, so a fire from entries the scheduler read before cannot run and
    write the entry back enabled (passed over while the scheduler is firing one)."""
    _act(ctx, actions.CRON_DISABLE, names, queue, job_name, max_targets, dry_run, plan_out, plan_in,
         yes, output)  # fmt: skip


@app.command("delete")
def delete(
    ctx: typer.Context,
    names: NamesArg = None,
    queue: QueueOpt = None,
    job_name: JobNameOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete cron entries (dispatch's DeleteCron; an application registering the entry
    again on start recreates it)."""
    _act(ctx, actions.CRON_DELETE, names, queue, job_name, max_targets, dry_run, plan_out, plan_in,
         yes, output)  # fmt: skip


@app.command("trigger")
def trigger(
    ctx: typer.Context,
    names: NamesArg = None,
    queue: QueueOpt = None,
    job_name: JobNameOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run cron entries' jobs now (dispatch's TriggerCron): the job a scheduled fire
    enqueues, disabled entries too; the schedule stays as it was."""
    _act(ctx, actions.CRON_TRIGGER, names, queue, job_name, max_targets, dry_run, plan_out, plan_in,
         yes, output)  # fmt: skip
