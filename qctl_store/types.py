"""Row and parameter types of the azync driver contract, in Python form.

Names follow azync's Go ``driver`` package (``rows.go``, ``dag.go``, ``workflow.go``) in
snake_case. Go zero values map to Python as: zero ``time.Time`` -> ``None``,
``uuid.Nil`` -> ``None``, zero ``time.Duration`` -> ``timedelta(0)``, nil
``json.RawMessage`` -> ``None`` (a decoded JSON value otherwise), nil map -> ``{}``.
Instants are timezone-aware UTC datetimes.
"""

from __future__ import annotations

import uuid
from dataclasses import Field, dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, ClassVar

from qctl_store.config import DEFAULT_MAX_ATTEMPTS

JSON = Any
"""A decoded JSON value (dict, list, str, int, float, bool or None)."""

KIND_SLEEP = "$sleep"
KIND_SIGNAL = "$signal"
TASK_KEY_COMPENSATION_PREFIX = "comp:"
WORKFLOW_TASK_KIND_PREFIX = "$wf:"


class _Record:
    """Value equality and the field repr of every type below, written once. With plain
    ``@dataclass`` each class would generate (``exec``) both, about half of this module's
    import time, which every command pays; so each is ``@dataclass(eq=False, repr=False)``
    over this base. The behaviour is the generated one: equal when of the same class with
    equal fields, unhashable, ``Name(field=value, ...)``, for types whose every field
    compares and prints (no ``field(compare=False)`` or ``repr=False``; a test holds it)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__  # every attribute is a field

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclass_fields(self))
        return f"{self.__class__.__qualname__}({fields})"


class Source(StrEnum):
    QUEUE = "queue"
    EVENT = "event"
    DAG = "dag"
    WORKFLOW = "workflow"


class JobState(StrEnum):
    PENDING = "pending"
    SCHEDULED = "scheduled"
    ACTIVE = "active"
    DEAD = "dead"
    PAUSED = "paused"
    SUCCEEDED = "succeeded"
    BLOCKED = "blocked"
    WAITING = "waiting"
    CANCELLED = "cancelled"
    UNCERTAIN = "uncertain"
    SKIPPED = "skipped"


class DAGState(StrEnum):
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPENSATING = "compensating"
    PAUSED = "paused"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


DAG_TERMINAL_STATES = frozenset({DAGState.SUCCEEDED, DAGState.FAILED, DAGState.CANCELLED})


class OnFailurePolicy(StrEnum):
    CANCEL = "cancel"
    SUSPEND = "suspend"


class WorkflowState(StrEnum):
    RUNNING = "running"
    SUSPENDED = "suspended"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


WORKFLOW_TERMINAL_STATES = frozenset(
    {WorkflowState.SUCCEEDED, WorkflowState.FAILED, WorkflowState.CANCELLED}
)


class OperationState(StrEnum):
    SCHEDULED = "scheduled"
    ACTIVE = "active"
    RETRY_WAIT = "retry_wait"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    UNCERTAIN = "uncertain"


class UncertainDecision(StrEnum):
    COMPLETE = "complete"
    FAIL = "fail"
    RETRY = "retry"


class ChangeEntity(StrEnum):
    JOB = "job"
    DAG = "dag"
    EVENT = "event"
    RESET = "reset"


# --- parameters -------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class EnqueueParams(_Record):
    """A job to enqueue (``Store.enqueue``): its kind, payload and id, when it may run, its
    attempt budget and an optional idempotency key."""

    kind: str
    payload: JSON = field(default_factory=dict)
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    meta: dict[str, str] = field(default_factory=dict)
    run_at: datetime | None = None
    delay: timedelta = timedelta(0)
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    """What azync's queue producer writes unless a budget is given (0 means the same): a
    Go worker leasing the job without a per-kind override keeps it."""
    max_attempts_explicit: bool = False
    idempotency_key: str = ""
    idempotency_ttl: timedelta = timedelta(0)


@dataclass(eq=False, repr=False)
class DequeueParams(_Record):
    """A lease request: up to ``limit`` due jobs of ``kind``, leased for ``lease``."""

    kind: str
    limit: int = 1
    lease: timedelta = timedelta(seconds=30)
    default_max_attempts: int = 0
    override_default: bool = False


@dataclass(eq=False, repr=False)
class PublishParams(_Record):
    """An event to append to the ledger (``EventStore.publish``)."""

    type: str
    payload: JSON = field(default_factory=dict)
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    aggregate_type: str = ""
    aggregate_id: str = ""
    version: int = 0
    occurred_at: datetime | None = None
    """Domain time of the event; None means the backend's now."""
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class Subscriber(_Record):
    """A subscriber registration: ``name`` receives a delivery job per event of
    ``event_type``."""

    name: str
    event_type: str
    max_attempts: int = 25


