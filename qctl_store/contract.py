"""The azync driver contract (seed 000) as Python abstract base classes.

A backend class inherits every interface it implements, so capability checks are plain
``isinstance(store, DAGStore)``. Method names are the Go names in snake_case; Go's
multiple returns are tuples in the same order; not-found is ``errors.NotFound``. The
contract is synchronous: every call may block on the database, so UIs run them in
worker threads.

``AdminStore`` holds the console's extensions that the Go contract lacks; both backends
implement them and the same tests cover them.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Generic, Self, TypeVar

from qctl_store.errors import InvalidInput
from qctl_store.streams import Subscription
from qctl_store.types import (
    JSON,
    AttemptError,
    Change,
    DAGDep,
    DAGFailure,
    DAGFilter,
    DAGParams,
    DAGSignalParams,
    DAGState,
    DAGView,
    DailyCount,
    Depths,
    DequeueParams,
    EnqueueParams,
    EventAdminRow,
    EventFilter,
    HistoryEvent,
    Job,
    JobFilter,
    JobPageCursor,
    JobSearch,
    JobState,
    NukeReport,
    OpsStats,
    PublishParams,
    ReplayFilter,
    ScheduleOperationParams,
    SchemaStatus,
    SignalParams,
    Source,
    StalledWorkflow,
    Subscriber,
    SubscriberView,
    TaskResult,
    ThroughputCount,
    Wake,
    WorkflowExecutionView,
    WorkflowFilter,
    WorkflowStartParams,
)

TTx = TypeVar("TTx")


class Store(ABC):
    """The mandatory queue, event-ledger and admin surface (Go ``driver.Store``)."""

    backend: str = ""
    """``"postgres"`` or ``"sqlite"``."""

    @abstractmethod
    def enqueue(self, p: EnqueueParams) -> bool: ...
    @abstractmethod
    def publish(self, p: PublishParams) -> int: ...
    @abstractmethod
    def register_subscriber(self, sub: Subscriber) -> None: ...
    @abstractmethod
    def subscribers(self, event_type: str) -> list[Subscriber]: ...
    @abstractmethod
    def delete_subscriber(self, name: str, event_type: str = "") -> int: ...
    @abstractmethod
    def dequeue_batch(self, source: Source, p: DequeueParams) -> list[Job]: ...
    @abstractmethod
    def ack(self, id: uuid.UUID, lease_token: uuid.UUID) -> None: ...
    @abstractmethod
    def reschedule(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, last_error: str
    ) -> None: ...
    @abstractmethod
    def dead(self, id: uuid.UUID, lease_token: uuid.UUID, last_error: str) -> None: ...
    @abstractmethod
    def skip(self, id: uuid.UUID, lease_token: uuid.UUID, reason: str) -> None: ...
    @abstractmethod
    def release(self, id: uuid.UUID, lease_token: uuid.UUID) -> None: ...
    @abstractmethod
    def snooze(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, deadline_error: str
    ) -> bool: ...
    @abstractmethod
    def extend_lease(self, id: uuid.UUID, lease_token: uuid.UUID, lease: timedelta) -> None: ...
    @abstractmethod
    def promote_due(self, source: Source, kinds: list[str]) -> int: ...
    @abstractmethod
    def reap_expired(self, source: Source, kinds: list[str], max_reaps: int) -> tuple[int, int]: ...
    @abstractmethod
    def vacuum_stats(self, source: Source, retention: timedelta) -> int: ...
    @abstractmethod
    def vacuum_idempotency(self, source: Source) -> int: ...
    @abstractmethod
    def vacuum_completed(self, source: Source, retention: timedelta) -> int: ...
    @abstractmethod
    def list_kinds(self, source: Source) -> list[str]: ...
    @abstractmethod
    def kind_depths(self, source: Source) -> dict[str, Depths]: ...
    @abstractmethod
    def stats(self, source: Source, kind: str) -> tuple[Depths, list[DailyCount]]: ...
    @abstractmethod
    def all_daily(self, source: Source) -> list[DailyCount]: ...
    @abstractmethod
    def list_jobs(
        self, source: Source, filter: JobFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[Job], int]: ...
    @abstractmethod
    def get_job(self, source: Source, id: uuid.UUID) -> Job: ...
    @abstractmethod
    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]: ...
    @abstractmethod
    def retry_job(self, source: Source, id: uuid.UUID) -> None: ...
    @abstractmethod
    def retry_all_dead(self, source: Source, kind: str = "") -> int: ...
    @abstractmethod
    def run_now(self, source: Source, id: uuid.UUID) -> None: ...
    @abstractmethod
    def archive_job(self, source: Source, id: uuid.UUID) -> None: ...
    @abstractmethod
    def pause_job(self, source: Source, id: uuid.UUID) -> None: ...
    @abstractmethod
    def resume_job(self, source: Source, id: uuid.UUID) -> None: ...
    @abstractmethod
    def delete_job(self, source: Source, id: uuid.UUID, state: JobState) -> None: ...
    @abstractmethod
    def delete_all(self, source: Source, kind: str, state: JobState) -> int: ...
    @abstractmethod
    def vacuum_dead(self, source: Source, kind: str, older_than: timedelta) -> int: ...
    @abstractmethod
    def nuke_all(self, source: Source) -> NukeReport: ...
    @abstractmethod
    def list_events(
        self, filter: EventFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[EventAdminRow], int]: ...
    @abstractmethod
    def get_event(self, id: uuid.UUID) -> EventAdminRow: ...
    @abstractmethod
    def list_subscriber_views(self, event_type: str = "") -> list[SubscriberView]: ...
    @abstractmethod
    def ops_stats(self) -> OpsStats: ...
    @abstractmethod
    def replay(self, filter: ReplayFilter) -> int: ...
    @abstractmethod
    def retain(self, before: datetime, limit: int) -> int: ...
    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DAGStore(ABC):
    """Declared DAG workflows with sagas, signals and pauses (Go ``driver.DAGStore``)."""

    @abstractmethod
    def create_dag(self, p: DAGParams) -> tuple[bool, uuid.UUID | None]: ...
    @abstractmethod
    def signal(self, p: DAGSignalParams) -> tuple[int, bool]: ...
    @abstractmethod
    def deliver_buffered_signals(self) -> int: ...
    @abstractmethod
    def find_dag_by_key(self, name: str, idempotency_key: str) -> uuid.UUID: ...
    @abstractmethod
    def pause_dag(self, id: uuid.UUID, reason: str) -> None: ...
    @abstractmethod
    def promote_unblocked(self) -> int: ...
    @abstractmethod
    def complete_due_sleeps(self) -> int: ...
    @abstractmethod
    def apply_failure_policy(self) -> list[DAGFailure]: ...
    @abstractmethod
    def complete_dags(self) -> int: ...
    @abstractmethod
    def task_results(
        self, dag_id: uuid.UUID, keys: list[str] | None = None
    ) -> dict[str, TaskResult]: ...
    @abstractmethod
    def ack_task_result(self, id: uuid.UUID, lease_token: uuid.UUID, result: JSON) -> None: ...
    @abstractmethod
    def get_dag(self, id: uuid.UUID) -> DAGView: ...
    @abstractmethod
    def list_dags(
        self, filter: DAGFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[DAGView], int]: ...
    @abstractmethod
    def dag_tasks(self, id: uuid.UUID) -> list[Job]: ...
    @abstractmethod
    def dag_deps(self, id: uuid.UUID) -> list[DAGDep]: ...
    @abstractmethod
    def dag_name_state_counts(self) -> dict[str, dict[DAGState, int]]: ...
    @abstractmethod
    def dag_task_counts(self, ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[JobState, int]]: ...
    @abstractmethod
    def retry_dag(self, id: uuid.UUID) -> None: ...
    @abstractmethod
    def compensate_dag(self, id: uuid.UUID) -> None: ...
    @abstractmethod
    def cancel_dag(self, id: uuid.UUID) -> None: ...
    @abstractmethod
    def vacuum_dags(self, retention: timedelta) -> int: ...


class WorkflowStore(ABC):
    """Workflow-as-code executions (Go ``driver.WorkflowStore``), plus a listing."""

    @abstractmethod
    def start_workflow(self, p: WorkflowStartParams) -> tuple[bool, uuid.UUID | None]: ...
    @abstractmethod
    def get_workflow_execution(self, id: uuid.UUID) -> WorkflowExecutionView: ...
    @abstractmethod
    def append_history(self, workflow_id: uuid.UUID, type: str, payload: JSON) -> int: ...
    @abstractmethod
    def list_history(self, workflow_id: uuid.UUID) -> list[HistoryEvent]: ...
    @abstractmethod
    def signal_workflow(self, p: SignalParams) -> bool: ...
    @abstractmethod
    def complete_workflow(self, id: uuid.UUID, result: JSON) -> None: ...
    @abstractmethod
    def fail_workflow(self, id: uuid.UUID, reason: str) -> None: ...
    @abstractmethod
    def cancel_workflow_execution(self, id: uuid.UUID) -> None: ...
    @abstractmethod
    def suspend_workflow(self, id: uuid.UUID, reason: str) -> None: ...
    @abstractmethod
    def resume_workflow(self, id: uuid.UUID) -> None: ...
    @abstractmethod
    def schedule_operation(self, p: ScheduleOperationParams) -> uuid.UUID: ...
    @abstractmethod
    def mark_uncertain(
        self, operation_job_id: uuid.UUID, lease_token: uuid.UUID, reason: str
    ) -> None: ...
    @abstractmethod
    def resolve_uncertain(
        self, operation_job_id: uuid.UUID, decision: str, result: JSON = None
    ) -> tuple[uuid.UUID, str]: ...
    @abstractmethod
    def schedule_task(
        self, workflow_id: uuid.UUID, kind: str, run_at: datetime | None = None
    ) -> None: ...
    @abstractmethod
    def vacuum_workflows(self, retention: timedelta) -> int: ...
    @abstractmethod
    def list_stalled_workflows(
        self, older_than: timedelta, limit: int = 0
    ) -> list[StalledWorkflow]: ...
    @abstractmethod
    def list_workflow_executions(
        self, filter: WorkflowFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[WorkflowExecutionView], int]:
        """Extension: executions newest first (created_at, id descending), with a total."""


class ChangeNotifier(ABC):
    @abstractmethod
    def changes(self) -> Subscription[Change] | None:
        """A stream of change hints, opening with a reset; None when poll-only."""


class Notifier(ABC):
    @abstractmethod
    def wake(self) -> Subscription[Wake] | None:
        """Wakeups signalled by enqueues and publishes; None when poll-only."""


class LeadershipLease(ABC):
    @abstractmethod
    def valid(self) -> bool: ...
    @abstractmethod
    def release(self) -> None: ...


class LeaseElector(ABC):
    @abstractmethod
    def acquire_leadership_lease(self, name: str) -> tuple[LeadershipLease | None, bool]: ...


class LeaderElector(ABC):
    @abstractmethod
    def acquire_leadership(self, name: str) -> tuple[Callable[[], None], bool]: ...


class Migrator(ABC):
    @abstractmethod
    def migrate(self) -> list[int]:
        """Bring the schema up to date; returns the versions applied now."""

    @abstractmethod
    def schema_status(self) -> SchemaStatus:
        """Extension: applied and expected versions, triggers, push or poll."""


class TxStore(ABC, Generic[TTx]):
    @abstractmethod
    def enqueue_tx(self, tx: TTx, p: EnqueueParams) -> bool: ...
    @abstractmethod
    def publish_tx(self, tx: TTx, p: PublishParams) -> int: ...


class TxDAGStore(ABC, Generic[TTx]):
    @abstractmethod
    def create_dag_tx(self, tx: TTx, p: DAGParams) -> tuple[bool, uuid.UUID | None]: ...


class BatchStore(ABC, Generic[TTx]):
    """Extension (not in the Go contract): the producer and the ack for many jobs in one
    statement and one transaction, for throughput. Each behaves exactly as the single
    call repeated in input order inside one transaction, so duplicates within a batch
    dedupe against the earlier ones; bad input anywhere raises ``InvalidInput`` (a
    repeated job id included) before anything is written."""

    @abstractmethod
    def enqueue_many(self, params: list[EnqueueParams]) -> list[bool]:
        """``enqueue`` of every job in one transaction; the inserted flags in input
        order. One stats bump per kind and one wake per distinct kind."""

    @abstractmethod
    def enqueue_many_tx(self, tx: TTx, params: list[EnqueueParams]) -> list[bool]:
        """``enqueue_many`` inside the caller's open transaction (as ``enqueue_tx``)."""

    @abstractmethod
    def ack_many(self, pairs: list[tuple[uuid.UUID, uuid.UUID]]) -> list[uuid.UUID]:
        """``ack`` of each ``(id, lease_token)``, fenced per job; the ids it settled, in
        input order. A pair that misses its fence is left out (where ``ack`` raises
        ``NotFound``) and does not stop the others."""


