"""DAG verbs of azync (``dag/manager.go``): retry, pause, compensate, cancel, signal."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from qctl.core.errors import NoSuchName, Strands, WrongState, require_state
from qctl.systems.azync.ops.results import RunOutcome, SagaOutcome, SignalOutcome
from qctl_store.dagcheck import COMPENSABLE_STATES
from qctl_store.types import (
    DAG_TERMINAL_STATES,
    JSON,
    KIND_SIGNAL,
    KIND_SLEEP,
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
    """Send signal ``name`` to a live run (``DAGStore.Signal``): its waiting ``$signal``
    task of that name completes with the payload as its result, and a scheduled
    ``$sleep`` timer of that name wakes now; with neither ready, the signal is buffered
    until one is. A finished run takes no signal (named with its state), and a name no
    task of the run declares is refused: it would be buffered forever, and a typo must
    not read as success. The dry run counts the tasks it would reach now."""
    dag = store.get_dag(id)
    subject = f"DAG run {str(dag.id)[:8]}"
    if dag.state in DAG_TERMINAL_STATES:
        raise WrongState("signal dag", f"{subject} is {dag.state}: a finished run takes no signal")
    tasks = store.dag_tasks(id)
    named = [t for t in tasks if t.signal_name == name]
    if not named:
        raise NoSuchName(
            "signal", f"no task of {subject} waits for a signal named {name!r}{_declared(tasks)}"
        )
    if all(t.state in _SETTLED for t in named):
        settled = ", ".join(f"{t.task_key} {t.state}" for t in named)
        raise WrongState(
            "signal dag",
            f"every task of {subject} that takes signal {name!r} has settled ({settled}):"
            " it would be buffered for good",
        )
    timer = all(t.kind == KIND_SLEEP for t in named)
    if dry_run:
        ready = sum(1 for t in named if (t.kind, t.state) in _READY)
        return SignalOutcome(id, name, ready, False, message_id, True, dag.state, timer)
    delivered, dedup = store.signal(DAGSignalParams(id, name, message_id, payload))
    return SignalOutcome(id, name, delivered, dedup, message_id, False, dag.state, timer)


_READY = {(KIND_SIGNAL, JobState.WAITING), (KIND_SLEEP, JobState.SCHEDULED)}
"""The tasks a signal reaches at once (dag_store.go deliverSignalNowSQL); others wait for
the buffered signal."""


def _declared(tasks: Sequence[Job]) -> str:
    """The names a run's tasks take signals by: its ``$signal`` tasks' signals, then the
    ``$sleep`` timers a signal of their name wakes early."""
    signals = sorted({t.signal_name for t in tasks if t.kind == KIND_SIGNAL and t.signal_name})
    timers = sorted({t.signal_name for t in tasks if t.kind == KIND_SLEEP and t.signal_name})
    said = [f"its signals: {', '.join(signals)}"] if signals else []
    if timers:
        said.append(f"its timers, which a signal of their name wakes early: {', '.join(timers)}")
    return f" ({'; '.join(said)})" if said else " (it waits for no signal)"


def signal_words(sent: SignalOutcome) -> str:
    """What a DAG signal did (or, in a dry run, will do), for the command line's output
    and the dashboard's question and notice alike."""
    to = f"signal {sent.signal!r} to DAG run {sent.id}"
    if sent.deduplicated:
        return f"{to} was a duplicate (message id {sent.message_id!r}): nothing changed"
    n, will = sent.delivered, sent.dry_run
    if n and sent.timer:
        timers = "$sleep timer" if n == 1 else f"{n} $sleep timers"
        did = f"{'wakes' if will else 'woke'} its {timers} now (the payload is not used)"
    elif n:
        tasks = "task" if n == 1 else f"{n} tasks"
        did = f"{'completes' if will else 'completed'} its waiting {tasks} with the payload"
    else:
        held = " (the run is paused)" if sent.run_state in _HELD else ""
        did = f"{'is' if will else 'was'} buffered until a task of that name is ready{held}"
    return f"{to} ({sent.run_state}): {did}" if sent.run_state else f"{to}: {did}"


_HELD = {DAGState.PAUSED, DAGState.SUSPENDED}
_SETTLED = {JobState.SUCCEEDED, JobState.CANCELLED, JobState.SKIPPED}
"""Task states nothing brings back (a dead task waits again after `dags retry`)."""


def awaited_signal(tasks: Sequence[Job]) -> str:
    """The signal to offer for a run with ``tasks``: the one its first waiting task waits
    for, else the only one its tasks declare; "" when neither tells (the operator names
    it)."""
    waiting = next((t.signal_name for t in tasks if t.state == JobState.WAITING), "")
    names = {t.signal_name for t in tasks if t.signal_name}
    return waiting or (names.pop() if len(names) == 1 else "")