@dataclass(eq=False, repr=False)
class JobFilter(_Record):
    """The Go listing's job filter: one kind, one state (empty: any)."""

    kind: str = ""
    state: JobState | None = None


@dataclass(eq=False, repr=False)
class EventFilter(_Record):
    """Which ledger events to list."""

    type: str = ""
    undispatched: bool | None = None
    since: datetime | None = None
    until: datetime | None = None
    # Extension: one aggregate's events. No index leads with these columns: bound the
    # read with ``type`` or ``since`` on a large ledger.
    aggregate_type: str = ""
    aggregate_id: str = ""


@dataclass(eq=False, repr=False)
class ReplayFilter(_Record):
    """Which events to deliver again, to which subscribers (``limit`` 0: all)."""

    subscriber: str = ""
    event_type: str = ""
    event_id: uuid.UUID | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 0


@dataclass(eq=False, repr=False)
class DAGTask(_Record):
    """One task of a declared DAG: its key, the job it runs, its compensation and, for wait
    and timer tasks, the signal or delay."""

    key: str
    kind: str
    payload: JSON = field(default_factory=dict)
    max_attempts: int = 0
    compensation_kind: str = ""
    compensation_payload: JSON = None
    signal_name: str = ""
    sleep_for: timedelta = timedelta(0)
    ignore_dead_deps: bool = False
    deadline: timedelta = timedelta(0)

    def __post_init__(self) -> None:
        # azync's DAG client names the signal of a wait or timer task after its key
        # (dag/client.go makeTask): without a name it could never be signalled.
        if not self.signal_name and self.kind in (KIND_SLEEP, KIND_SIGNAL):
            self.signal_name = self.key


@dataclass(eq=False, repr=False)
class DAGDep(_Record):
    """An edge of a DAG: ``task_key`` waits for ``depends_on_key``."""

    task_key: str
    depends_on_key: str


@dataclass(eq=False, repr=False)
class DAGParams(_Record):
    """A DAG run to create: its tasks, their edges and the failure policy."""

    name: str
    tasks: list[DAGTask] = field(default_factory=list)
    deps: list[DAGDep] = field(default_factory=list)
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    on_failure: OnFailurePolicy | str = OnFailurePolicy.CANCEL
    idempotency_key: str = ""
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class DAGFilter(_Record):
    """Which DAG runs to list: one name, one state (empty: any)."""

    name: str = ""
    state: DAGState | None = None


@dataclass(eq=False, repr=False)
class DAGSignalParams(_Record):
    """A signal to a DAG run's waiting task (``message_id`` dedupes it)."""

    dag_id: uuid.UUID
    name: str
    message_id: str = ""
    payload: JSON = None


@dataclass(eq=False, repr=False)
class WorkflowStartParams(_Record):
    """A workflow execution to start."""

    name: str
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    version: str = ""
    input: JSON = None
    business_idempotency_key: str = ""
    task_queue: str = ""
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class SignalParams(_Record):
    """A signal to a workflow execution (``message_id`` dedupes it)."""

    workflow_id: uuid.UUID
    name: str
    message_id: str = ""
    payload: JSON = None


@dataclass(eq=False, repr=False)
class ScheduleOperationParams(_Record):
    """An operation job a workflow execution schedules (``execution_key`` dedupes it)."""

    workflow_id: uuid.UUID
    kind: str
    payload: JSON = None
    meta: dict[str, str] = field(default_factory=dict)
    execution_key: str = ""
    run_at: datetime | None = None
    max_attempts: int = 0


# --- rows -------------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class EventRecord(_Record):
    """An event of the ledger as stored."""

    id: uuid.UUID
    type: str
    aggregate_type: str
    aggregate_id: str
    version: int
    occurred_at: datetime
    payload: JSON
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class Job(_Record):
    """A row of ``azync_jobs``: a queue job, an event delivery, a DAG task or a workflow
    operation."""

    id: uuid.UUID
    source: Source
    kind: str
    state: JobState
    attempt: int = 0
    max_attempts: int = 0
    reap_count: int = 0
    payload: JSON = None
    meta: dict[str, str] = field(default_factory=dict)
    run_at: datetime | None = None
    lease_until: datetime | None = None
    lease_token: uuid.UUID | None = None
    last_error: str = ""
    event_id: uuid.UUID | None = None
    replay: bool = False
    event: EventRecord | None = None
    dag_id: uuid.UUID | None = None
    run_id: uuid.UUID | None = None
    task_key: str = ""
    result: JSON = None
    signal_name: str = ""
    compensation_kind: str = ""
    ignore_dead_deps: bool = False
    snooze_budget: timedelta = timedelta(0)
    deadline_at: datetime | None = None
    enqueued_at: datetime | None = None
    failed_at: datetime | None = None
    completed_at: datetime | None = None
    started_at: datetime | None = None
    idempotency_key: str = ""
    """Extension: the live dedupe key, shown by the console (not in the Go row)."""
    max_attempts_explicit: bool = False
    """Extension: whether the budget is pinned (not in the Go row)."""
    updated_at: datetime | None = None
    """Extension: last write to the row (not in the Go row)."""


