"""``qctl cron`` on a dispatch database: list, enable, disable, trigger, delete."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import database, group, writable

if TYPE_CHECKING:
    pass

app = group("cron")

COLUMNS = ["id", "name", "schedule", "job_name", "queue", "enabled", "next_run_at", "last_run_at"]
NamesArg = Annotated[list[str], typer.Argument(metavar="NAME...", help="Cron entry names or ids.")]


@app.command("list")
def list_cron(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Cron entries by name: schedule, the job each enqueues, whether enabled, next and
    last run, and the scheduler's lock."""
    rows = [reads.as_record(c) for c in reads.list_cron(database(ctx))]
    emit_rows(rows, COLUMNS, output)


def _change(
    ctx: typer.Context,
    names: list[str],
    action: str,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
) -> None:
    db = writable(ctx, f"cron {action}", dry_run)

    def say(c: actions.CronChanged) -> str:
        word = f"would {action}" if c.dry_run else f"{action}d"
        return f"{word} dispatch cron entry {c.name} ({c.cron_id})"

    def act(key: str, dry: bool) -> actions.CronChanged:
        return actions.change_cron(db, key, action, dry)

    ask = f"{action.capitalize()} {len(names)} dispatch cron entr(ies)?"
    common.act_each(names, act, say, ask, output, dry_run, yes)


@app.command("enable")
def enable(
    ctx: typer.Context,
    names: NamesArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enable cron entries (only the enabled column is written; refused while the
    scheduler is firing one)."""
    _change(ctx, names, "enable", dry_run, yes, output)


@app.command("disable")
def disable(
    ctx: typer.Context,
    names: NamesArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Disable cron entries: the scheduler skips them until enabled (refused while it is
    firing one: its fire ends by writing the whole entry back)."""
    _change(ctx, names, "disable", dry_run, yes, output)


@app.command("delete")
def delete(
    ctx: typer.Context,
    names: NamesArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete cron entries (dispatch's DeleteCron; an application registering the entry
    again on start recreates it)."""
    _change(ctx, names, "delete", dry_run, yes, output)


@app.command("trigger")
def trigger(
    ctx: typer.Context,
    names: NamesArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run cron entries' jobs now (dispatch's TriggerCron): the job a scheduled fire
    enqueues, disabled entries too; the schedule stays as it was."""
    db = writable(ctx, "cron trigger", dry_run)

    def say(t: actions.CronTriggered) -> str:
        if t.dry_run:
            return f"would enqueue {t.job_name} on {t.queue} for dispatch cron entry {t.name}"
        return f"enqueued {t.job_name} on {t.queue} as {t.new_job_id} for cron entry {t.name}"

    ask = f"Run {len(names)} dispatch cron entr(ies) now?"
    common.act_each(
        names, lambda t, dry: actions.trigger_cron(db, t, dry), say, ask, output, dry_run, yes
    )
