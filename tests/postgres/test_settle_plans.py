"""Every statement that settles or extends a lease finds its job by primary key, also
when the statistics were taken with no job leased (azync_jobs_active_idx then reads as
empty, and a scan of it would walk one dead entry per job settled since the last
vacuum). Checked with EXPLAIN after a VACUUM ANALYZE of an idle queue; no timing is
asserted (bench/ measures it)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import psycopg

from qctl_store.postgres import PostgresStore, dags, workflows
from qctl_store.types import DequeueParams, Source
from tests.postgres.conftest import plans

KIND = "settle"


def seed(c: psycopg.Connection[Any]) -> None:
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                payload, enqueued_at)
        SELECT gen_random_uuid(), 'queue', %s, 'pending', now() - interval '1 hour', 25,
               '{}', now()
        FROM generate_series(1, 5000)
        """,
        (KIND,),
    )


def test_fenced_settlements_plan_on_the_primary_key(
    store: PostgresStore, writes: list[tuple[str, Any]]
) -> None:
    jobs = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=KIND, limit=9))
    leases = [(j.id, j.lease_token) for j in jobs if j.lease_token is not None]
    assert len(leases) == 9
    store.ack(*leases[0])
    store.skip(*leases[1], "not needed")
    store.reschedule(*leases[2], timedelta(minutes=1), "later")
    store.dead(*leases[3], "boom")
    store.release(*leases[4])
    store.snooze(*leases[5], timedelta(minutes=1), "past its deadline")
    store.extend_lease(*leases[6], timedelta(minutes=5))
    assert store.ack_many(leases[7:]) == [id for id, _ in leases[7:]]
    assert len(writes) == 9  # the lease, then the eight fenced statements
    for plan in plans(store, writes[1:]):
        assert "azync_jobs_pkey" in plan and "azync_jobs_active_idx" not in plan, plan


def test_dag_and_operation_fences_plan_on_the_primary_key(store: PostgresStore) -> None:
    """The same fence where a DAG task is acked with its result and an operation job is
    marked uncertain (their own statements, in a transaction with more)."""
    fenced = [
        (dags.Q.ack_task_result, {"id": uuid.uuid4(), "token": uuid.uuid4(), "result": None}),
        (
            workflows.Q.mark_uncertain,
            {"id": uuid.uuid4(), "lease_token": uuid.uuid4(), "reason": "lost"},
        ),
    ]
    for plan in plans(store, fenced):
        assert "azync_jobs_pkey" in plan and "azync_jobs_active_idx" not in plan, plan


def test_the_lease_keeps_its_generic_plan(store_factory: Any) -> None:
    """A worker's leases reuse one plan: with its LIMIT bound as a parameter PostgreSQL
    found the generic plan dearer than a custom one on this table of 5,000 pending jobs
    and planned every lease anew (0.3 ms of server time each)."""
    s = store_factory(pool_max_size=1)  # one session, whose prepared statements are read
    p = DequeueParams(kind=KIND, limit=5, lease=timedelta(minutes=5))
    for _ in range(12):  # psycopg prepares at the 5th, PostgreSQL chooses after 5 more
        leased = s.dequeue_batch(Source.QUEUE, p)
        assert len(leased) == 5
    with s.read() as cur:
        cur.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE 'UPDATE azync_jobs j SET%%state = ''active''%%'"
        )
        rows = cur.fetchall()
    assert len(rows) == 1 and rows[0]["generic_plans"] > 0, rows
