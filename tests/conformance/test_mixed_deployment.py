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

from qctl_store.errors import NotFound
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

    p = DAGParams(
        name=unique("mix_signal"),
        tasks=[
            DAGTask(key="approve", kind=KIND_SIGNAL),
            DAGTask(key="cool", kind=KIND_SLEEP, sleep_for=timedelta(hours=1)),
        ],
    )
    assert store.create_dag(p)[0]
    assert dag_task_by_key(store, p.id, "approve").signal_name == "approve"
    assert dag_task_by_key(store, p.id, "cool").signal_name == "cool"
    delivered, _ = store.signal(DAGSignalParams(dag_id=p.id, name="approve", payload={"ok": 1}))
    assert delivered == 1
    assert dag_task_by_key(store, p.id, "approve").state == JobState.SUCCEEDED


def suspended_saga(store: AnyStore) -> tuple[uuid.UUID, uuid.UUID]:
    """A DAG a -> b whose task a died, suspended by its failure policy."""
    kind_a = unique("mix_saga_a")
    p = DAGParams(
        name=unique("mix_saga"),
        tasks=[DAGTask(key="a", kind=kind_a, max_attempts=1), DAGTask(key="b", kind="mix_b")],
        deps=[DAGDep(task_key="b", depends_on_key="a")],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    assert store.create_dag(p)[0]
    dead = kill_wf_task(store, kind_a)
    apply_policy_for(store, p.id)
    assert dag_view(store, p.id).state == DAGState.SUSPENDED
    return p.id, dead.id


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
    with raw_sql(store) as run:
        run(
            "DELETE FROM azync_jobs WHERE id = %s",
            "DELETE FROM azync_jobs WHERE id = ?",
            str(dead),
        )
    with pytest.raises(NotFound, match="no row for task"):
        store.retry_dag(dag_id)
    assert dag_view(store, dag_id).state == DAGState.SUSPENDED, "nothing was changed"

    lone_kind = unique("mix_lone")
    lone = DAGParams(
        name=unique("mix_lone"),
        tasks=[DAGTask(key="only", kind=lone_kind, max_attempts=1)],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    assert store.create_dag(lone)[0]
    only = kill_wf_task(store, lone_kind)
    apply_policy_for(store, lone.id)
    with raw_sql(store) as run:
        run(
            "DELETE FROM azync_jobs WHERE id = %s",
            "DELETE FROM azync_jobs WHERE id = ?",
            str(only.id),
        )
    with pytest.raises(NotFound, match="no task rows"):
        store.retry_dag(lone.id)


# azync's own statements, transcribed from its Go driver so the question "what would a Go
# worker do with this row" is answered by azync's SQL, not by qctl's.

# driver/azyncpgx/store_jobs.go: dequeueClaimBody + dequeueQueueSQL, parameters
# (lease seconds, OverrideDefault, DefaultMaxAttempts, source, kind, limit).
GO_DEQUEUE = """
UPDATE azync_jobs j SET
    state = 'active',
    lease_until = now() + make_interval(secs => %s),
    lease_token = gen_random_uuid(),
    max_attempts = CASE WHEN j.max_attempts_explicit OR NOT %s THEN j.max_attempts ELSE %s END,
    max_attempts_explicit = true,
    attempt = j.attempt + 1,
    started_at = now(),
    updated_at = now()
FROM (
    SELECT id FROM azync_jobs
    WHERE source = %s AND kind = %s AND state = 'pending' AND run_at <= now()
    ORDER BY run_at, id
    FOR UPDATE SKIP LOCKED
    LIMIT %s
) picked
WHERE j.id = picked.id
RETURNING j.id, j.attempt, j.max_attempts
"""

# driver/azyncpgx/dag_store.go: deliverSignalNowSQL, parameters (dag id, name, payload).
GO_DELIVER_SIGNAL = """
WITH sig AS (
    UPDATE azync_jobs SET
        state = 'succeeded', result = %(payload)s::jsonb, completed_at = now(), updated_at = now()
    WHERE source = 'dag' AND dag_id = %(dag)s AND signal_name = %(name)s
        AND kind = '$signal' AND state = 'waiting'
    RETURNING 1
),
slp AS (
    UPDATE azync_jobs SET run_at = now(), updated_at = now()
    WHERE source = 'dag' AND dag_id = %(dag)s AND signal_name = %(name)s
        AND kind = '$sleep' AND state = 'scheduled'
    RETURNING 1
)
SELECT (SELECT count(*) FROM sig) + (SELECT count(*) FROM slp) AS delivered
"""


def go_exhausted(attempt: int, max_attempts: int) -> bool:
    """internal/engine/executor.go: a failed attempt dead-letters the job when
    ``job.Attempt >= job.MaxAttempts``."""
    return attempt >= max_attempts


def test_a_go_worker_retries_what_qctl_enqueued(store: AnyStore) -> None:
    if not isinstance(store, PostgresStore):
        pytest.skip("azync's Go driver is PostgreSQL's")
    kind = unique("mix_go")
    plain, zero, pinned = (
        EnqueueParams(kind=kind),
        EnqueueParams(kind=kind, max_attempts=0),
        EnqueueParams(kind=kind, max_attempts=3, max_attempts_explicit=True),
    )
    store.enqueue(plain)
    store.enqueue_many([zero, pinned])
    with raw_pg(store.schema) as pg:
        # A worker registered without MaxRetries: OverrideDefault is false.
        leased = {
            id: (attempt, budget)
            for id, attempt, budget in pg.execute(GO_DEQUEUE, (60, False, 25, "queue", kind, 10))
        }
    assert leased == {plain.id: (1, 25), zero.id: (1, 25), pinned.id: (1, 3)}
    assert not any(go_exhausted(*v) for v in leased.values()), "a first failure is retried"

    other = unique("mix_go_override")
    unpinned = EnqueueParams(kind=other)
    kept = EnqueueParams(kind=other, max_attempts=3, max_attempts_explicit=True)
    store.enqueue_many([unpinned, kept])
    with raw_pg(store.schema) as pg:
        # A worker registered with MaxRetries(7) replaces only an unpinned budget.
        leased = {
            id: budget
            for id, _, budget in pg.execute(GO_DEQUEUE, (60, True, 7, "queue", other, 10))
        }
    assert leased == {unpinned.id: 7, kept.id: 3}


def test_a_go_scheduler_signals_the_tasks_qctl_created(store: AnyStore) -> None:
    if not isinstance(store, PostgresStore):
        pytest.skip("azync's Go driver is PostgreSQL's")
    p = DAGParams(
        name=unique("mix_go_signal"),
        tasks=[
            DAGTask(key="approve", kind=KIND_SIGNAL),
            DAGTask(key="cool", kind=KIND_SLEEP, sleep_for=timedelta(hours=1)),
        ],
    )
    assert store.create_dag(p)[0]
    with raw_pg(store.schema) as pg:
        for name in ("approve", "cool"):
            row = pg.execute(
                GO_DELIVER_SIGNAL, {"dag": p.id, "name": name, "payload": '{"ok": true}'}
            ).fetchone()
            assert row is not None and row[0] == 1, f"Go delivers signal {name!r}"
    assert dag_task_by_key(store, p.id, "approve").state == JobState.SUCCEEDED
    cool = dag_task_by_key(store, p.id, "cool")
    assert cool.run_at is not None and cool.run_at < cool.enqueued_at + timedelta(minutes=1)