@dataclass(eq=False, repr=False)
class AttemptError(_Record):
    """One failed attempt of a job: its number, its error and when."""

    attempt: int
    error: str
    at: datetime


@dataclass(eq=False, repr=False)
class Depths(_Record):
    """Job counts of one kind per state, with the age of its oldest pending job."""

    pending: int = 0
    scheduled: int = 0
    active: int = 0
    dead: int = 0
    paused: int = 0
    succeeded: int = 0
    oldest_pending_age: timedelta = timedelta(0)
    # Extension: the DAG and workflow states Go's Depths leaves out.
    waiting: int = 0
    blocked: int = 0
    uncertain: int = 0


LIVE_DEPTH_CAP = 200
"""On a huge table ``live_depths`` counts each kind's pending, scheduled and dead jobs no
further than this and takes the statistics' estimate for a count at the cap, so a refresh
over any backlog reads a bounded part of each index."""

CAPPED_DEPTHS = ("pending", "scheduled", "dead")


def estimated_depths(d: Depths, source: Source) -> list[str]:
    """The fields of ``d`` that may be estimates when ``live_depths`` says it estimated:
    succeeded and paused, uncertain for workflow jobs (the only ones that can be
    uncertain), and the capped counts at ``LIVE_DEPTH_CAP``."""
    fields = ["succeeded", "paused", *(f for f in CAPPED_DEPTHS if getattr(d, f) >= LIVE_DEPTH_CAP)]
    return [*fields, "uncertain"] if source == Source.WORKFLOW else fields


@dataclass(eq=False, repr=False)
class DailyCount(_Record):
    """One day's throughput counters of a kind (or summed over kinds)."""

    date: datetime
    enqueued: int = 0
    processed: int = 0
    failed: int = 0
    reaped: int = 0


@dataclass(eq=False, repr=False)
class NukeReport(_Record):
    """What ``nuke_all`` deleted: jobs, stats rows and idempotency keys."""

    jobs: int = 0
    stats: int = 0
    keys: int = 0


@dataclass(eq=False, repr=False)
class EventAdminRow(_Record):
    """An event as the console lists it: the record, when it was dispatched and its
    deliveries."""

    id: uuid.UUID
    type: str
    aggregate_type: str
    aggregate_id: str
    version: int
    occurred_at: datetime
    dispatched_at: datetime | None
    meta: dict[str, str]
    payload: JSON
    deliveries: int = 0


@dataclass(eq=False, repr=False)
class SubscriberView(_Record):
    """A subscriber registration as stored."""

    event_type: str
    subscriber: str
    max_attempts: int
    created_at: datetime
    updated_at: datetime


@dataclass(eq=False, repr=False)
class OpsStats(_Record):
    """The event ledger's dashboard figures: undispatched events, events and types of the
    last 24 hours, subscribers."""

    undispatched: int = 0
    total_24h: int = 0
    types_24h: int = 0
    subscribers: int = 0


@dataclass(eq=False, repr=False)
class DAGView(_Record):
    """A DAG run as stored: its state, failure policy and reason."""

    id: uuid.UUID
    name: str
    state: DAGState
    on_failure: OnFailurePolicy
    idempotency_key: str = ""
    failure_reason: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    completed_at: datetime | None = None


@dataclass(eq=False, repr=False)
class DAGFailure(_Record):
    """A DAG run whose failure policy was applied: the policy and its dead tasks' keys."""

    dag_id: uuid.UUID
    policy: OnFailurePolicy
    dead_tasks: list[str] = field(default_factory=list)


@dataclass(eq=False, repr=False)
class TaskResult(_Record):
    """A settled DAG task's outcome: its result, or ``skipped``."""

    result: JSON = None
    skipped: bool = False


@dataclass(eq=False, repr=False)
class WorkflowExecutionView(_Record):
    """A workflow execution as stored."""

    id: uuid.UUID
    name: str
    version: str
    state: WorkflowState
    business_idempotency_key: str = ""
    task_queue: str = "default"
    input: JSON = None
    result: JSON = None
    failure_reason: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    completed_at: datetime | None = None


