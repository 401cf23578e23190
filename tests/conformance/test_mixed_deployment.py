"""Rows qctl writes must be safe for Go azync workers sharing the database.

Every producer path writes the retry budget azync's own producers write (queue:
``queue/producer.go``, 25 unpinned; DAG tasks: ``dag/client.go``, 0 unpinned unless a task
names one, resolved on the DAG worker's first lease; workflow tasks 0 unpinned; operations
and event deliveries pinned). Wait and timer tasks carry their key as signal name, as
azync's DAG client sets it. ``vacuum_dead`` keeps the tasks of DAGs that are not
terminal, and ``retry_dag`` refuses a DAG whose task rows are gone.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from qctl_kit.errors import NotFound
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    KIND_SIGNAL,
    KIND_SLEEP,
    DAGDep,
    DAGParams,
    DAGSignalParams,
    DAGState,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    JobFilter,
    JobSearch,
    JobState,
    OnFailurePolicy,
    PublishParams,
    ScheduleOperationParams,
    Source,
    WorkflowStartParams,
)
from tests.conformance.helpers import (
    MINUTE,
    AnyStore,
    apply_policy_for,
    dag_task_by_key,
    dag_view,
    kill_wf_task,
    subscribe,
    unique,
    wait_and_timer_dag,
)
from tests.conformance.test_batch import caller_tx
from tests.conftest import raw_pg, raw_sqlite

GO_DEFAULT_MAX_ATTEMPTS = 25


def budget(store: AnyStore, id: uuid.UUID) -> tuple[int, bool]:
    job = store.find_job(id)
    return job.max_attempts, job.max_attempts_explicit


@contextlib.contextmanager
def raw_sql(store: AnyStore) -> Iterator[Callable[[str, str, str], object]]:
    """``run(pg_sql, sqlite_sql, id)`` on another session: rewrites rows as time would."""
    if isinstance(store, PostgresStore):
        with raw_pg(store.schema) as pg:
            yield lambda pg_sql, _lite, id: pg.execute(pg_sql, (id,))
    else:
        with raw_sqlite(store.path) as lite:
            yield lambda _pg, lite_sql, id: lite.execute(lite_sql, (id,))


def test_enqueue_without_budget_writes_the_go_producer_default(store: AnyStore) -> None:
    kind = unique("mix_budget")
    plain = EnqueueParams(kind=kind)
    zero = EnqueueParams(kind=kind, max_attempts=0)
    pinned = EnqueueParams(kind=kind, max_attempts=3, max_attempts_explicit=True)
    many = [EnqueueParams(kind=kind), EnqueueParams(kind=kind, max_attempts=0)]
    for p in (plain, zero, pinned):
        assert store.enqueue(p)
    assert store.enqueue_many(many) == [True, True]
    with caller_tx(store) as conn:
        in_tx = EnqueueParams(kind=kind)
        assert store.enqueue_tx(conn, in_tx)  # type: ignore[arg-type]

    for p in (plain, zero, *many, in_tx):
        assert budget(store, p.id) == (GO_DEFAULT_MAX_ATTEMPTS, False), p
    assert budget(store, pinned.id) == (3, True)

    # A Go queue worker registered without MaxRetries leases with no override: the job
    # keeps its 25, so a first failure is retried instead of dead-lettered.
    leased = store.dequeue_batch(
        Source.QUEUE,
        DequeueParams(kind=kind, limit=10, lease=MINUTE, default_max_attempts=7),
    )
    by_id = {j.id: j for j in leased}
    assert by_id[plain.id].max_attempts == GO_DEFAULT_MAX_ATTEMPTS
    assert by_id[pinned.id].max_attempts == 3


def test_other_producers_match_go(store: AnyStore) -> None:
    event_type = unique("mix_evt")
    subscriber = unique("mix_sub")
    subscribe(store, subscriber, event_type, max_attempts=4)
    event = PublishParams(type=event_type)
    assert store.publish(event) == 1
    (delivery,) = store.list_jobs(Source.EVENT, JobFilter(kind=subscriber))[0]
    assert (delivery.max_attempts, delivery.max_attempts_explicit) == (4, True)

    p = DAGParams(
        name=unique("mix_dag"),
        tasks=[DAGTask(key="a", kind=unique("mix_a")), DAGTask(key="b", kind="k", max_attempts=2)],
    )
    assert store.create_dag(p)[0]
    assert budget(store, dag_task_by_key(store, p.id, "a").id) == (0, False)
    assert budget(store, dag_task_by_key(store, p.id, "b").id) == (2, True)

    wf = WorkflowStartParams(name=unique("mix_wf"))
    assert store.start_workflow(wf)[0]
    op = store.schedule_operation(ScheduleOperationParams(workflow_id=wf.id, kind="op"))
    assert budget(store, op) == (GO_DEFAULT_MAX_ATTEMPTS, True)
    task = next(j for j in store.search_jobs(JobSearch(run_id=wf.id)) if j.id != op)
    assert (task.max_attempts, task.max_attempts_explicit) == (0, False)


def test_wait_and_timer_tasks_are_named_after_their_key(store: AnyStore) -> None:
    assert DAGTask(key="approve", kind=KIND_SIGNAL).signal_name == "approve"
    assert DAGTask(key="cool", kind=KIND_SLEEP).signal_name == "cool"
    assert DAGTask(key="x", kind=KIND_SIGNAL, signal_name="other").signal_name == "other"
    assert DAGTask(key="work", kind="k").signal_name == ""

    p = wait_and_timer_dag("mix_signal")
    assert store.create_dag(p)[0]
    assert dag_task_by_key(store, p.id, "approve").signal_name == "approve"
    assert dag_task_by_key(store, p.id, "cool").signal_name == "cool"
    delivered, _ = store.signal(DAGSignalParams(dag_id=p.id, name="approve", payload={"ok": 1}))
    assert delivered == 1
    assert dag_task_by_key(store, p.id, "approve").state == JobState.SUCCEEDED


def suspended_saga(store: AnyStore, lone: bool = False) -> tuple[uuid.UUID, uuid.UUID]:
    """A DAG a -> b (``lone``: a alone) whose task a died, suspended by its failure
    policy: the DAG's id and the dead task's."""
    kind_a = unique("mix_saga_a")
    p = DAGParams(
        name=unique("mix_saga"),
        tasks=[DAGTask(key="a", kind=kind_a, max_attempts=1)],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    if not lone:
        p.tasks.append(DAGTask(key="b", kind="mix_b"))
        p.deps.append(DAGDep(task_key="b", depends_on_key="a"))
    assert store.create_dag(p)[0]
    dead = kill_wf_task(store, kind_a)
    apply_policy_for(store, p.id)
    assert dag_view(store, p.id).state == DAGState.SUSPENDED
    return p.id, dead.id


def delete_job_row(store: AnyStore, id: uuid.UUID) -> None:
    """Delete a job row behind the store's back (a task row lost to a manual clean-up)."""
    with raw_sql(store) as run:
        run("DELETE FROM azync_jobs WHERE id = %s", "DELETE FROM azync_jobs WHERE id = ?", str(id))


