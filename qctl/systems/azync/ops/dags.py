"""DAG verbs of azync (``dag/manager.go``): retry, pause, compensate, cancel, signal."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from qctl.core.errors import NoSuchName, Strands, require_state
from qctl.systems.azync.ops.results import RunOutcome, SagaOutcome, SignalOutcome
from qctl_store.dagcheck import COMPENSABLE_STATES
from qctl_store.types import (
    DAG_TERMINAL_STATES,
    JSON,
    TASK_KEY_COMPENSATION_PREFIX,
    DAGSignalParams,
    DAGState,
    Job,
    JobState,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

LIVE_STATES = frozenset(DAGState) - DAG_TERMINAL_STATES

# What CompensateDAG and CancelDAG cancel (cancelRemainingTasksSQL,
# driver/azyncpgx/dag_store.go): an active task keeps its lease and settles on its own.
CANCELLED_STATES = frozenset(
    {JobState.PENDING, JobState.SCHEDULED, JobState.BLOCKED, JobState.WAITING, JobState.PAUSED}
)


def _act(
    store: ConsoleStore,
    id: uuid.UUID,
    action: str,
    needs: Collection[DAGState],
    call: Callable[[], None],
    dry_run: bool,
) -> RunOutcome:
    dag = store.get_dag(id)
    require_state(f"{action} dag", f"DAG {str(dag.id)[:8]}", dag.state, needs, action)
    if not dry_run:
        call()
    return RunOutcome(dag.id, dag.name, action, dag.state, dry_run)


def retry(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> RunOutcome:
    """Resume a suspended or paused run; its dead tasks get a fresh budget."""
    return _act(store, id, "retry", LIVE_STATES, lambda: store.retry_dag(id), dry_run)


def pause(store: ConsoleStore, id: uuid.UUID, reason: str, dry_run: bool = False) -> RunOutcome:
    return _act(
        store, id, "pause", {DAGState.RUNNING}, lambda: store.pause_dag(id, reason), dry_run
    )


_EPOCH = datetime.min.replace(tzinfo=UTC)


def _is_compensation(task: Job) -> bool:
    return task.task_key.startswith(TASK_KEY_COMPENSATION_PREFIX)


def _listed(tasks: list[Job]) -> str:
    return ", ".join(f"{t.task_key} ({t.state})" for t in tasks)


def _saga(
    store: ConsoleStore,
    id: uuid.UUID,
    action: str,
    needs: Collection[DAGState],
    call: Callable[[], None],
    dry_run: bool,
    force: bool,
    strands: Callable[[uuid.UUID, list[Job]], str],
) -> SagaOutcome:
    """``compensate`` or ``cancel``: the run's state checked, then ``strands(id,
    tasks)`` (why acting now would strand the saga, "" when it would not) refused
    unless ``force``; the outcome lists the tasks the action cancels and leaves running."""
    dag = store.get_dag(id)
    subject = f"DAG {str(dag.id)[:8]}"
    require_state(f"{action} dag", subject, dag.state, needs, action)
    tasks = sorted(store.dag_tasks(id), key=lambda t: t.task_key)
    why = strands(dag.id, tasks)
    if why and not force:
        raise Strands(f"{action} {subject}: {why}; or force it with --force")
    chain_started = any(_is_compensation(t) for t in tasks)
    # insertCompensations' candidates, newest completion first (compensationCandidatesSQL).
    undo = sorted(
        (
            t
            for t in tasks
            if t.state == JobState.SUCCEEDED and t.compensation_kind and not _is_compensation(t)
        ),
        key=lambda t: (t.completed_at or _EPOCH, str(t.id)),
        reverse=True,
    )
    if not dry_run:
        call()
    return SagaOutcome(
        dag.id,
        dag.name,
        action,
        dag.state,
        dry_run,
        cancels=tuple(t.task_key for t in tasks if t.state in CANCELLED_STATES),
        left_running=tuple(t.task_key for t in tasks if t.state == JobState.ACTIVE),
        compensations=()
        if action != "compensate" or chain_started
        else tuple(TASK_KEY_COMPENSATION_PREFIX + t.task_key for t in undo),
        chain_started=chain_started,
    )


def _compensate_strands(dag_id: uuid.UUID, tasks: list[Job]) -> str:
    chain = [t for t in tasks if _is_compensation(t)]
    if chain:
        # A saga suspended by a dead compensation step: azync inserts no second chain,
        # so compensating again only cancels the steps that have not run.
        unrun = [t for t in chain if t.state in CANCELLED_STATES]
        return (
            f"its compensation already started ({_listed(chain)}); compensate inserts no "
            f"new chain and cancels the {len(unrun)} step(s) that have not run, leaving "
            f"their work undone; `qctl dags retry {dag_id}` re-runs the dead step "
            "and goes on with the chain"
        )
    active = [t for t in tasks if t.state == JobState.ACTIVE]
    if active:
        return (
            f"task(s) {_listed(active)} are running: one that then fails with a retry runs "
            "again after its compensation, one that succeeds is never compensated; wait "
            "until they settle"
        )
    return ""


def _cancel_strands(dag_id: uuid.UUID, tasks: list[Job]) -> str:
    unrun = [t for t in tasks if _is_compensation(t) and t.state in CANCELLED_STATES]
    if not unrun:
        return ""
    return (
        f"it cancels the compensation step(s) that have not run ({_listed(unrun)}), "
        "leaving their work undone; let the compensation finish "
        f"(`qctl dags retry {dag_id}` re-runs a dead step)"
    )


def compensate(
    store: ConsoleStore, id: uuid.UUID, dry_run: bool = False, force: bool = False
) -> SagaOutcome:
    """Cancel what has not run and undo what succeeded (azync's CompensateDAG). Refused
    unless ``force`` while an original task runs, or once the chain started."""
    return _saga(
        store,
        id,
        "compensate",
        COMPENSABLE_STATES,
        lambda: store.compensate_dag(id),
        dry_run,
        force,
        _compensate_strands,
    )


def cancel(
    store: ConsoleStore, id: uuid.UUID, dry_run: bool = False, force: bool = False
) -> SagaOutcome:
    """Cancel what has not run, without compensating (azync's CancelDAG). Refused unless
    ``force`` where it would cancel compensation steps that have not run."""
    return _saga(
        store,
        id,
        "cancel",
        LIVE_STATES,
        lambda: store.cancel_dag(id),
        dry_run,
        force,
        _cancel_strands,
    )


def signal(
    store: ConsoleStore,
    id: uuid.UUID,
    name: str,
    payload: JSON = None,
    message_id: str = "",
    dry_run: bool = False,
) -> SignalOutcome:
    """Send signal ``name`` to the run's tasks that wait for it (buffered until one
    waits). A name no task of the run waits for is refused: it would be buffered
    forever, and a typo must not read as success."""
    dag = store.get_dag(id)
    names = sorted({t.signal_name for t in store.dag_tasks(id) if t.signal_name})
    if name not in names:
        known = f" (its signals: {', '.join(names)})" if names else " (it waits for no signal)"
        raise NoSuchName(
            "signal", f"no task of DAG {str(dag.id)[:8]} waits for a signal named {name!r}{known}"
        )
    if dry_run:
        return SignalOutcome(id, name, 0, False, message_id, True)
    delivered, dedup = store.signal(DAGSignalParams(id, name, message_id, payload))
    return SignalOutcome(id, name, delivered, dedup, message_id)


def awaited_signal(tasks: Sequence[Job]) -> str:
    """The signal to offer for a run with ``tasks``: the one its first waiting task waits
    for, else the only one its tasks declare; "" when neither tells (the operator names
    it)."""
    waiting = next((t.signal_name for t in tasks if t.state == JobState.WAITING), "")
    names = {t.signal_name for t in tasks if t.signal_name}
    return waiting or (names.pop() if len(names) == 1 else "")
