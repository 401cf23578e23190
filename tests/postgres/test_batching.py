"""Maintenance batching on PostgreSQL (azync's integration/maintenance_batch_test.go):
with ``maintenance_batch=2`` every bulk pass must loop past one batch and still
handle all five jobs."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import psycopg
import pytest

from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    DequeueParams,
    EnqueueParams,
    Job,
    JobFilter,
    JobState,
    PublishParams,
    Source,
    Subscriber,
)
from tests.conftest import PG_DSN, StoreFactory

Q = Source.QUEUE
N = 5


@pytest.fixture(scope="module")
def store(store_factory: StoreFactory) -> PostgresStore:
    s = store_factory(maintenance_batch=2)
    assert isinstance(s, PostgresStore)
    return s


def kind(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def enqueue(store: PostgresStore, k: str, n: int = N, **params: object) -> None:
    for _ in range(n):
        assert store.enqueue(EnqueueParams(kind=k, **params))  # type: ignore[arg-type]


def lease(store: PostgresStore, k: str, lease: timedelta = timedelta(minutes=1)) -> list[Job]:
    jobs = store.dequeue_batch(Q, DequeueParams(kind=k, limit=N, lease=lease))
    assert len(jobs) == N
    return jobs


def pending(store: PostgresStore, k: str) -> int:
    return store.kind_depths(Q)[k].pending


def kill_all(store: PostgresStore, k: str) -> None:
    for job in lease(store, k):
        assert job.lease_token is not None
        store.dead(job.id, job.lease_token, "boom")


def test_promote_due_processes_more_than_one_batch(store: PostgresStore) -> None:
    k = kind("bt_promote")
    enqueue(store, k, delay=timedelta(milliseconds=10))
    time.sleep(0.03)
    assert store.promote_due(Q, [k]) == N
    assert pending(store, k) == N


def test_reap_expired_processes_more_than_one_batch(store: PostgresStore) -> None:
    k = kind("bt_reap")
    enqueue(store, k)
    lease(store, k, timedelta(milliseconds=10))
    time.sleep(0.03)
    assert store.reap_expired(Q, [k], 5) == (N, 0)
    assert pending(store, k) == N
    _, daily = store.stats(Q, k)
    assert daily[-1].reaped == N


def test_reap_expired_kills_past_one_batch_with_history(store: PostgresStore) -> None:
    k = kind("bt_reap_kill")
    enqueue(store, k)
    jobs = lease(store, k, timedelta(milliseconds=10))
    time.sleep(0.03)
    assert store.reap_expired(Q, [k], 1) == (N, N)
    assert store.kind_depths(Q)[k].dead == N
    for job in jobs:
        (attempt,) = store.job_attempts(Q, job.id)
        assert attempt.error == "lease expired 1 times"


def test_retry_all_dead_processes_more_than_one_batch(store: PostgresStore) -> None:
    k = kind("bt_retry")
    enqueue(store, k)
    kill_all(store, k)
    assert store.retry_all_dead(Q, k) == N
    assert pending(store, k) == N
    jobs, total = store.list_jobs(Q, JobFilter(kind=k, state=JobState.PENDING))
    assert total == N and all(j.attempt == 0 and j.last_error == "" for j in jobs)


def test_retry_all_dead_of_every_kind_walks_past_ties_of_the_key(store: PostgresStore) -> None:
    """Each batch resumes after the last one's (kind, enqueued_at, id): jobs enqueued
    in one call share enqueued_at, so batches end inside a run of equal keys and in
    the middle of a kind; every job is revived once."""
    kinds = [kind("bt_retry_ties"), kind("bt_retry_ties")]
    for k in kinds:
        assert all(store.enqueue_many([EnqueueParams(kind=k) for _ in range(N)]))
        kill_all(store, k)
    assert store.retry_all_dead(Q) >= 2 * N
    depths = store.kind_depths(Q)
    assert [(depths[k].pending, depths[k].dead) for k in kinds] == [(N, 0)] * 2


def test_delete_all_processes_more_than_one_batch(store: PostgresStore) -> None:
    k = kind("bt_delete")
    enqueue(store, k)
    assert store.delete_all(Q, k, JobState.PENDING) == N
    assert store.list_jobs(Q, JobFilter(kind=k))[1] == 0


def test_vacuum_dead_processes_more_than_one_batch(store: PostgresStore) -> None:
    k = kind("bt_vacuum_dead")
    enqueue(store, k)
    kill_all(store, k)
    time.sleep(0.01)
    assert store.vacuum_dead(Q, k, timedelta(milliseconds=1)) == N
    assert store.list_jobs(Q, JobFilter(kind=k))[1] == 0


def test_vacuum_completed_processes_more_than_one_batch(store: PostgresStore) -> None:
    k = kind("bt_vacuum_done")
    enqueue(store, k)
    for job in lease(store, k):
        assert job.lease_token is not None
        store.ack(job.id, job.lease_token)
    time.sleep(0.01)
    assert store.vacuum_completed(Q, timedelta(milliseconds=1)) >= N
    assert store.list_jobs(Q, JobFilter(kind=k))[1] == 0


def test_vacuum_completed_walks_past_ties_of_the_key(store: PostgresStore) -> None:
    """Jobs acked in one call share completed_at: batches resume after (completed_at,
    id) inside the run of equal keys."""
    k = kind("bt_vacuum_ties")
    enqueue(store, k)
    acked = store.ack_many([(j.id, j.lease_token) for j in lease(store, k) if j.lease_token])
    assert len(acked) == N
    time.sleep(0.01)
    assert store.vacuum_completed(Q, timedelta(milliseconds=1)) >= N
    assert store.list_jobs(Q, JobFilter(kind=k))[1] == 0


def test_nuke_all_ignores_the_batch_size_and_spares_other_sources(store: PostgresStore) -> None:
    """Last in the module: it empties the queue source the other tests use."""
    enqueue(store, kind("bt_nuke"), n=2 * N + 1)  # more than a batch: one statement
    store.register_subscriber(Subscriber(name="bt_nuke_s", event_type="evt.bt_nuke"))
    assert store.publish(PublishParams(type="evt.bt_nuke", payload={})) == 1
    queued = store.list_jobs(Q, JobFilter())[1]
    assert store.nuke_all(Q).jobs == queued
    assert store.list_jobs(Q, JobFilter())[1] == 0
    assert store.list_jobs(Source.EVENT, JobFilter(kind="bt_nuke_s"))[1] == 1


SLOW_KIND = "bt_slow"
MOVES = """
CREATE TABLE {schema}.bt_moves (id bigserial PRIMARY KEY, n int NOT NULL);
CREATE FUNCTION {schema}.bt_slow_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind LIKE '{kind}%' THEN PERFORM pg_sleep(0.001); END IF;
    RETURN NEW;