def test_vacuum_dead_keeps_the_tasks_of_live_dags(store: AnyStore) -> None:
    dag_id, dead = suspended_saga(store)
    assert store.vacuum_dead(Source.DAG, "", timedelta(0)) >= 0
    assert store.find_job(dead).state == JobState.DEAD, "a suspended saga keeps its dead task"

    store.cancel_dag(dag_id)
    assert dag_view(store, dag_id).state == DAGState.CANCELLED
    assert store.vacuum_dead(Source.DAG, "", timedelta(0)) >= 1
    with pytest.raises(NotFound):
        store.find_job(dead)


def test_vacuum_dead_counts_age_from_the_death(store: AnyStore) -> None:
    kind = unique("mix_age")
    died_now, never_failed = EnqueueParams(kind=kind), EnqueueParams(kind=kind)
    for p in (died_now, never_failed):
        assert store.enqueue(p)
    leased = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=2, lease=MINUTE))
    for job in leased:
        assert job.lease_token is not None
        store.dead(job.id, job.lease_token, "boom")
    with raw_sql(store) as run:
        # Enqueued two days ago; one died just now, the other has no failed_at.
        for p in (died_now, never_failed):
            run(
                "UPDATE azync_jobs SET enqueued_at = now() - interval '2 days' WHERE id = %s",
                "UPDATE azync_jobs SET enqueued_at = enqueued_at - 172800000000 WHERE id = ?",
                str(p.id),
            )
        run(
            "UPDATE azync_jobs SET failed_at = NULL WHERE id = %s",
            "UPDATE azync_jobs SET failed_at = NULL WHERE id = ?",
            str(never_failed.id),
        )
    assert store.vacuum_dead(Source.QUEUE, kind, timedelta(days=1)) == 1
    assert store.find_job(died_now.id).state == JobState.DEAD
    with pytest.raises(NotFound):
        store.find_job(never_failed.id)


def test_retry_dag_refuses_missing_task_rows(store: AnyStore) -> None:
    dag_id, dead = suspended_saga(store)
    delete_job_row(store, dead)
    with pytest.raises(NotFound, match="no row for task"):
        store.retry_dag(dag_id)
    assert dag_view(store, dag_id).state == DAGState.SUSPENDED, "nothing was changed"

    lone_id, only = suspended_saga(store, lone=True)
    delete_job_row(store, only)
    with pytest.raises(NotFound, match="no task rows"):
        store.retry_dag(lone_id)