@dataclass(eq=False, repr=False)
class WorkflowFilter(_Record):
    """Extension: filter for listing workflow executions (the Go contract has none)."""

    name: str = ""
    state: WorkflowState | None = None


@dataclass(eq=False, repr=False)
class HistoryEvent(_Record):
    """One entry of a workflow execution's history."""

    workflow_id: uuid.UUID
    seq: int
    type: str
    payload: JSON
    created_at: datetime


@dataclass(eq=False, repr=False)
class StalledWorkflow(_Record):
    """A running workflow execution with no live job left to run it."""

    id: uuid.UUID
    name: str


@dataclass(eq=False, repr=False)
class Wake(_Record):
    """A wake-up hint: a job of ``kind`` may be ready."""

    source: Source
    kind: str


@dataclass(eq=False, repr=False)
class Change(_Record):
    """A change hint for live views: what changed (an entity, a kind, a state), or a reset
    when hints were lost."""

    entity: ChangeEntity
    source: Source | None = None
    id: uuid.UUID | None = None
    dag_id: uuid.UUID | None = None
    kind: str = ""
    task_key: str = ""
    state: str = ""
    at: datetime | None = None
    bulk: bool = False
    count: int = 0


@dataclass(eq=False, repr=False)
class JobSearch(_Record):
    """Extension: the console's job filter (any source, meta and error-text filters)."""

    source: Source | None = None
    kind: str = ""
    state: JobState | None = None
    meta: dict[str, str] = field(default_factory=dict)
    error: str = ""
    """Case-insensitive substring of ``last_error``."""
    text: str = ""
    """Free text: a case-insensitive substring of the kind or ``last_error``, or of the
    id's hex digits (dashes ignored), any of the three."""
    event_id: uuid.UUID | None = None
    """The deliveries of one event."""
    run_id: uuid.UUID | None = None
    """The operation jobs of one workflow execution."""
    dag_id: uuid.UUID | None = None
    """The tasks of one DAG run."""
    payload: Any = None
    """JSON containment of the job's payload, PostgreSQL's jsonb ``@>`` (every key of an
    object present with a contained value, every element of an array in the job's
    array); None: no payload filter."""
    older_than: timedelta | None = None
    """Enqueued longer ago than this, on the database's clock."""
    reverse: bool = False
    """``list_jobs``' order for the state the other way round (dead jobs newest first);
    pages after a cursor must keep the same direction."""


@dataclass(eq=False, repr=False)
class JobTarget(_Record):
    """Extension: what a bulk verb reads of a job to plan and check it (``job_targets``):
    the columns as stored, nothing decoded."""

    id: uuid.UUID
    source: str
    state: str
    kind: str


@dataclass(eq=False, repr=False)
class SchemaStatus(_Record):
    """Extension: what ``qctl db status`` reports."""

    backend: str
    schema: str
    applied_version: int
    expected_version: int
    pending_versions: list[int] = field(default_factory=list)
    change_triggers: bool = False
    push: bool = False
    location: str = ""
    channel: str = ""
    """PostgreSQL: the wake NOTIFY channel, derived from the schema as azync's
    ``WithSchema`` derives it (``azync_<schema>``); a Go deployment must use the same."""
    console_indexes: list[str] = field(default_factory=list)
    """The console's own opt-in indexes present (``qctl db tune``; PostgreSQL)."""
    invalid_indexes: list[str] = field(default_factory=list)
    """PostgreSQL: the schema's indexes a cancelled ``CREATE INDEX CONCURRENTLY`` left
    invalid (or being built right now); ``migrate`` rebuilds azync's."""
    autovacuum: bool | None = None
    """PostgreSQL: whether autovacuum vacuums ``azync_jobs`` (the server's setting and
    the table's own). Without a vacuum, every lease walks the pending-index entries of
    the jobs leased before it, and the lease rate falls as jobs are processed. None on
    SQLite, which has no such upkeep, and before the table exists."""
    jobs_dead_rows: int | None = None
    """PostgreSQL: dead row versions in ``azync_jobs``, an estimate (the statistics')."""
    jobs_vacuumed_at: datetime | None = None
    """PostgreSQL: the last vacuum of ``azync_jobs``, manual or automatic; None when none
    is on record."""


# What ``from qctl_store import *`` exports: the contract's types and constants.
__all__ = [
    name
    for name, value in list(globals().items())
    if not name.startswith("_")
    and (getattr(value, "__module__", None) == __name__ or name.isupper())
]
