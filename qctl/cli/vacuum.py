"""``qctl vacuum``: retention, for cron. Each verb prints the rows it removed per target
and source (``-o json`` for machines); ``vacuum all`` runs several, one retention each.
``--dry-run`` prints what each step would remove, counted on this host's clock (null
where the store offers no way to count: stats rows and idempotency keys)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DeadAge, DryRun, KindOpt, Output, SourceOpt, Yes
from qctl.cli.jobs import count_dead, iter_jobs
from qctl.cli.output import OutputFormat, emit_rows
from qctl.cli.parse import ParseError, format_duration
from qctl_store.types import (
    DAG_TERMINAL_STATES,
    WORKFLOW_TERMINAL_STATES,
    DAGFilter,
    JobSearch,
    JobState,
    Source,
    WorkflowFilter,
)

if TYPE_CHECKING:
    from qctl.cli.context import AnyStore

app = common.app("vacuum")

Retention = Annotated[
    str, typer.Option("--retention", metavar="DURATION", help="Keep what is younger than this.")
]
PAGE = 500


@dataclass
class Step:
    target: str
    source: Source | None
    run: Callable[[AnyStore], int]
    count: Callable[[AnyStore], int] | None = None
    """What ``run`` would remove, for --dry-run; None when it cannot be counted."""


def _execute(
    ctx: typer.Context, steps: list[Step], plan: str, dry_run: bool, yes: bool, output: OutputFormat
) -> None:
    if dry_run:
        store = common.store(ctx)
        rows: list[dict[str, Any]] = [
            {
                "target": s.target,
                "source": s.source,
                "dry_run": True,
                "removed": s.count(store) if s.count else None,
            }
            for s in steps
        ]
    else:
        store = common.writable(ctx, "vacuum")
        common.confirm(f"Vacuum {plan}?", yes)
        rows = [{"target": s.target, "source": s.source, "removed": s.run(store)} for s in steps]
    emit_rows(rows, ["target", "source", "removed"], output)


def _cutoff(retention: timedelta) -> datetime:
    return datetime.now(UTC) - retention


def _completed(source: Source | None, keep: timedelta) -> list[Step]:
    def count(st: AnyStore, src: Source) -> int:
        # azync: succeeded rows only, never DAG or workflow jobs; retention <= 0 keeps all.
        if keep <= timedelta(0):
            return 0
        cutoff = _cutoff(keep)
        search = JobSearch(source=src, state=JobState.SUCCEEDED)
        return sum(
            1
            for j in iter_jobs(st, search)
            if j.dag_id is None and j.run_id is None and j.completed_at and j.completed_at < cutoff
        )

    return _per_source("completed", source, lambda st, s: st.vacuum_completed(s, keep), count)


def _dead(source: Source | None, kind: str, age: timedelta) -> list[Step]:
    return _per_source(
        "dead",
        source,
        lambda st, s: st.vacuum_dead(s, kind, age),
        lambda st, s: count_dead(st, s, kind, age),
    )


def _stats(source: Source | None, keep: timedelta) -> list[Step]:
    return _per_source("stats", source, lambda st, s: st.vacuum_stats(s, keep))


def _idempotency(source: Source | None) -> list[Step]:
    return _per_source("idempotency", source, lambda st, s: st.vacuum_idempotency(s))


def _completed_before(rows: Iterator[Any], keep: timedelta) -> int:
    if keep <= timedelta(0):
        return 0
    cutoff = _cutoff(keep)
    return sum(1 for r in rows if r.completed_at and r.completed_at < cutoff)


def _dags(keep: timedelta) -> Step:
    def rows(st: AnyStore) -> Iterator[Any]:
        filters = [DAGFilter(state=state) for state in DAG_TERMINAL_STATES]
        return _pages(lambda f, off: st.list_dags(f, off, PAGE)[0], filters)

    return Step(
        "dags", None, lambda st: st.vacuum_dags(keep), lambda st: _completed_before(rows(st), keep)
    )


def _workflows(keep: timedelta) -> Step:
    def rows(st: AnyStore) -> Iterator[Any]:
        filters = [WorkflowFilter(state=state) for state in WORKFLOW_TERMINAL_STATES]
        return _pages(lambda f, off: st.list_workflow_executions(f, off, PAGE)[0], filters)

    return Step(
        "workflows",
        None,
        lambda st: st.vacuum_workflows(keep),
        lambda st: _completed_before(rows(st), keep),
    )


def _pages(fetch: Callable[[Any, int], list[Any]], filters: list[Any]) -> Iterator[Any]:
    """Every row of an offset-paginated listing, for each filter."""
    for flt in filters:
        offset = 0
        while True:
            page = fetch(flt, offset)
            yield from page
            if len(page) < PAGE:
                break
            offset += PAGE


def _per_source(
    target: str,
    source: Source | None,
    run: Callable[[AnyStore, Source], int],
    count: Callable[[AnyStore, Source], int] | None = None,
) -> list[Step]:
    def step(src: Source) -> Step:
        return Step(
            target, src, lambda st: run(st, src), (lambda st: count(st, src)) if count else None
        )

    return [step(s) for s in common.sources(source)]


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
    """Old succeeded jobs. Completed before --retention ago; DAG and workflow jobs go
    with their run (see `vacuum dags` and `vacuum workflows`)."""
    keep = _retention(retention, "--retention")
    _execute(
        ctx,
        _completed(source, keep),
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
    """Dead jobs enqueued before --older-than ago."""
    age = _retention(older_than, "--older-than")
    _execute(
        ctx,
        _dead(source, kind, age),
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
    keep = _retention(retention, "--retention")
    _execute(
        ctx,
        _stats(source, keep),
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
    _execute(ctx, _idempotency(source), "expired idempotency keys", dry_run, yes, output)


@app.command("dags")
def dags(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Old terminal DAG runs. Completed before --retention ago, with their tasks."""
    keep = _retention(retention, "--retention")
    _execute(
        ctx, [_dags(keep)], f"DAG runs older than {format_duration(keep)}", dry_run, yes, output
    )


@app.command("workflows")
def workflows(
    ctx: typer.Context,
    retention: Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Old terminal workflow executions. Completed before --retention ago, with their
    history."""
    keep = _retention(retention, "--retention")
    _execute(
        ctx,
        [_workflows(keep)],
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
        steps += _completed(source, _retention(completed, "--completed"))
    if dead is not None:
        steps += _dead(source, "", _retention(dead, "--dead"))
    if stats is not None:
        steps += _stats(source, _retention(stats, "--stats"))
    steps += _idempotency(source)
    if dags is not None:
        steps.append(_dags(_retention(dags, "--dags")))
    if workflows is not None:
        steps.append(_workflows(_retention(workflows, "--workflows")))
    targets = ", ".join(dict.fromkeys(s.target for s in steps))
    _execute(ctx, steps, targets, dry_run, yes, output)
