"""The result records of operator actions, shared by every system's implementation.

Front-ends render these and nothing else: the command line prints them (``-o json``
gives their fields), the dashboard turns them into a notice. ``dry_run`` is true when
the action only counted what it would do and wrote nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BulkOutcome:
    """A bulk action over many rows (a vacuum step, a retention, a replay):
    how many rows it changed, or with ``dry_run`` how many it would."""

    action: str
    count: int | None
    """``None`` when a dry run cannot count (the store offers no count of the rows)."""
    source: str | None = None
    kind: str = ""
    target: str = ""
    """What the action removes or changes (a vacuum step: ``dead``, ``dags``, ...)."""
    dry_run: bool = False


@dataclass(frozen=True)
class RunOutcome:
    """An action on one run: a DAG run or a workflow execution (retry, cancel, ...)."""

    id: uuid.UUID
    name: str
    action: str
    state: str
    """The state the run was in when the action was decided."""
    dry_run: bool = False

    def effects(self) -> str:
        """What the action does to the run's tasks, for a dry run and a confirmation
        ("" when it says nothing beyond the action)."""
        return ""


@dataclass(frozen=True)
class SagaOutcome(RunOutcome):
    """``dags compensate`` or ``dags cancel``: the task keys it cancels, the active ones
    it leaves running (they keep their lease and settle on their own) and the
    compensation steps it inserts (newest completion first)."""

    cancels: tuple[str, ...] = ()
    left_running: tuple[str, ...] = ()
    compensations: tuple[str, ...] = ()
    chain_started: bool = False
    """The run already has its compensation chain (azync inserts none a second time)."""

    def effects(self) -> str:
        said = [f"cancels {_keys(self.cancels)}", f"leaves running {_keys(self.left_running)}"]
        if self.action == "compensate":
            if self.compensations:
                said.append(f"inserts compensations {', '.join(self.compensations)}")
            elif self.chain_started:
                said.append("inserts no compensation (its chain exists already)")
            else:
                said.append("inserts no compensation (the run fails at once)")
        return "; ".join(said)


def _keys(keys: tuple[str, ...]) -> str:
    return ", ".join(keys) if keys else "no task"


@dataclass(frozen=True)
class SignalOutcome:
    """A signal sent to a DAG run or a workflow execution."""

    id: uuid.UUID
    signal: str
    delivered: int
    """Tasks the signal settled (a DAG); 1 or 0 for a workflow (recorded or not)."""
    deduplicated: bool
    message_id: str = ""
    dry_run: bool = False
    run_state: str = ""
    """The DAG run's state when it was sent."""
    timer: bool = False
    """The name is a DAG ``$sleep`` timer's, which the signal wakes (no ``$signal`` task
    of the run has it)."""


@dataclass(frozen=True)
class ResolveOutcome:
    """An uncertain workflow operation settled by the operator."""

    job_id: uuid.UUID
    decision: str
    workflow_id: uuid.UUID
    history_event: str = ""
    """The history event appended (``OperationCompleted``/``OperationFailed``), "" on retry."""
    dry_run: bool = False


@dataclass(frozen=True)
class SubscriberOutcome:
    """A subscription registered, or a subscriber's subscriptions deleted."""

    subscriber: str
    event_type: str
    action: str
    count: int
    """Subscriptions registered (1) or deleted (or, in a dry run, that would be)."""
    drained: int = 0
    """Deliveries that had not run yet, deleted with the subscriptions (``--drain``)."""
    max_attempts: int | None = None
    dry_run: bool = False


@dataclass(frozen=True)
class ReplayOutcome:
    """Events re-delivered to their subscribers."""

    events: int
    """Ledger events re-delivered: those of the events the limit caps that have a
    matching subscriber."""
    subscribers: int
    """Subscribers that match the filter."""
    deliveries: int
    """Replay deliveries enqueued (a dry run: that it would enqueue)."""
    dry_run: bool = False


@dataclass(frozen=True)
class Published:
    id: uuid.UUID
    type: str
    deliveries: int


@dataclass(frozen=True)
class Enqueued:
    id: uuid.UUID
    kind: str
    inserted: bool
    """False when the idempotency key was taken (deduplicated)."""


@dataclass(frozen=True)
class MaintainStep:
    """One step of a maintenance pass and what it did."""

    step: str
    count: int
    source: str | None = None
    killed: int | None = None
    """``reap_expired``: jobs whose reap budget ran out (dead)."""
    failures: list[Any] = field(default_factory=list)
    """``apply_failure_policy``: the DAG failures it handled."""


@dataclass(frozen=True)
class NukeOutcome:
    """A source reset: its jobs, stats rows and idempotency keys deleted."""

    source: str
    jobs: int
    stats: int | None
    """``None`` in a dry run (stats rows cannot be counted)."""
    keys: int | None
    dry_run: bool = False
    breaks: str | None = None
    """What the reset breaks beyond its rows (``nuke_breaks``); None for the queue."""
