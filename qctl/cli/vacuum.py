"""``qctl vacuum``: retention, for cron. Each verb prints the rows it removed
(``-o json`` for machines); ``vacuum all`` runs several with one retention each."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, KindOpt, Output, SourceOpt, Yes
from qctl.cli.output import OutputFormat, emit_rows
from qctl.cli.parse import ParseError, format_duration
from qctl_store.types import Source

if TYPE_CHECKING:
    from qctl.cli.context import AnyStore

app = common.app("vacuum")

Retention = Annotated[
    str, typer.Option("--retention", metavar="DURATION", help="Keep what is younger than this.")
]

Step = tuple[str, Source | None, Callable[["AnyStore"], int]]
"""(target, source or None, the vacuum call)."""


def _run(
    ctx: typer.Context, steps: list[Step], plan: str, dry_run: bool, yes: bool, output: OutputFormat
) -> None:
    columns = ["target", "source", "removed"]
    if dry_run:
        rows: list[dict[str, Any]] = [
            {"target": t, "source": s, "removed": None, "dry_run": True} for t, s, _ in steps
        ]
        emit_rows(rows, columns, output)
        return
    store = common.writable(ctx, "vacuum")
    common.confirm(f"Vacuum {plan}?", yes)
    rows = [{"target": t, "source": s, "removed": call(store)} for t, s, call in steps]
    emit_rows(rows, columns, output)


def _per_source(
    target: str, source: Source | None, call: Callable[[AnyStore, Source], int]
) -> list[Step]:
    def bind(src: Source) -> Callable[[AnyStore], int]:
        return lambda st: call(st, src)

    return [(target, s, bind(s)) for s in common.sources(source)]


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
    """Succeeded and skipped jobs completed before --retention ago (DAG and workflow
    jobs go with their run)."""
    keep = _retention(retention, "--retention")
    steps = _per_source("completed", source, lambda st, s: st.vacuum_completed(s, keep))
    _run(ctx, steps, f"completed jobs older than {format_duration(keep)}", dry_run, yes, output)


@app.command("dead")
def dead(
    ctx: typer.Context,
    older_than: Annotated[
        str, typer.Option("--older-than", metavar="DURATION", help="Enqueued longer ago than.")
    ],
    source: SourceOpt = None,
    kind: KindOpt = "",
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Dead jobs enqueued before --older-than ago."""
    age = _retention(older_than, "--older-than")
    steps = _per_source("dead", source, lambda st, s: st.vacuum_dead(s, kind, age))
    _run(ctx, steps, f"dead jobs older than {format_duration(age)}", dry_run, yes, output)


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
    keep = _retention(retention, "--retention")
    steps = _per_source("stats", source, lambda st, s: st.vacuum_stats(s, keep))
    _run(ctx, steps, f"daily stats older than {format_duration(keep)}", dry_run, yes, output)


@app.command("idempotency")
def idempotency(
    ctx: typer.Context,
    source: SourceOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Expired idempotency keys."""
    steps = _per_source("idempotency", source, lambda st, s: st.vacuum_idempotency(s))
    _run(ctx, steps, "expired idempotency keys", dry_run, yes, output)


@app.command("dags")
def dags(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Terminal DAG runs completed before --retention ago, with their tasks."""
    keep = _retention(retention, "--retention")
    steps: list[Step] = [("dags", None, lambda st: st.vacuum_dags(keep))]
    _run(ctx, steps, f"DAG runs older than {format_duration(keep)}", dry_run, yes, output)


@app.command("workflows")
def workflows(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Terminal workflow executions completed before --retention ago."""
    keep = _retention(retention, "--retention")
    steps: list[Step] = [("workflows", None, lambda st: st.vacuum_workflows(keep))]
    _run(
        ctx, steps, f"workflow executions older than {format_duration(keep)}", dry_run, yes, output
    )


def _opt(help: str) -> Any:
    return typer.Option(metavar="DURATION", help=help)


@app.command("all")
def all_(
    ctx: typer.Context,
    completed: Annotated[str | None, _opt("Retention of completed jobs.")] = None,
    dead: Annotated[str | None, _opt("Age of dead jobs to delete.")] = None,
    stats: Annotated[str | None, _opt("Retention of daily stats.")] = None,
    dags: Annotated[str | None, _opt("Retention of terminal DAG runs.")] = None,
    workflows: Annotated[str | None, _opt("Retention of terminal workflows.")] = None,
    source: SourceOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Every vacuum with a retention given here, plus expired idempotency keys."""
    if all(v is None for v in (completed, dead, stats, dags, workflows)):
        raise ParseError(
            "give at least one retention (--completed, --dead, --stats, --dags, --workflows)"
        )
    steps: list[Step] = []
    if completed is not None:
        keep_c = _retention(completed, "--completed")
        steps += _per_source("completed", source, lambda st, s: st.vacuum_completed(s, keep_c))
    if dead is not None:
        keep_d = _retention(dead, "--dead")
        steps += _per_source("dead", source, lambda st, s: st.vacuum_dead(s, "", keep_d))
    if stats is not None:
        keep_s = _retention(stats, "--stats")
        steps += _per_source("stats", source, lambda st, s: st.vacuum_stats(s, keep_s))
    steps += _per_source("idempotency", source, lambda st, s: st.vacuum_idempotency(s))
    if dags is not None:
        keep_g = _retention(dags, "--dags")
        steps.append(("dags", None, lambda st: st.vacuum_dags(keep_g)))
    if workflows is not None:
        keep_w = _retention(workflows, "--workflows")
        steps.append(("workflows", None, lambda st: st.vacuum_workflows(keep_w)))
    targets = sorted({t for t, _, _ in steps})
    _run(ctx, steps, ", ".join(targets), dry_run, yes, output)
