"""``qctl vacuum``: retention, for cron. Each verb prints the rows it removed per target
and source in every system's one result (``qctl.cli.vacuum``; ``-o json`` for
machines); ``vacuum all`` runs them all, each at --older-than or its own age.
``--dry-run`` prints what each step would remove, counted on this host's clock (null
where the store offers no way to count: stats rows and idempotency keys)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import typer

from qctl.cli import common, vacuum
from qctl.cli.common import DryRun, Output, Retention, Yes
from qctl.cli.output import OutputFormat
from qctl.core.parse import format_duration
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import DeadAge, KindOpt, SourceOpt
from qctl.systems.azync.ops import vacuum as ops_vacuum
from qctl.systems.azync.ops.results import BulkOutcome
from qctl.systems.azync.ops.vacuum import Step

app = common.app("vacuum", SYSTEM.commands["vacuum"].help)


def _execute(
    ctx: typer.Context,
    steps: list[Step],
    age: str | None,
    plan: str,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
) -> None:
    """``steps`` as every system's vacuum runs (``qctl.cli.vacuum``): a row per step,
    named by its target and source (azync keeps each source's rows in one table)."""

    def removed(outcomes: list[BulkOutcome]) -> vacuum.Removed:
        return [(o.target + (f".{o.source}" if o.source else ""), o.count) for o in outcomes]

    store = options.store(ctx) if dry_run else options.writable(ctx, "vacuum")
    vacuum.run(
        age,
        lambda: removed(ops_vacuum.execute(store, steps, dry_run=True)),
        lambda: removed(ops_vacuum.execute(store, steps)),
        lambda _: f"Vacuum {plan}?",
        count_first=False,
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="row(s) removed",
    )


def _retention(value: str, option: str) -> timedelta:
    """An age of azync's own meaning: 0 keeps every succeeded job, deletes every dead one."""
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
    keep = vacuum.older_than(retention)
    _execute(
        ctx,
        ops_vacuum.completed(source, keep),
        retention,
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
        older_than,
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
    keep = vacuum.older_than(retention)
    _execute(
        ctx,
        ops_vacuum.stats(source, keep),
        retention,
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
    steps = ops_vacuum.idempotency(source)
    _execute(ctx, steps, None, "expired idempotency keys", dry_run, yes, output)


@app.command("dags")
def dags(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Old terminal DAG runs. Completed longer ago than --older-than, with their tasks."""
    keep = vacuum.older_than(retention)
    _execute(
        ctx,
        [ops_vacuum.dags(keep)],
        retention,
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
    keep = vacuum.older_than(retention)
    _execute(
        ctx,
        [ops_vacuum.workflows(keep)],
        retention,
        f"workflow executions older than {format_duration(keep)}",
        dry_run,
        yes,
        output,
    )


def _opt(help: str) -> Any:
    return typer.Option(metavar="DURATION", help=help + " (default: --older-than)")


@app.command("all")
def all_(
    ctx: typer.Context,
    older_than: Retention,
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
    """Every vacuum at once: succeeded and dead jobs, daily stats, terminal DAG runs and
    workflow executions older than --older-than (each its own age with --completed,
    --dead, --stats, --dags, --workflows), and expired idempotency keys.

    \b
    Example (cron):
      qctl vacuum all --older-than 30d --completed 7d --stats 90d --yes -o json
    """
    age = vacuum.older_than(older_than)

    def own(value: str | None, option: str) -> timedelta:
        return age if value is None else _retention(value, option)

    steps = [
        *ops_vacuum.completed(source, own(completed, "--completed")),
        *ops_vacuum.dead(source, "", own(dead, "--dead")),
        *ops_vacuum.stats(source, own(stats, "--stats")),
        *ops_vacuum.idempotency(source),
        ops_vacuum.dags(own(dags, "--dags")),
        ops_vacuum.workflows(own(workflows, "--workflows")),
    ]
    targets = ", ".join(dict.fromkeys(s.target for s in steps))
    _execute(ctx, steps, older_than, targets, dry_run, yes, output)
