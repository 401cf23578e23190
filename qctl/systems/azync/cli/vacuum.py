"""``qctl vacuum``: retention, for cron. Each verb prints the rows it removed per target
and source (``-o json`` for machines); ``vacuum all`` runs several, one retention each.
``--dry-run`` prints what each step would remove, counted on this host's clock (null
where the store offers no way to count: stats rows and idempotency keys)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Retention, Yes
from qctl.cli.output import OutputFormat, emit_rows, note
from qctl.core.parse import ParseError, format_duration
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import DeadAge, KindOpt, SourceOpt
from qctl.systems.azync.ops import vacuum as ops_vacuum
from qctl.systems.azync.ops.vacuum import Step

if TYPE_CHECKING:
    pass

app = common.app("vacuum", SYSTEM.commands["vacuum"].help)

PAGE = 500


def _execute(
    ctx: typer.Context,
    steps: list[Step],
    plan: str,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
) -> None:
    if dry_run:
        outcomes = ops_vacuum.execute(options.store(ctx), steps, dry_run=True)
        if output == OutputFormat.TABLE:
            note("dry run: nothing was changed; REMOVED is what would be removed")
    else:
        store = options.writable(ctx, "vacuum")
        common.confirm(f"Vacuum {plan}?", yes)
        with common.reported(output, "row(s) removed"):
            outcomes = ops_vacuum.execute(store, steps)
    # The documented cron form: one row per target and source, "removed" rows.
    rows = [
        {"target": o.target, "source": o.source, "removed": o.count}
        | ({"dry_run": True} if o.dry_run else {})
        for o in outcomes
    ]
    columns = ["target", "source", "removed"] + (["dry_run"] if dry_run else [])
    emit_rows(rows, columns, output)


def _retention(value: str, option: str) -> timedelta:
    return common.duration(value, option) or timedelta(0)


@app.command("completed")
def completed(
    ctx: typer.Context,
    retention: Retention,
    source: SourceOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Old succeeded jobs. Completed longer ago than --older-than; DAG and workflow jobs go
    with their run (see `vacuum dags` and `vacuum workflows`)."""
    keep = _retention(retention, "--older-than")
    _execute(
        ctx,
        ops_vacuum.completed(source, keep),
        f"succeeded jobs older than {format_duration(keep)}",
        dry_run,
        yes,
        output,
    )


@app.command("dead")
def dead(
    ctx: typer.Context,
    older_than: DeadAge,
    source: SourceOpt = None,
    kind: KindOpt = "",
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Dead jobs that died (failed_at; their enqueue time when unknown) longer ago than
    --older-than. Tasks of a DAG that is not terminal are kept."""
    age = _retention(older_than, "--older-than")
    _execute(
        ctx,
        ops_vacuum.dead(source, kind, age),
        f"dead jobs older than {format_duration(age)}",
        dry_run,
        yes,
        output,
    )


@app.command("stats")
def stats(
    ctx: typer.Context,
    retention: Retention,
    source: SourceOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Daily statistics rows older than --retention."""
    keep = _retention(retention, "--older-than")
    _execute(
        ctx,
        ops_vacuum.stats(source, keep),
        f"daily stats older than {format_duration(keep)}",
        dry_run,
        yes,
        output,
    )


@app.command("idempotency")
def idempotency(
    ctx: typer.Context,
    source: SourceOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Expired idempotency keys."""
    _execute(ctx, ops_vacuum.idempotency(source), "expired idempotency keys", dry_run, yes, output)


@app.command("dags")
def dags(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Old terminal DAG runs. Completed longer ago than --older-than, with their tasks."""
    keep = _retention(retention, "--older-than")
    _execute(
        ctx,
        [ops_vacuum.dags(keep)],
        f"DAG runs older than {format_duration(keep)}",
        dry_run,
        yes,
        output,
    )


@app.command("workflows")
def workflows(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Old terminal workflow executions. Completed longer ago than --older-than, with their
    history."""
    keep = _retention(retention, "--older-than")
    _execute(
        ctx,
        [ops_vacuum.workflows(keep)],
        f"workflow executions older than {format_duration(keep)}",
        dry_run,
        yes,
        output,
    )


def _opt(help: str) -> Any:
    return typer.Option(metavar="DURATION", help=help)


@app.command("all")
def all_(
    ctx: typer.Context,
    completed: Annotated[str | None, _opt("Retention of succeeded jobs.")] = None,
    dead: Annotated[
        str | None, _opt("Age of dead jobs to delete, counted from their death (failed_at).")
    ] = None,
    stats: Annotated[str | None, _opt("Retention of daily stats.")] = None,
    dags: Annotated[str | None, _opt("Retention of terminal DAG runs.")] = None,
    workflows: Annotated[str | None, _opt("Retention of terminal workflows.")] = None,
    source: SourceOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Several vacuums at once. Each one given a retention here, plus expired
    idempotency keys.

    \b
    Example (cron):
      qctl vacuum all --completed 7d --dead 30d --stats 90d --yes -o json
    """
    if all(v is None for v in (completed, dead, stats, dags, workflows)):
        raise ParseError(
            "give at least one retention (--completed, --dead, --stats, --dags, --workflows)"
        )
    steps: list[Step] = []
    if completed is not None:
        steps += ops_vacuum.completed(source, _retention(completed, "--completed"))
    if dead is not None:
        steps += ops_vacuum.dead(source, "", _retention(dead, "--dead"))
    if stats is not None:
        steps += ops_vacuum.stats(source, _retention(stats, "--stats"))
    steps += ops_vacuum.idempotency(source)
    if dags is not None:
        steps.append(ops_vacuum.dags(_retention(dags, "--dags")))
    if workflows is not None:
        steps.append(ops_vacuum.workflows(_retention(workflows, "--workflows")))
    targets = ", ".join(dict.fromkeys(s.target for s in steps))
    _execute(ctx, steps, targets, dry_run, yes, output)
