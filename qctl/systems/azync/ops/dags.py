"""DAG verbs of azync (``dag/manager.go``): retry, pause, compensate, cancel, signal."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from qctl.core.errors import NoSuchName, require_state
from qctl.systems.azync.ops.results import RunOutcome, SignalOutcome
from qctl_store.dagcheck import COMPENSABLE_STATES
from qctl_store.types import DAG_TERMINAL_STATES, JSON, DAGSignalParams, DAGState, Job, JobState

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

LIVE_STATES = frozenset(DAGState) - DAG_TERMINAL_STATES


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


def compensate(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> RunOutcome:
    return _act(
        store, id, "compensate", COMPENSABLE_STATES, lambda: store.compensate_dag(id), dry_run
    )


def cancel(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> RunOutcome:
    return _act(store, id, "cancel", LIVE_STATES, lambda: store.cancel_dag(id), dry_run)


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
