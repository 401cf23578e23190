"""Retention verbs (azync's vacuum calls) and ``nuke``. A vacuum is a list of steps,
one store call each; a dry run counts what each would remove, on this host's clock
(``None`` where the store offers no way to count: stats rows and idempotency keys)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from qctl.systems.azync.ops.jobs import count_dead, iter_jobs
from qctl.systems.azync.ops.results import BulkOutcome, NukeOutcome
from qctl_kit.errors import add_done
from qctl_kit.values import PageCursor
from qctl_store.types import (
    DAG_TERMINAL_STATES,
    WORKFLOW_TERMINAL_STATES,
    DAGFilter,
    JobSearch,
    JobState,
    Source,
    WorkflowFilter,
    WorkflowState,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

PAGE = 500


@dataclass(frozen=True)
class Step:
    target: str
    source: Source | None
    run: Callable[[ConsoleStore], int]
    count: Callable[[ConsoleStore], int] | None = None
    """What ``run`` would remove, for a dry run; None when it cannot be counted."""


def execute(store: ConsoleStore, steps: list[Step], dry_run: bool = False) -> list[BulkOutcome]:
    """Run ``steps`` in order (or, with ``dry_run``, count them)."""
    if dry_run:
        return [
            BulkOutcome(
                "vacuum", s.count(store) if s.count else None, s.source, "", s.target, dry_run=True
            )
            for s in steps
        ]
    outcomes: list[BulkOutcome] = []
    try:
        for s in steps:
            outcomes.append(BulkOutcome("vacuum", s.run(store), s.source, "", s.target))
    except BaseException as exc:  # the steps finished before stay done
        add_done(exc, sum(o.count or 0 for o in outcomes))
        raise
    return outcomes


def _sources(source: Source | None) -> list[Source]:
    return [source] if source else list(Source)


def _per_source(
    target: str,
    source: Source | None,
    run: Callable[[ConsoleStore, Source], int],
    count: Callable[[ConsoleStore, Source], int] | None = None,
) -> list[Step]:
    def step(src: Source) -> Step:
        return Step(
            target, src, lambda st: run(st, src), (lambda st: count(st, src)) if count else None
        )

    return [step(s) for s in _sources(source)]


def _cutoff(retention: timedelta) -> datetime:
    return datetime.now(UTC) - retention


def completed(source: Source | None, keep: timedelta) -> list[Step]:
    """Succeeded jobs completed longer ago than ``keep``; never DAG or workflow jobs
    (they go with their run); retention <= 0 keeps all (azync)."""

    def count(st: ConsoleStore, src: Source) -> int:
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


def dead(source: Source | None, kind: str, age: timedelta) -> list[Step]:
    """Dead jobs that died longer ago than ``age``."""
    return _per_source(
        "dead",
        source,
        lambda st, s: st.vacuum_dead(s, kind, age),
        lambda st, s: count_dead(st, s, kind, age),
    )


def stats(source: Source | None, keep: timedelta) -> list[Step]:
    return _per_source("stats", source, lambda st, s: st.vacuum_stats(s, keep))


def idempotency(source: Source | None) -> list[Step]:
    return _per_source("idempotency", source, lambda st, s: st.vacuum_idempotency(s))


def _completed_before(rows: Iterator[Any], keep: timedelta) -> int:
    if keep <= timedelta(0):
        return 0
    cutoff = _cutoff(keep)
    return sum(1 for r in rows if r.completed_at and r.completed_at < cutoff)


def _pages(
    fetch: Callable[[Any, PageCursor | None], list[Any]], filters: list[Any]
) -> Iterator[Any]:
    """Every row of a newest-first keyset listing (DAG runs, executions), for each filter."""
    for flt in filters:
        after = None
        while True:
            page = fetch(flt, after)
            yield from page
            if len(page) < PAGE:
                break
            after = PageCursor(page[-1].created_at, page[-1].id)


def dags(keep: timedelta) -> Step:
    """Terminal DAG runs completed longer ago than ``keep``, with their tasks."""

    def rows(st: ConsoleStore) -> Iterator[Any]:
        filters = [DAGFilter(state=state) for state in DAG_TERMINAL_STATES]
        return _pages(lambda f, after: st.dag_page(f, PAGE, after), filters)

    return Step(
        "dags", None, lambda st: st.vacuum_dags(keep), lambda st: _completed_before(rows(st), keep)
    )


def workflows(keep: timedelta) -> Step:
    """Terminal workflow executions completed longer ago than ``keep``, with history."""

    def rows(st: ConsoleStore) -> Iterator[Any]:
        filters = [WorkflowFilter(state=state) for state in WORKFLOW_TERMINAL_STATES]
        return _pages(lambda f, after: st.execution_page(f, PAGE, after), filters)

    return Step(
        "workflows",
        None,
        lambda st: st.vacuum_workflows(keep),
        lambda st: _completed_before(rows(st), keep),
    )


def nuke(store: ConsoleStore, source: Source, dry_run: bool = False) -> NukeOutcome:
    """Delete every job, stats row and idempotency key of ``source`` in one transaction
    (a dev reset; the event ledger stays). A dry run counts the jobs. Both say what the
    reset breaks (``nuke_breaks``)."""
    breaks = nuke_breaks(store, source)
    jobs, _ = store.count_jobs(JobSearch(source=source), exact=True)
    if dry_run:
        return NukeOutcome(source, jobs, None, None, True, breaks)
    report = store.nuke_all(source)
    return NukeOutcome(source, report.jobs, report.stats, report.keys, breaks=breaks)


def nuke_breaks(store: ConsoleStore, source: Source) -> str | None:
    """What a nuke of ``source`` breaks beyond its own rows, with the runs it strands
    counted; None for the queue, the one source azync's own reset is used on (its
    conformance suite's ``NukeAll``). The other sources' jobs are the state of runs
    that live in other tables, which a nuke leaves behind."""
    if source == Source.DAG:
        live = sum(
            n
            for states in store.dag_name_state_counts().values()
            for state, n in states.items()
            if state not in DAG_TERMINAL_STATES
        )
        return (
            f"{live} unfinished DAG run(s) keep no task rows and never settle "
            "(`qctl dags cancel` them first)"
        )
    if source == Source.WORKFLOW:
        live = sum(
            store.list_workflow_executions(WorkflowFilter(state=state), 0, 1)[1]
            for state in WorkflowState
            if state not in WORKFLOW_TERMINAL_STATES
        )
        # Every azync worker process runs a reconciler over ListStalledWorkflows (running
        # executions with no live job): a nuke does not stop an execution, it restarts it.
        return (
            f"{live} unfinished workflow execution(s) lose their tasks, which does not stop"
            " them: each azync worker process's reconciler gives every running execution"
            " it finds without a task a new one (within about a minute), so each runs again"
            " from its history, once per worker process that finds it, and an operation in"
            " flight runs again; to stop them, cancel them first (`qctl workflows cancel ID`"
            " for each of `qctl workflows list --state running` and `--state suspended`)"
        )
    if source == Source.EVENT:
        return (
            "every delivery goes, undelivered ones included, while the ledger stays: "
            "events show no delivery and `qctl replay` would deliver processed ones again"
        )
    return None
