"""azync's driver contract (its Go package ``driver``: ``driver.go``, ``dag.go``,
``workflow.go``) as Python abstract base classes.

A backend class inherits every interface it implements, so capability checks are plain
``isinstance(store, DAGStore)``. Method names are the Go names in snake_case (each
docstring names the Go method it mirrors); Go's multiple returns are tuples in the same
order; Go's not-found error (``driver.IsNotFound``) is ``errors.NotFound``, raised
exactly where each docstring says. The contract is synchronous: every call may block on
the database, so UIs run them in worker threads.

Errors every method may raise besides the ones its docstring names: ``InvalidInput``
for an argument refused before anything is written (a wrong type, a naive datetime, a
negative duration or limit, an empty or oversized kind or name, JSON that cannot be
encoded); ``Unavailable`` when the database cannot be reached; ``SchemaNotMigrated``
when the azync tables are missing; on PostgreSQL ``Timeout`` when the session's
``lock_timeout`` or ``statement_timeout`` (``Config``, the DSN's options) cancelled a
statement. Every write may also raise ``ReadOnly`` (a store opened read-only) and
``Conflict`` (a serialization failure or deadlock, or a unique index refusing a row:
``UniqueViolation``); the transaction that raised it is rolled back.

``AdminStore`` and ``BatchStore`` hold the console's extensions that the Go contract
lacks; both backends implement them and the same tests cover them.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Generic, Self, TypeVar

from qctl_kit.errors import InvalidInput
from qctl_kit.streams import Subscription
from qctl_kit.throughput import ThroughputCount
from qctl_kit.values import PageCursor
from qctl_store.listing import order_for
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
    JobSearch,
    JobState,
    JobTarget,
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
    def enqueue(self, p: EnqueueParams) -> bool:
        """Insert one queue job (source ``queue``) and wake workers of its kind after
        commit. Go ``Store.Enqueue``.

        The job is scheduled at ``run_at`` (or now plus ``delay``) on the database clock:
        pending when that is due, scheduled otherwise. Returns ``inserted``: False when the
        idempotency key deduplicated it (a live job of the kind holds the key, or with
        ``idempotency_ttl`` an unexpired window does) and nothing was written. A repeated
        job id is a unique violation (``Conflict``)."""

    @abstractmethod
    def publish(self, p: PublishParams) -> int:
        """Append one event to the ledger and, in the same transaction, fan out one pending
        delivery job (source ``event``, kind = subscriber name) per subscriber registered
        for its type at that moment. Go ``Store.Publish``.

        Returns the number of deliveries created (0 with no subscriber). A repeated event
        id is a unique violation (``Conflict``)."""

    @abstractmethod
    def register_subscriber(self, sub: Subscriber) -> None:
        """Upsert the ``(name, event_type)`` registration; an existing one gets the new
        ``max_attempts``. Go ``Store.RegisterSubscriber``."""

    @abstractmethod
    def subscribers(self, event_type: str) -> list[Subscriber]:
        """The registrations of ``event_type``, ordered by name. Go ``Store.Subscribers``."""

    @abstractmethod
    def delete_subscriber(self, name: str, event_type: str = "") -> int:
        """Remove the ``(name, event_type)`` registration, or every registration of
        ``name`` when ``event_type`` is "". Returns how many were removed; deliveries
        already fanned out stay. Go ``Store.DeleteSubscriber``."""

    @abstractmethod
    def dequeue_batch(self, source: Source, p: DequeueParams) -> list[Job]:
        """Lease up to ``p.limit`` due pending jobs of ``(source, p.kind)`` for
        ``p.lease``, oldest ``run_at`` (then id) first; concurrent callers never lease the
        same job. Go ``Store.DequeueBatch``.

        Each returned job has its attempt incremented and a fresh ``lease_token``; on
        its first lease its retry budget is pinned for good, replaced by
        ``p.default_max_attempts`` when ``p.override_default`` is set and the producer
        did not set it explicitly. Event deliveries come back with ``Job.event`` read
        from the ledger. ``limit <= 0`` returns []."""

    @abstractmethod
    def ack(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        """Settle an active job as succeeded (kept as history, not deleted), clear its lease
        and count it processed. Go ``Store.Ack``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row (the lease
        expired and was reaped or re-leased, or the job was settled already)."""

    @abstractmethod
    def reschedule(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, last_error: str
    ) -> None:
        """Settle a failed attempt: the active job becomes scheduled at now plus
        ``delay`` with ``last_error``, and an attempt row is recorded. Go
        ``Store.Reschedule``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row."""

    @abstractmethod
    def dead(self, id: uuid.UUID, lease_token: uuid.UUID, last_error: str) -> None:
        """Settle a failed active job as dead (aborted or out of attempts) with
        ``last_error``, recording the final attempt. Go ``Store.Dead``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row."""

    @abstractmethod
    def skip(self, id: uuid.UUID, lease_token: uuid.UUID, reason: str) -> None:
        """Settle an active job as skipped: terminal, no result, ``reason`` kept as its last
        error, counted as processed. Go ``Store.Skip``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row."""

    @abstractmethod
    def release(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        """Hand a leased job back to pending without spending the attempt (attempt minus
        one, floored at zero) and without an attempt row. Go ``Store.Release``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row."""

    @abstractmethod
    def snooze(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, deadline_error: str
    ) -> bool:
        """Park an active job as scheduled at now plus ``delay`` without spending the
        attempt or recording one: the polling wait. Go ``Store.Snooze``.

        A job with a snooze budget gets its deadline stamped by the first snooze (now plus
        the budget); a snooze past that deadline dead-letters the job instead, recording
        the final attempt with ``deadline_error``. Returns ``deadlined``: True when the job
        was dead-lettered that way. Raises ``NotFound`` when ``lease_token`` no longer owns
        an active row."""

    @abstractmethod
    def extend_lease(self, id: uuid.UUID, lease_token: uuid.UUID, lease: timedelta) -> None:
        """Push an active job's lease out to now plus ``lease``. Go ``Store.ExtendLease``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row."""

    @abstractmethod
    def promote_due(self, source: Source, kinds: list[str]) -> int:
        """Move the due scheduled jobs of ``kinds`` (of ``source``) to pending; returns how
        many moved. An empty ``kinds`` does nothing. Go ``Store.PromoteDue``."""

    @abstractmethod
    def reap_expired(self, source: Source, kinds: list[str], max_reaps: int) -> tuple[int, int]:
        """Take back the active jobs of ``kinds`` whose lease expired: each returns to
        pending with its reap count incremented, or goes dead (recording an attempt) once
        the reap count reaches ``max_reaps``. Go ``Store.ReapExpired``.

        Returns ``(reaped, killed)``: every job taken back, and the subset of those that
        went dead."""

    @abstractmethod
    def vacuum_stats(self, source: Source, retention: timedelta) -> int:
        """Delete the daily stats rows of ``source`` older than ``retention`` (whole days,
        rounded up); returns the rows removed. A zero retention keeps everything. Go
        ``Store.VacuumStats``."""

    @abstractmethod
    def vacuum_idempotency(self, source: Source) -> int:
        """Delete the expired TTL-window idempotency keys of ``source``; returns the rows
        removed. Go ``Store.VacuumIdempotency``."""

    @abstractmethod
    def vacuum_completed(self, source: Source, retention: timedelta) -> int:
        """Delete the succeeded jobs of ``source`` completed more than ``retention`` ago;
        returns the rows removed. A zero retention keeps everything; DAG tasks and
        workflow jobs are never touched here (``vacuum_dags``, ``vacuum_workflows`` own
        them). Go ``Store.VacuumCompleted``."""

    @abstractmethod
    def list_kinds(self, source: Source) -> list[str]:
        """The distinct kinds of ``source`` with jobs or daily stats, sorted. Go
        ``Store.ListKinds``."""

    @abstractmethod
    def kind_depths(self, source: Source) -> dict[str, Depths]:
        """Per-kind state counts of ``source`` right now, exact, with each kind's oldest
        pending age. Kinds with no jobs are absent. Go ``Store.KindDepths``."""

    @abstractmethod
    def stats(self, source: Source, kind: str) -> tuple[Depths, list[DailyCount]]:
        """One kind's depths and its daily throughput. Go ``Store.Stats``.

        Returns ``(depths, daily)``: the kind's state counts now (zeros when it has no
        jobs), and one ``DailyCount`` per day of the last 30, oldest first,
        zero-filled."""

    @abstractmethod
    def all_daily(self, source: Source) -> list[DailyCount]:
        """The daily throughput of ``source`` summed over every kind: one ``DailyCount`` per
        day of the last 30, oldest first, zero-filled. Go ``Store.AllDaily``."""

    @abstractmethod
    def list_jobs(
        self, source: Source, filter: JobFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[Job], int]:
        """A page of the jobs of ``source`` matching ``filter``. Go ``Store.ListJobs``.

        Order by state: pending and dead by ``enqueued_at``, scheduled and paused by
        ``run_at``, active by ``lease_until`` (ascending), succeeded and skipped by
        ``completed_at`` descending, no state filter by ``enqueued_at`` descending; ties by
        id. ``limit <= 0`` is no limit, a negative offset is 0. Returns ``(jobs, total)``:
        the page, and how many jobs match in all."""

    @abstractmethod
    def get_job(self, source: Source, id: uuid.UUID) -> Job:
        """One job of ``source`` by id. Go ``Store.GetJob``.

        Raises ``NotFound`` when no job of that source has the id."""

    @abstractmethod
    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]:
        """The recorded failed attempts of one job of ``source``, oldest first ([] when
        there are none or the job does not exist). Go ``Store.JobAttempts``."""

    @abstractmethod
    def retry_job(self, source: Source, id: uuid.UUID) -> None:
        """Reset a dead job to pending now, its attempt and reap counts cleared. Go
        ``Store.RetryJob``.

        Raises ``NotFound`` when no job of ``source`` has the id or it is not dead."""

    @abstractmethod
    def retry_all_dead(self, source: Source, kind: str = "") -> int:
        """Reset every dead job of ``(source, kind)`` to pending now, counts cleared; ""
        means every kind of the source. Returns how many were reset. Go
        ``Store.RetryAllDead``."""

    @abstractmethod
    def run_now(self, source: Source, id: uuid.UUID) -> None:
        """Make one scheduled job due now (pending) and wake its workers: the early wake of
        a snoozed poll. Go ``Store.RunNow``.

        Raises ``NotFound`` when no job of ``source`` has the id or it is not scheduled."""

    @abstractmethod
    def archive_job(self, source: Source, id: uuid.UUID) -> None:
        """Force a pending or scheduled job to dead without running it. Go
        ``Store.ArchiveJob``.

        Raises ``NotFound`` when no job of ``source`` has the id or it is neither pending
        nor scheduled."""

    @abstractmethod
    def pause_job(self, source: Source, id: uuid.UUID) -> None:
        """Hold a pending or scheduled job out of the ready set (paused). Go
        ``Store.PauseJob``.

        Raises ``NotFound`` when no job of ``source`` has the id or it is neither pending
        nor scheduled."""

    @abstractmethod
    def resume_job(self, source: Source, id: uuid.UUID) -> None:
        """Return a paused job to pending, or to scheduled while its ``run_at`` is in the
        future. Go ``Store.ResumeJob``.

        Raises ``NotFound`` when no job of ``source`` has the id or it is not paused."""

    @abstractmethod
    def delete_job(self, source: Source, id: uuid.UUID, state: JobState) -> None:
        """Delete one job of ``source`` that is in ``state`` (its attempt rows go with it).
        Go ``Store.DeleteJob``.

        Raises ``NotFound`` when no job of that source has the id in that state."""

    @abstractmethod
    def delete_all(self, source: Source, kind: str, state: JobState) -> int:
        """Delete every job of ``(source, kind)`` in ``state``; "" means every kind. Returns
        how many were deleted. Go ``Store.DeleteAll``."""

    @abstractmethod
    def vacuum_dead(self, source: Source, kind: str, older_than: timedelta) -> int:
        """Delete the dead jobs of ``(source, kind)`` enqueued more than ``older_than`` ago;
        "" means every kind. Returns how many were deleted. Go ``Store.VacuumDead``."""

    @abstractmethod
    def nuke_all(self, source: Source) -> NukeReport:
        """Delete every job, daily stats row and idempotency key of ``source`` (a
        development reset) in one transaction; the event ledger stays. Returns the
        counts of each as a ``NukeReport``. Go ``Store.NukeAll``."""

    @abstractmethod
    def list_events(
        self,
        filter: EventFilter,
        offset: int = 0,
        limit: int = 0,
        after: PageCursor | None = None,
    ) -> tuple[list[EventAdminRow], int]:
        """A page of the ledger events matching ``filter``, newest first (``occurred_at``,
        then id, descending), each with its delivery count. ``limit <= 0`` is no limit.
        Returns ``(events, total)``: the page, and how many events match in all. Go
        ``Store.ListEvents``.

        Extension (keyset paging for deep listings): ``after``, the ``PageCursor`` of the
        previous page's last row (``occurred_at`` and id), starts the page strictly after
        that row, with no offset to walk; ``total`` still counts every match."""

    @abstractmethod
    def event_page(
        self, filter: EventFilter, limit: int, after: PageCursor | None = None
    ) -> list[EventAdminRow]:
        """Extension: ``list_events``' page without its total, for a walk past the first
        page (the count reads every match)."""

    @abstractmethod
    def get_event(self, id: uuid.UUID) -> EventAdminRow:
        """One ledger event by id, with its delivery count. Go ``Store.GetEvent``.

        Raises ``NotFound`` when no event has the id."""

    @abstractmethod
    def list_subscriber_views(self, event_type: str = "") -> list[SubscriberView]:
        """The subscriber registrations of ``event_type`` ("" for all), ordered by event
        type then name, with their registration times. Go ``Store.ListSubscriberViews``."""

    @abstractmethod
    def ops_stats(self) -> OpsStats:
        """The event-ledger summary: undispatched events (no delivery at all), events and
        distinct types of the last 24 hours, and registered subscribers. Go
        ``Store.OpsStats``."""

    @abstractmethod
    def replay(self, filter: ReplayFilter) -> int:
        """Fan the ledger events matching ``filter`` out again as fresh pending deliveries
        flagged ``replay``, to the matching subscribers registered now; the limit caps the
        events, oldest id first. Returns the number of deliveries created. Go
        ``Store.Replay``."""

    @abstractmethod
    def retain(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` ledger events that occurred before ``before`` (exclusive)
        and whose deliveries all ended (succeeded or dead), oldest first; those deliveries
        go with them. Events with any other delivery are kept. Returns the events removed;
        ``limit <= 0`` removes none. Go ``Store.Retain``."""

    @abstractmethod
    def close(self) -> None:
        """Release the pool or connections and stop the listener threads; idempotent. A
        store is unusable afterwards. Go ``Store.Close``."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DAGStore(ABC):
    """Declared DAG workflows with sagas, signals and pauses (Go ``driver.DAGStore``)."""

    @abstractmethod
    def create_dag(self, p: DAGParams) -> tuple[bool, uuid.UUID | None]:
        """Insert a DAG's header, tasks and dependency edges in one transaction and wake
        workers for its runnable tasks. Go ``DAGStore.CreateDAG``.

        A task with dependencies starts blocked; a root task pending, except a root
        ``$sleep`` (scheduled at now plus its sleep) and a root ``$signal`` (waiting).
        Returns ``(inserted, existing_id)``: ``(True, None)`` when created; ``(False, id)``
        when a live DAG of the same name holds ``p.idempotency_key``, and nothing was
        written. Raises ``InvalidInput`` for a malformed DAG (duplicate or reserved task
        keys, an edge to an unknown task, a cycle) and ``Conflict`` for a taken DAG id, or
        when the DAG holding the key settled during the insert (retry then)."""

    @abstractmethod
    def signal(self, p: DAGSignalParams) -> tuple[int, bool]:
        """Deliver one named signal to a live DAG, or buffer it. Go ``DAGStore.Signal``.

        The signal enters the DAG's inbox (dropped when ``p.message_id`` was seen before),
        then a waiting ``$signal`` task of that name completes with the payload as its
        result and a scheduled ``$sleep`` of that name wakes now. Returns ``(delivered,
        deduplicated)``: how many tasks it completed or woke now (0 with ``deduplicated``
        False means buffered, for ``deliver_buffered_signals``), and whether the message id
        was a repeat (then nothing else happened). Raises ``NotFound`` for a missing or
        terminal DAG."""

    @abstractmethod
    def deliver_buffered_signals(self) -> int:
        """Hand each buffered signal to its task once that task is deliverable (a waiting
        ``$signal`` or scheduled ``$sleep`` of a running or compensating DAG), oldest
        signal first per task. Returns how many were delivered. Go
        ``DAGStore.DeliverBufferedSignals``."""

    @abstractmethod
    def find_dag_by_key(self, name: str, idempotency_key: str) -> uuid.UUID:
        """The id of the live DAG (running, suspended, compensating or paused) of ``name``
        holding ``idempotency_key``. Go ``DAGStore.FindDAGByKey``.

        Raises ``NotFound`` when no live DAG holds it (a terminal DAG frees its key)."""

    @abstractmethod
    def pause_dag(self, id: uuid.UUID, reason: str) -> None:
        """Freeze a running DAG: the header becomes paused with ``reason`` and its pending
        and scheduled tasks paused, atomically; active tasks settle on their own and
        signals buffer. ``retry_dag`` resumes it. Go ``DAGStore.PauseDAG``.

        Raises ``NotFound`` for a missing DAG or one that is not running."""

    @abstractmethod
    def promote_unblocked(self) -> int:
        """Release every blocked task whose dependencies are all satisfied (succeeded or
        skipped; dead or cancelled too for an ``ignore_dead_deps`` task): ``$signal`` to
        waiting, ``$sleep`` to scheduled at now plus its sleep, others to pending. Returns
        how many moved. Go ``DAGStore.PromoteUnblocked``."""

    @abstractmethod
    def complete_due_sleeps(self) -> int:
        """Complete every due scheduled ``$sleep`` task of a running DAG as succeeded,
        running no handler; returns how many. Go ``DAGStore.CompleteDueSleeps``."""

    @abstractmethod
    def apply_failure_policy(self) -> list[DAGFailure]:
        """Apply each running DAG's failure policy once it has a dead task that triggers
        it (a dead task is tolerated only when it has dependents and all of them ignore
        dead deps). ``cancel`` cancels the unsettled tasks, inserts the compensation chain
        and moves the DAG to compensating (failed with nothing to compensate);
        ``suspend`` parks it as suspended. Go ``DAGStore.ApplyFailurePolicy``.

        Returns one ``DAGFailure`` per DAG acted on: its id, the policy applied and the
        sorted dead task keys."""

    @abstractmethod
    def complete_dags(self) -> int:
        """Settle the DAGs whose work is finished: a running DAG whose tasks all ended
        becomes succeeded, or failed when every dead task was tolerated; a compensating
        DAG whose chain ended becomes failed (cancelled when a cancel asked for it), or
        suspended when a compensation died. Returns how many DAGs moved. Go
        ``DAGStore.CompleteDAGs``."""

    @abstractmethod
    def task_results(
        self, dag_id: uuid.UUID, keys: list[str] | None = None
    ) -> dict[str, TaskResult]:
        """The outcomes of the DAG's succeeded and skipped tasks by task key, only ``keys``
        when given; a task not settled yet is absent. A ``TaskResult`` has the result of a
        succeeded task (None when it returned nothing) or ``skipped`` True. Go
        ``DAGStore.TaskResults``."""

    @abstractmethod
    def ack_task_result(self, id: uuid.UUID, lease_token: uuid.UUID, result: JSON) -> None:
        """``ack`` a leased DAG task and store ``result`` as its output, atomically. Go
        ``DAGStore.AckTaskResult``.

        Raises ``NotFound`` when ``lease_token`` no longer owns an active row."""

    @abstractmethod
    def get_dag(self, id: uuid.UUID) -> DAGView:
        """One DAG header by id. Go ``DAGStore.GetDAG``.

        Raises ``NotFound`` when no DAG has the id."""

    @abstractmethod
    def list_dags(
        self,
        filter: DAGFilter,
        offset: int = 0,
        limit: int = 0,
        after: PageCursor | None = None,
    ) -> tuple[list[DAGView], int]:
        """A page of DAG headers matching ``filter``, newest first (``created_at``, then id,
        descending); ``limit <= 0`` is no limit. Returns ``(dags, total)``: the page, and
        how many match in all. Go ``DAGStore.ListDAGs``.

        Extension (keyset paging for deep listings): ``after``, the ``PageCursor`` of the
        previous page's last row (``created_at`` and id), starts the page strictly after
        that row, with no offset to walk; ``total`` still counts every match."""

    @abstractmethod
    def dag_page(
        self, filter: DAGFilter, limit: int, after: PageCursor | None = None
    ) -> list[DAGView]:
        """Extension: ``list_dags``' page without its total, for a walk past the first
        page (the count reads every match)."""

    @abstractmethod
    def dag_tasks(self, id: uuid.UUID) -> list[Job]:
        """Every task job of the DAG, compensation tasks included, in creation order. Go
        ``DAGStore.DAGTasks``.

        Raises ``NotFound`` when no DAG has the id."""

    @abstractmethod
    def dag_deps(self, id: uuid.UUID) -> list[DAGDep]:
        """Every dependency edge of the DAG (declared ones and the compensation chain's),
        ordered by ``(task_key, depends_on_key)``; [] for an unknown id. Go
        ``DAGStore.DAGDeps``."""

    @abstractmethod
    def dag_name_state_counts(self) -> dict[str, dict[DAGState, int]]:
        """How many DAGs each definition name has per state, over every DAG retained;
        absent names and states mean zero. Go ``DAGStore.DAGNameStateCounts``."""

    @abstractmethod
    def dag_task_counts(self, ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[JobState, int]]:
        """Per requested DAG, how many of its tasks are in each job state; DAGs without
        tasks (unknown ids included) are absent, and [] asks nothing. Go
        ``DAGStore.DAGTaskCounts``."""

    @abstractmethod
    def retry_dag(self, id: uuid.UUID) -> None:
        """Resume a non-terminal DAG: dead tasks back to pending with fresh counts (only
        the compensation tasks once a chain exists), paused tasks released, and a
        suspended or paused DAG back to running, or to compensating when a chain exists.
        Go ``DAGStore.RetryDAG``.

        Raises ``NotFound`` for a missing or terminal DAG."""

    @abstractmethod
    def compensate_dag(self, id: uuid.UUID) -> None:
        """Start compensation by hand on a running or suspended DAG, as the ``cancel``
        policy does: cancel the unsettled tasks, insert the compensation chain, move to
        compensating (failed with nothing to compensate). Go ``DAGStore.CompensateDAG``.

        Raises ``NotFound`` for a missing DAG or one in any other state."""

    @abstractmethod
    def cancel_dag(self, id: uuid.UUID) -> None:
        """Cancel a non-terminal DAG without compensating: its unsettled tasks are
        cancelled and the DAG becomes cancelled; a compensating DAG finishes compensating
        first and then settles as cancelled. Go ``DAGStore.CancelDAG``.

        Raises ``NotFound`` for a missing or terminal DAG."""

    @abstractmethod
    def vacuum_dags(self, retention: timedelta) -> int:
        """Delete the terminal DAGs completed more than ``retention`` ago, with their tasks,
        edges and inbox; returns how many DAGs. A zero retention keeps everything. Go
        ``DAGStore.VacuumDAGs``."""


class WorkflowStore(ABC):
    """Workflow-as-code executions (Go ``driver.WorkflowStore``), plus a listing."""

    @abstractmethod
    def start_workflow(self, p: WorkflowStartParams) -> tuple[bool, uuid.UUID | None]:
        """Insert a workflow execution (running), its ``WorkflowStarted`` history event and
        its first workflow task, in one transaction. Go ``WorkflowStore.StartWorkflow``.

        Returns ``(inserted, existing_id)``: ``(True, None)`` when started; ``(False,
        id)`` when a live (running or suspended) execution of the same name holds the
        business idempotency key, and nothing was written."""

    @abstractmethod
    def get_workflow_execution(self, id: uuid.UUID) -> WorkflowExecutionView:
        """One workflow execution by id. Go ``WorkflowStore.GetWorkflowExecution``.

        Raises ``NotFound`` when no execution has the id."""

    @abstractmethod
    def append_history(self, workflow_id: uuid.UUID, type: str, payload: JSON) -> int:
        """Append one event to an execution's history; returns its sequence number. An
        operation result (``OperationCompleted``/``OperationFailed``) whose payload
        carries an ``execution_key`` already recorded is not appended again: the recorded
        sequence number is returned. Go ``WorkflowStore.AppendHistory``.

        Raises ``NotFound`` for a missing execution."""

    @abstractmethod
    def list_history(self, workflow_id: uuid.UUID) -> list[HistoryEvent]:
        """An execution's history in sequence order. Go ``WorkflowStore.ListHistory``.

        Raises ``NotFound`` for a missing execution."""

    @abstractmethod
    def signal_workflow(self, p: SignalParams) -> bool:
        """Add a signal to an execution's inbox, record a ``SignalReceived`` history event
        and, unless the execution is terminal, schedule a workflow task. Go
        ``WorkflowStore.SignalWorkflow``.

        Returns ``inserted``: False when ``p.message_id`` was seen before (nothing
        written). Raises ``NotFound`` for a missing execution."""

    @abstractmethod
    def complete_workflow(self, id: uuid.UUID, result: JSON) -> None:
        """Settle an execution as succeeded with ``result``, from any state. Go
        ``WorkflowStore.CompleteWorkflow``.

        Raises ``NotFound`` for a missing execution."""

    @abstractmethod
    def fail_workflow(self, id: uuid.UUID, reason: str) -> None:
        """Settle an execution as failed with ``reason``, from any state. Go
        ``WorkflowStore.FailWorkflow``.

        Raises ``NotFound`` for a missing execution."""

    @abstractmethod
    def cancel_workflow_execution(self, id: uuid.UUID) -> None:
        """Settle a non-terminal execution as cancelled. Go
        ``WorkflowStore.CancelWorkflowExecution``.

        Raises ``NotFound`` for a missing or terminal execution."""

    @abstractmethod
    def suspend_workflow(self, id: uuid.UUID, reason: str) -> None:
        """Suspend a non-terminal execution with ``reason``. Go
        ``WorkflowStore.SuspendWorkflow``.

        Raises ``NotFound`` for a missing or terminal execution."""

    @abstractmethod
    def resume_workflow(self, id: uuid.UUID) -> None:
        """Return a suspended execution to running, its failure reason cleared. Go
        ``WorkflowStore.ResumeWorkflow``.

        Raises ``NotFound`` for a missing execution or one that is not suspended."""

    @abstractmethod
    def schedule_operation(self, p: ScheduleOperationParams) -> uuid.UUID:
        """Insert an operation job (source ``workflow``) for an execution, pending or
        scheduled by ``p.run_at``; with ``p.execution_key`` an existing live operation job
        of the execution holding that key is returned instead. Returns the job id. Go
        ``WorkflowStore.ScheduleOperation``.

        Raises ``NotFound`` for a missing execution, and ``Conflict`` when a live job of
        another execution holds the execution key."""

    @abstractmethod
    def mark_uncertain(
        self, operation_job_id: uuid.UUID, lease_token: uuid.UUID, reason: str
    ) -> None:
        """Move a leased operation job to uncertain with ``reason`` (fenced on its lease)
        and suspend its execution. Go ``WorkflowStore.MarkUncertain``.

        Raises ``NotFound`` when the lease no longer owns an active operation job, or its
        execution could not be suspended (missing or terminal); the job update stands in
        that second case, as in azync."""

    @abstractmethod
    def resolve_uncertain(
        self, operation_job_id: uuid.UUID, decision: str, result: JSON = None
    ) -> tuple[uuid.UUID, str]:
        """Apply an operator's decision (``complete`` with ``result``, ``fail`` or
        ``retry``) to an uncertain operation job and resume its suspended execution. Go
        ``WorkflowStore.ResolveUncertain``.

        Returns ``(workflow_id, workflow_name)``: the execution the job belongs to, and the
        workflow name from the job's meta ("" when absent), so the caller can
        ``schedule_task``. Raises ``NotFound`` when the job is not an uncertain operation
        job, and ``InvalidInput`` for an unknown decision."""

    @abstractmethod
    def schedule_task(
        self, workflow_id: uuid.UUID, kind: str, run_at: datetime | None = None
    ) -> None:
        """Insert one workflow task job (source ``workflow``) of ``kind`` for an execution,
        at ``run_at`` (None: now). Go ``WorkflowStore.ScheduleTask``.

        Raises ``NotFound`` for a missing execution."""

    @abstractmethod
    def vacuum_workflows(self, retention: timedelta) -> int:
        """Delete the terminal executions completed more than ``retention`` ago, with their
        history, signals, timers and jobs; returns how many executions. A zero retention
        keeps everything. Go ``WorkflowStore.VacuumWorkflows``."""

    @abstractmethod
    def list_stalled_workflows(
        self, older_than: timedelta, limit: int = 0
    ) -> list[StalledWorkflow]:
        """Up to ``limit`` running executions updated at least ``older_than`` ago
        (inclusive) with no live job (pending, scheduled, active or uncertain) left to run
        them, oldest update first; ``limit <= 0`` takes azync's default of 100. Go
        ``WorkflowStore.ListStalledWorkflows``."""

    @abstractmethod
    def list_workflow_executions(
        self,
        filter: WorkflowFilter,
        offset: int = 0,
        limit: int = 0,
        after: PageCursor | None = None,
    ) -> tuple[list[WorkflowExecutionView], int]:
        """Extension (no Go counterpart): a page of executions matching ``filter``, newest
        first (``created_at``, then id, descending); ``limit <= 0`` is no limit. Returns
        ``(executions, total)``: the page, and how many match in all. ``after``: the
        ``PageCursor`` of the previous page's last row (``created_at`` and id), as for
        ``list_dags``."""

    @abstractmethod
    def execution_page(
        self, filter: WorkflowFilter, limit: int, after: PageCursor | None = None
    ) -> list[WorkflowExecutionView]:
        """Extension: ``list_workflow_executions``' page without its total, for a walk
        past the first page (the count reads every match)."""


class ChangeNotifier(ABC):
    @abstractmethod
    def changes(self) -> Subscription[Change] | None:
        """A stream of change hints (job, DAG and event rows changed), opening with a
        reset and announcing every possible gap with another reset; hints are
        best-effort and carry no payloads. None when the store is poll-only. Go
        ``ChangeNotifier.Changes``."""


class Notifier(ABC):
    @abstractmethod
    def wake(self) -> Subscription[Wake] | None:
        """A stream of wakeups, one per ``(source, kind)`` that gained ready work through
        an enqueue or publish. None when the store is poll-only. Go ``Notifier.Wake``."""


class LeadershipLease(ABC):
    @abstractmethod
    def valid(self) -> bool:
        """Whether this leadership is still held: a cheap check meant for every scheduler
        tick, not a re-acquire. Go ``LeadershipLease.Valid``."""

    @abstractmethod
    def release(self) -> None:
        """Give the leadership up; idempotent. Go ``LeadershipLease.Release``."""


class LeaseElector(ABC):
    @abstractmethod
    def acquire_leadership_lease(self, name: str) -> tuple[LeadershipLease | None, bool]:
        """Try to take the leadership ``name`` without waiting. Go
        ``LeaseElector.AcquireLeadershipLease``.

        Returns ``(lease, acquired)``: the held lease (check it with ``valid``, end it
        with ``release``) and True, or ``(None, False)`` when another instance leads."""


class LeaderElector(ABC):
    @abstractmethod
    def acquire_leadership(self, name: str) -> tuple[Callable[[], None], bool]:
        """Try to take the leadership ``name`` without waiting. Go
        ``LeaderElector.AcquireLeadership``.

        Returns ``(release, acquired)``: a function that gives the leadership up (a no-op
        when not acquired), and whether it was acquired."""


class Migrator(ABC):
    @abstractmethod
    def migrate(self) -> list[int]:
        """Bring the schema up to date under goose's migration lock; returns the versions
        applied now ([] when it was current). Go ``Migrator.Migrate``.

        Raises ``SchemaTooNew`` when the database is past the versions this release knows,
        and ``Conflict`` when another migration holds the lock too long."""

    @abstractmethod
    def schema_status(self) -> SchemaStatus:
        """Extension: the applied and expected schema versions, whether the change
        triggers are in place and whether change hints are pushed or polled."""

    @abstractmethod
    def require_schema(self) -> int:
        """Extension: the applied schema version, when it is the one this release knows
        (one read of the version table, then remembered by this store). The gate every
        console command passes before it touches the database.

        Raises ``SchemaTooNew`` or ``SchemaNotMigrated`` naming both versions otherwise."""


class TxStore(ABC, Generic[TTx]):
    @abstractmethod
    def enqueue_tx(self, tx: TTx, p: EnqueueParams) -> bool:
        """``enqueue`` inside the caller's open transaction on ``tx`` (a transactional
        outbox): the job and its wake commit or roll back with the caller's writes. Go
        ``TxStore.EnqueueTx``.

        Raises ``InvalidInput`` when ``tx`` is not inside a transaction."""

    @abstractmethod
    def publish_tx(self, tx: TTx, p: PublishParams) -> int:
        """``publish`` inside the caller's open transaction on ``tx``; the event, its
        deliveries and their wakes commit with the caller's writes. Go
        ``TxStore.PublishTx``.

        Raises ``InvalidInput`` when ``tx`` is not inside a transaction."""


class TxDAGStore(ABC, Generic[TTx]):
    @abstractmethod
    def create_dag_tx(self, tx: TTx, p: DAGParams) -> tuple[bool, uuid.UUID | None]:
        """``create_dag`` inside the caller's open transaction on ``tx``; same returns.
        Go ``TxDAGStore.CreateDAGTx``.

        Raises ``InvalidInput`` when ``tx`` is not inside a transaction."""


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
    def count_replay(self, filter: ReplayFilter) -> tuple[int, int]:
        """What ``replay(filter)`` would create, written nothing: the ledger events it
        re-delivers (those with at least one matching subscriber, among the events the
        limit caps) and the deliveries it creates."""

    @abstractmethod
    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]:
        """Ids of ``entity`` (job, dag, event, workflow) whose text form starts with
        ``prefix`` (lower-case hex with or without dashes), at most ``limit``."""

    @abstractmethod
    def find_job(self, id: uuid.UUID) -> Job:
        """A job of any source by id; NotFound when missing."""

    @abstractmethod
    def search_jobs(
        self,
        search: JobSearch,
        limit: int = 50,
        after: PageCursor | None = None,
        payload: bool = True,
    ) -> list[Job]:
        """A page of jobs in ``list_jobs``' per-state order, except that pending jobs
        come in lease order ``(run_at, id)``, keyset-paginated: ``after`` is the cursor
        of the previous page's last row (see ``job_cursor``). Without ``payload`` the
        jobs' ``payload`` and ``result`` are None, never read from the database."""

    @abstractmethod
    def job_targets(
        self,
        search: JobSearch,
        states: Sequence[JobState],
        after: uuid.UUID | None = None,
        limit: int = 1000,
    ) -> list[JobTarget]:
        """A keyset page of the jobs ``search`` matches in one of ``states`` (its own
        ``state`` and order ignored), in id order after ``after``: what a bulk verb reads
        to plan, its ids and the columns it checks, nothing decoded."""

    @abstractmethod
    def job_targets_of(self, ids: Sequence[uuid.UUID]) -> list[JobTarget]:
        """``job_targets``' columns of those of ``ids`` that exist, in any order."""

    @abstractmethod
    def retry_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        """``retry_job`` on every one of ``ids`` that is a dead job of one of ``sources``,
        in one statement; the ids it reset."""

    @abstractmethod
    def run_now_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        """``run_now`` on every one of ``ids`` that is a scheduled job of one of
        ``sources`` (never a DAG's ``$sleep`` timer: only a scheduled timer completes), in
        one statement, then the wake of each kind; the ids it made due."""

    @abstractmethod
    def pause_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        """``pause_job`` on every one of ``ids`` that is a pending or scheduled job of
        one of ``sources``, in one statement; the ids it paused."""

    @abstractmethod
    def resume_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        """``resume_job`` on every one of ``ids`` that is a paused job of one of
        ``sources``, in one statement; the ids it resumed."""

    @abstractmethod
    def archive_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        """``archive_job`` on every one of ``ids`` that is a pending or scheduled job of
        one of ``sources``, in one statement; the ids it moved to dead."""

    @abstractmethod
    def delete_jobs(
        self, ids: Sequence[uuid.UUID], sources: Sequence[Source], states: Sequence[JobState]
    ) -> list[uuid.UUID]:
        """``delete_job`` on every one of ``ids`` that is a job of one of ``sources`` in
        one of ``states``, in one statement; the ids it deleted."""

    @abstractmethod
    def count_jobs(self, search: JobSearch, exact: bool = False) -> tuple[int, bool]:
        """How many jobs match; ``(count, estimated)``. Without ``exact`` a backend may
        answer from statistics for huge unfiltered terminal states, for dead and paused
        jobs beyond a count it stops at, and for paused jobs it has no index for; it
        says so."""

    @abstractmethod
    def live_depths(self, source: Source) -> tuple[dict[str, Depths], bool]:
        """``kind_depths`` for a refresh loop: ``(depths, estimated)``. Active,
        blocked, waiting and the oldest pending age are exact and read from each state's
        index; on a huge table succeeded, paused, uncertain and a kind's pending,
        scheduled and dead jobs at ``LIVE_DEPTH_CAP`` may come from statistics
        (``estimated_depths``), and ``estimated`` says so. ``kind_depths`` stays the
        exact (Go) read."""

    @abstractmethod
    def sources_depths(
        self, sources: Sequence[Source], exact: bool = False
    ) -> dict[Source, tuple[dict[str, Depths], bool]]:
        """``live_depths`` (``kind_depths`` with ``exact``, never estimated) of each of
        ``sources``, keyed in their order, in one read: on a table that is not huge one
        statement for them all, where a console listing every source would pay a round
        trip per source."""

    @abstractmethod
    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        """Per-kind counts in buckets of ``bucket`` (whole seconds, aligned on the Unix
        epoch) covering the last ``window`` up to the database's now, zero-filled,
        ordered by kind then time; ``kind`` "" is every kind active in the window. Read
        from the job rows' timestamps on their indexes (see ``ThroughputCount`` for what
        each count covers), never the whole table."""

    def throughput_omits(self) -> list[JobState]:
        """The states whose jobs ``throughput``'s enqueued leaves out, having no index to
        bound the read (``tune`` adds them): a console says its series is partial."""
        return []

    def listing_scans(self, state: JobState | None) -> bool:
        """Whether ``search_jobs`` over ``state`` across kinds has no index to walk and,
        on a huge table, reads all of it (a console says so before it asks)."""
        return False

    def console_indexes(self) -> list[str]:
        """The console's own opt-in indexes this database has (see ``tune``)."""
        return []

    def tune(self, dry_run: bool = False) -> list[str]:
        """Create the console's opt-in indexes that are missing; the names created (or,
        with ``dry_run``, that would be). A backend with none creates nothing."""
        return []

    def rebuild_indexes(self, names: list[str]) -> list[str]:
        """Rebuild those of the invalid indexes ``names`` (``SchemaStatus``) that the
        migrations define; the names rebuilt. A backend that builds no index
        concurrently never has any."""
        return []

    def job_cursor(self, job: Job, state: JobState | None) -> PageCursor:
        """The keyset position of ``job`` in the listing order of ``state``."""
        return PageCursor(sort_key=job_sort_key(job, state), id=job.id)


def job_sort_key(job: Job, state: JobState | None) -> datetime | None:
    """The column ``search_jobs`` orders ``state`` by (``listing.order_for`` with
    ``search``: ``list_jobs``' order, pending in lease order, dead in failure order)."""
    value: datetime | None = getattr(job, order_for(state, search=True)[0])
    return value


class ConsoleStore(
    Store, DAGStore, WorkflowStore, ChangeNotifier, LeaseElector, Migrator, AdminStore
):
    """What qctl's operations layer and dashboard need of an azync store: the contract's
    queue, DAG and workflow surfaces, change hints, leader leases, schema status and the
    console reads. Both backends are one."""


class AzyncStore(
    ConsoleStore,
    Notifier,
    LeaderElector,
    TxStore[TTx],
    TxDAGStore[TTx],
    BatchStore[TTx],
    Generic[TTx],
):
    """Every capability of the contract and its extensions over the backend's transaction
    handle ``TTx``: what ``PostgresStore`` and ``SqliteStore`` implement."""