END $$;
CREATE FUNCTION {schema}.bt_count_moves() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.bt_moves (n)
    SELECT count(*) FROM moved WHERE kind LIKE '{kind}%' HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE TRIGGER bt_slow_row BEFORE UPDATE ON {schema}.azync_jobs
    FOR EACH ROW EXECUTE FUNCTION {schema}.bt_slow_row();
CREATE TRIGGER bt_count_moves AFTER UPDATE ON {schema}.azync_jobs
    REFERENCING NEW TABLE AS moved FOR EACH STATEMENT EXECUTE FUNCTION {schema}.bt_count_moves();
"""


def test_slow_batches_shrink_toward_the_configured_time(
    store_factory: StoreFactory, pg_schema: str
) -> None:
    """Each row of this kind takes at least 1 ms to update (a trigger sleeps), so a batch
    of n rows takes n ms or more: sized toward 50 ms, no batch after the first full one
    may exceed 50 rows, whatever the machine's load (slower only means smaller), where
    fixed batches would take 100."""
    s = store_factory(maintenance_batch=100, maintenance_batch_seconds=0.05)
    k = kind(SLOW_KIND)
    assert all(s.enqueue_many([EnqueueParams(kind=k) for _ in range(300)]))
    while jobs := s.dequeue_batch(Q, DequeueParams(kind=k, limit=100)):
        for job in jobs:
            assert job.lease_token is not None
            s.dead(job.id, job.lease_token, "boom")
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(MOVES.format(schema=f'"{pg_schema}"', kind=k))
        try:
            assert s.retry_all_dead(Q, k) == 300
            sizes = [
                n for (n,) in conn.execute(f'SELECT n FROM "{pg_schema}".bt_moves ORDER BY id')
            ]
        finally:
            conn.execute(f'DROP TRIGGER bt_slow_row ON "{pg_schema}".azync_jobs')
            conn.execute(f'DROP TRIGGER bt_count_moves ON "{pg_schema}".azync_jobs')
    assert sum(sizes) == 300
    assert sizes[0] == 10  # a tenth of the maximum: nothing has been timed yet
    assert max(sizes) <= 50 < 100
    assert pending(s, k) == 300


def test_a_large_bulk_change_refreshes_the_estimates(store_factory: StoreFactory) -> None:
    """A bulk retry of 12,000 dead jobs is followed by an ANALYZE of the job table, so
    the estimated counts (planner statistics) are not left as they were before it
    (they showed DEAD 28,314 where there were 135,330) until autovacuum comes by."""
    from qctl_store.postgres.maintenance import ESTIMATE_REFRESH_ROWS

    store = store_factory()
    assert isinstance(store, PostgresStore)
    k = kind("est")
    n = ESTIMATE_REFRESH_ROWS + 2000
    store.enqueue_many([EnqueueParams(kind=k) for _ in range(n)])
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            f"UPDATE \"{store.schema}\".azync_jobs SET state = 'dead' WHERE kind = %s", (k,)
        )

        def analyzed() -> int:
            row = conn.execute(
                "SELECT analyze_count FROM pg_stat_user_tables"
                " WHERE schemaname = %s AND relname = 'azync_jobs'",
                (store.schema,),
            ).fetchone()
            return int(row[0]) if row else 0

        before = analyzed()
        assert store.retry_all_dead(Source.QUEUE, k) == n
        deadline = time.monotonic() + 10  # the statistics collector reports late
        while analyzed() == before:
            assert time.monotonic() < deadline, "no ANALYZE after the bulk retry"
            time.sleep(0.1)
