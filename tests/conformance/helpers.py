"""Shared helpers of the conformance suites (store, DAG, workflow, changes).

They mirror azync's ``driver/drivertest/conformance.go`` helpers so the Python suites
read like the Go ones: ``dequeue_n`` leases with no runtime max-attempts override,
``enqueue_due`` enqueues an immediately due job and requires it inserted, the DAG
helpers lease exactly one task of a kind. Every suite shares one store per module
(the ``store`` fixture), so tests stay apart by unique kinds and names, and global
counts asserted exactly must not be disturbed by earlier tests.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from qctl_kit.streams import Subscription
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import (
    JSON,
    KIND_SIGNAL,
    KIND_SLEEP,
    Change,
    ChangeEntity,
    DAGFailure,
    DAGParams,
    DAGTask,
    DAGView,
    DequeueParams,
    EnqueueParams,
    Job,
    JobFilter,
    JobState,
    Source,
    Subscriber,
)

AnyStore = PostgresStore | SqliteStore
"""Either backend: both implement every interface of the contract."""

T = TypeVar("T")

# Timing constants of azync's suites (``driver/drivertest/conformance.go``).
REAP_LEASE = timedelta(milliseconds=40)
"""A lease short enough to expire within a test."""
REAP_WAIT = 0.200
"""Seconds to sleep so a REAP_LEASE lease is past due on any clock."""
TICK = 0.004
"""Seconds between writes so backend-stamped instants are strictly ordered."""
CHANGE_WAIT = 5.0
"""Seconds allowed for each change-hint wait."""
MINUTE = timedelta(minutes=1)

_seq = itertools.count(1)


def unique(prefix: str) -> str:
    """A kind/subscriber/DAG name no other test of the process uses."""
    return f"{prefix}_{next(_seq)}_{uuid.uuid4().hex[:6]}"


def host_now() -> datetime:
    """The test process's clock (Go's ``time.Now()``), aware UTC."""
    return datetime.now(UTC)


# --- change hints (changes_conformance.go) ------------------------------------------------


def await_change(sub: Subscription[Change], what: str, pred: Callable[[Change], bool]) -> Change:
    """Drain ``sub`` until ``pred`` matches (Go's ``awaitChange``)."""
    deadline = time.monotonic() + CHANGE_WAIT
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out waiting for {what}")
        change = sub.get(timeout=remaining)
        if change is None:
            if sub.closed:
                raise AssertionError(f"change stream closed while waiting for {what}")
            continue
        if pred(change):
            return change


def is_reset(c: Change) -> bool:
    return c.entity == ChangeEntity.RESET


# One statement inserting N pending queue jobs of a kind, as another session would (the
# bulk rule counts rows per statement). PostgreSQL takes (kind, N), SQLite (N, kind).
PG_INSERT_QUEUE_JOBS = """
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload, enqueued_at)
    SELECT gen_random_uuid(), 'queue', %s, 'pending', now(), 1, '{}'::jsonb, now()
    FROM generate_series(1, %s)
"""
SQLITE_INSERT_QUEUE_JOBS = """
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload,
                            enqueued_at, created_at, updated_at)
    SELECT lower(
               hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
               substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) ||
               '-' || hex(randomblob(6))),
           'queue', ?, 'pending', 0, 1, '{}', 0, 0, 0
    FROM n
"""


# --- queue helpers (conformance.go) -------------------------------------------------------


def enqueue_due(store: AnyStore, kind: str, **params: object) -> uuid.UUID:
    """Enqueue ``{ID: new, Kind, Payload: {}}`` (no RunAt, no Delay); must be inserted."""
    p = EnqueueParams(kind=kind, payload={}, **params)  # type: ignore[arg-type]
    assert store.enqueue(p) is True, f"enqueue of {kind!r} was not inserted"
    return p.id


def dequeue_n(
    store: AnyStore, source: Source, kind: str, limit: int, lease: timedelta = MINUTE
) -> list[Job]:
    """``DequeueBatch(source, {Kind, Limit, Lease})`` with no runtime budget override."""
    return store.dequeue_batch(source, DequeueParams(kind=kind, limit=limit, lease=lease))


def subscribe(store: AnyStore, name: str, event_type: str, max_attempts: int = 3) -> None:
    store.register_subscriber(
        Subscriber(name=name, event_type=event_type, max_attempts=max_attempts)
    )


def lease_one(store: AnyStore, source: Source, kind: str, lease: timedelta = MINUTE) -> Job:
    """Lease exactly one due job of ``kind`` (fails the test otherwise)."""
    leased = dequeue_n(store, source, kind, 1, lease)
    assert len(leased) == 1, f"expected one due pending {source} job of kind {kind!r}"
    return leased[0]


def token(job: Job) -> uuid.UUID:
    assert job.lease_token is not None, "a leased job carries a lease token"
    return job.lease_token


def job_ids(jobs: Iterable[Job]) -> list[uuid.UUID]:
    return [j.id for j in jobs]


def list_ids(
    store: AnyStore, source: Source, kind: str, state: JobState | None = None
) -> list[uuid.UUID]:
    """``ListJobs(source, {Kind, State}, 0, 0)``: every match, in the state's order."""
    jobs, _ = store.list_jobs(source, JobFilter(kind=kind, state=state), 0, 0)
    return job_ids(jobs)


def enqueue_spaced(store: AnyStore, kind: str, n: int) -> list[uuid.UUID]:
    """``n`` due jobs whose enqueued_at are strictly ordered (TICK apart)."""
    ids = []
    for _ in range(n):
        ids.append(enqueue_due(store, kind))
        time.sleep(TICK)
    return ids


# --- DAG helpers (dag_conformance.go) -------------------------------------------------------


def wf_task(key: str, kind: str, **fields: object) -> DAGTask:
    """``{Key, Kind, Payload: {}, MaxAttempts: 3}`` plus any overrides."""
    base: dict[str, object] = {"payload": {}, "max_attempts": 3}
    base.update(fields)
    return DAGTask(key=key, kind=kind, **base)  # type: ignore[arg-type]


def wait_and_timer_dag(prefix: str) -> DAGParams:
    """A DAG of a wait task ``approve`` and an hour's timer ``cool``, each named after its
    key, named ``unique(prefix)``."""
    return DAGParams(
        name=unique(prefix),
        tasks=[
            DAGTask(key="approve", kind=KIND_SIGNAL),
            DAGTask(key="cool", kind=KIND_SLEEP, sleep_for=timedelta(hours=1)),
        ],
    )


def dag_task_by_key(store: AnyStore, dag_id: uuid.UUID, key: str) -> Job:
    for job in store.dag_tasks(dag_id):
        if job.task_key == key:
            return job
    raise AssertionError(f"task {key!r} not found in dag {dag_id}")


def dag_view(store: AnyStore, dag_id: uuid.UUID) -> DAGView:
    return store.get_dag(dag_id)


def finish_wf_task(store: AnyStore, kind: str, result: JSON = None) -> Job:
    """Lease the one due pending DAG task of ``kind`` and ack it with ``result``."""
    job = lease_one(store, Source.DAG, kind)
    store.ack_task_result(job.id, token(job), result)
    return job


def kill_wf_task(store: AnyStore, kind: str) -> Job:
    """Lease the one due pending DAG task of ``kind`` and dead-letter it ("boom")."""
    job = lease_one(store, Source.DAG, kind)
    store.dead(job.id, token(job), "boom")
    return job


def apply_policy_for(store: AnyStore, dag_id: uuid.UUID) -> DAGFailure:
    """Run one ApplyFailurePolicy pass (set-based) and return this DAG's report."""
    for failure in store.apply_failure_policy():
        if failure.dag_id == dag_id:
            return failure
    raise AssertionError(f"dag {dag_id} is not in the ApplyFailurePolicy report")


# --- waiting ----------------------------------------------------------------------------------


def wait_until(
    probe: Callable[[], T | None], timeout: float = CHANGE_WAIT, interval: float = 0.01
) -> T:
    """Poll ``probe`` until it returns a truthy value; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)
