"""The set-based job actions a bulk verb runs, one statement per batch of ids, on both
backends: each changes only the ids in the state and source it takes (a job that moved
on, a worker's active job, another source's job is left alone) and returns the ids it
changed; and the reads a verb plans with (``job_targets``, ``job_targets_of``)."""

from __future__ import annotations

import uuid
from datetime import timedelta

from qctl_store.types import (
    KIND_SLEEP,
    DAGParams,
    DAGTask,
    EnqueueParams,
    JobSearch,
    JobState,
    JobTarget,
    Source,
)
from tests.conformance.helpers import (
    AnyStore,
    dag_task_by_key,
    enqueue_due,
    host_now,
    lease_one,
    token,
    unique,
)

Q, E = Source.QUEUE, Source.EVENT
JOB_SOURCES = [Q, E]
HOUR = timedelta(hours=1)


def dead(store: AnyStore, kind: str) -> uuid.UUID:
    id = enqueue_due(store, kind, max_attempts=1)
    job = lease_one(store, Q, kind)
    store.dead(job.id, token(job), "boom")
    return id


def states(store: AnyStore, ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    return {t.id: t.state for t in store.job_targets_of(ids)}


def test_job_targets_pages_in_id_order_by_state_reading_no_payload(store: AnyStore) -> None:
    kind = unique("jv_page")
    ids = sorted(enqueue_due(store, kind, meta={"team": "a"}) for _ in range(5))
    store.pause_job(Q, ids[0])
    search = JobSearch(kind=kind, meta={"team": "a"}, state=JobState.DEAD)  # state ignored
    first = store.job_targets(search, [JobState.PENDING], None, 2)
    rest = store.job_targets(search, [JobState.PENDING], first[-1].id, 10)
    assert [t.id for t in first + rest] == ids[1:]
    assert first[0] == JobTarget(ids[1], "queue", "pending", kind)
    both = store.job_targets(search, [JobState.PENDING, JobState.PAUSED], None, 10)
    assert [t.id for t in both] == ids
    assert store.job_targets(JobSearch(kind=kind, meta={"team": "b"}), [JobState.PENDING]) == []


def test_job_targets_of_leaves_out_missing_ids(store: AnyStore) -> None:
    id = enqueue_due(store, unique("jv_of"))
    assert states(store, [id, uuid.uuid4()]) == {id: "pending"}
    assert store.job_targets_of([]) == []


def test_retry_jobs_resets_only_dead_jobs_of_the_sources(store: AnyStore) -> None:
    kind = unique("jv_retry")
    gone, other = dead(store, kind), dead(store, kind)
    pending = enqueue_due(store, kind)
    assert store.retry_jobs([gone, pending, uuid.uuid4()], JOB_SOURCES) == [gone]
    assert store.retry_jobs([other], [E]) == []
    got = store.get_job(Q, gone)
    assert (got.state, got.attempt, got.last_error or None) == (JobState.PENDING, 0, None)
    assert states(store, [other, pending]) == {other: "dead", pending: "pending"}
    assert store.retry_jobs([], JOB_SOURCES) == []


def test_pause_resume_and_archive_jobs_take_their_states(store: AnyStore) -> None:
    kind = unique("jv_pause")
    due = enqueue_due(store, kind)
    later = EnqueueParams(kind=kind, payload={}, run_at=host_now() + HOUR)
    store.enqueue(later)
    active = enqueue_due(store, kind)
    assert lease_one(store, Q, kind).id in (due, active)
    running = next(i for i, s in states(store, [due, active]).items() if s == "active")
    waiting = due if running == active else active
    assert sorted(store.pause_jobs([waiting, later.id, running], JOB_SOURCES)) == sorted(
        [waiting, later.id]
    )
    assert store.pause_jobs([waiting], JOB_SOURCES) == []
    assert sorted(store.resume_jobs([waiting, later.id, running], JOB_SOURCES)) == sorted(
        [waiting, later.id]
    )
    assert states(store, [waiting, later.id, running]) == {
        waiting: "pending",
        later.id: "scheduled",
        running: "active",
    }
    assert sorted(store.archive_jobs([waiting, later.id, running], JOB_SOURCES)) == sorted(
        [waiting, later.id]
    )
    assert states(store, [waiting, later.id, running])[running] == "active"
    assert set(states(store, [waiting, later.id]).values()) == {"dead"}


def test_run_now_jobs_makes_scheduled_jobs_due_but_never_a_dag_timer(store: AnyStore) -> None:
    kind = unique("jv_now")
    later = EnqueueParams(kind=kind, payload={}, run_at=host_now() + HOUR)
    store.enqueue(later)
    pending = enqueue_due(store, kind)
    dag = DAGParams(
        name=unique("jv_now_dag"),
        tasks=[DAGTask(key="cool", kind=KIND_SLEEP, sleep_for=HOUR)],
    )
    store.create_dag(dag)
    timer = dag_task_by_key(store, dag.id, "cool").id
    sources = [Q, E, Source.DAG]
    assert store.run_now_jobs([later.id, pending, timer], sources) == [later.id]
    assert states(store, [later.id, timer]) == {later.id: "pending", timer: "scheduled"}


def test_delete_jobs_deletes_only_in_the_states_given_never_an_active_job(
    store: AnyStore,
) -> None:
    kind = unique("jv_del")
    gone = dead(store, kind)
    pending = enqueue_due(store, kind)
    running = lease_one(store, Q, kind).id
    assert running == pending
    kept = enqueue_due(store, kind)
    assert store.delete_jobs([gone, running, kept], JOB_SOURCES, [JobState.DEAD]) == [gone]
    assert store.delete_jobs([running], JOB_SOURCES, [JobState.PENDING]) == []
    assert states(store, [gone, running, kept]) == {running: "active", kept: "pending"}