def distinct_job_ids(ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """A batch's job ids, refused when one repeats (the second insert of an id fails
    in the single call too, and a batch writes nothing on bad input)."""
    if len(set(ids)) != len(ids):
        raise InvalidInput("a job id appears more than once in the batch")
    return ids


def settled_in_order(
    pairs: list[tuple[uuid.UUID, uuid.UUID]], settled: set[uuid.UUID]
) -> list[uuid.UUID]:
    """The ids of ``pairs`` a batched settlement reported, in input order, each once."""
    out: list[uuid.UUID] = []
    seen: set[uuid.UUID] = set()
    for id, _ in pairs:
        if id in settled and id not in seen:
            seen.add(id)
            out.append(id)
    return out


class AdminStore(ABC):
    """Console reads the Go contract lacks. Both backends implement them."""

    @abstractmethod
    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]:
        """Ids of ``entity`` (job, dag, event, workflow) whose text form starts with
        ``prefix`` (lower-case hex with or without dashes), at most ``limit``."""

    @abstractmethod
    def find_job(self, id: uuid.UUID) -> Job:
        """A job of any source by id; NotFound when missing."""

    @abstractmethod
    def search_jobs(
        self, search: JobSearch, limit: int = 50, after: JobPageCursor | None = None
    ) -> list[Job]:
        """A page of jobs in ``list_jobs``' per-state order, keyset-paginated: ``after``
        is the cursor of the previous page's last row (see ``job_cursor``)."""

    @abstractmethod
    def count_jobs(self, search: JobSearch, exact: bool = False) -> tuple[int, bool]:
        """How many jobs match; ``(count, estimated)``. Without ``exact`` a backend may
        answer from statistics for huge unfiltered terminal states, and says so."""

    @abstractmethod
    def live_depths(self, source: Source) -> tuple[dict[str, Depths], bool]:
        """``kind_depths`` for a refresh loop: ``(depths, estimated)``. Pending,
        scheduled, active, dead and the oldest pending age are exact and read from each
        state's index; on a huge table succeeded and paused may come from statistics,
        and ``estimated`` says so. ``kind_depths`` stays the exact (Go) read."""

    @abstractmethod
    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        """Per-kind counts in buckets of ``bucket`` (whole seconds, aligned on the Unix
        epoch) covering the last ``window`` up to the database's now, zero-filled,
        ordered by kind then time; ``kind`` "" is every kind active in the window. Read
        from the job rows' timestamps on their indexes (see ``ThroughputCount`` for what
        each count covers), never the whole table."""

    def job_cursor(self, job: Job, state: JobState | None) -> JobPageCursor:
        """The keyset position of ``job`` in the listing order of ``state``."""
        return JobPageCursor(sort_key=job_sort_key(job, state), id=job.id)


def job_sort_key(job: Job, state: JobState | None) -> datetime | None:
    """The column ``list_jobs`` orders ``state`` by (see the Go ListJobs doc)."""
    if state in (JobState.SCHEDULED, JobState.PAUSED):
        return job.run_at
    if state == JobState.ACTIVE:
        return job.lease_until
    if state in (JobState.SUCCEEDED, JobState.SKIPPED):
        return job.completed_at
    return job.enqueued_at
