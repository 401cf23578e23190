"""``qctl queues`` on a River database: list, pause, resume."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import verbs
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows
from qctl.cli.verbs import PlanIn, PlanOut
from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
from qctl.systems.river import actions, reads
from qctl.systems.river.cli import database, group, writable
from qctl.systems.river.database import Database
from qctl_kit.errors import InvalidInput

app = group("queues")

COLUMNS = [
    "queue",
    "paused_at",
    "available",
    "running",
    "scheduled",
    "retryable",
    "pending",
    "completed",
    "cancelled",
    "discarded",
    "oldest_available_age",
    "updated_at",
]

Names = Annotated[
    list[str] | None,
    typer.Argument(metavar="[QUEUE]...", help="Queue names; or --match / --all."),
]
MatchOpt = Annotated[
    str | None,
    typer.Option("--match", metavar="TEXT", help="Every queue whose name contains TEXT."),
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every queue River knows.")]


@app.command("list")
def list_queues(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: when it was paused (empty: it is not), its jobs in each state, how
    long the oldest available job has waited, and when a River client last reported it
    (River's queue row, updated_at; a queue with jobs but no row was never worked).
    Counting the finalized jobs reads every job; `qctl top`'s Queues tab counts the
    live ones from River's fetch index."""
    emit_rows([row_record(q) for q in reads.list_queues(database(ctx))], COLUMNS, output)


def _act(
    ctx: typer.Context,
    verb: Verb[Database],
    names: list[str] | None,
    match: str | None,
    all_queues: bool,
    max_targets: int,
    dry_run: bool,
    plan_out: PlanOut,
    plan_in: PlanIn,
    yes: bool,
    output: OutputFormat,
) -> None:
    if names and all_queues:
        raise InvalidInput("give queue names, --match or --all, not both")
    db = writable(ctx, verb.title, dry_run or plan_out is not None)
    verbs.act(
        ctx,
        verb,
        db,
        Selection.given(names, {"match": match, "all": all_queues}, lambda name: name),
        max_targets=max_targets,
        dry_run=dry_run,
        yes=yes,
        output=output,
        plan_in=plan_in,
        plan_out=plan_out,
    )


@app.command("pause")
def pause(
    ctx: typer.Context,
    names: Names = None,
    match: MatchOpt = None,
    all_queues: AllOpt = False,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Stop River's clients fetching from queues, as River's QueuePause does: paused_at
    set, then a pause on River's control topic; running jobs finish. A queue no River
    client has worked yet (no queue row) cannot be paused, as with River."""
    _act(ctx, actions.PAUSE, names, match, all_queues, max_targets, dry_run, plan_out,
         plan_in, yes, output)  # fmt: skip


@app.command("resume")
def resume(
    ctx: typer.Context,
    names: Names = None,
    match: MatchOpt = None,
    all_queues: AllOpt = False,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Let River's clients fetch from paused queues again, as River's QueueResume does
    (paused_at cleared, then a resume on River's control topic)."""
    _act(ctx, actions.RESUME, names, match, all_queues, max_targets, dry_run, plan_out,
         plan_in, yes, output)  # fmt: skip
