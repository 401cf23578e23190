"""The console's deep-listing extensions on PostgreSQL over a few thousand rows:
estimated counts for huge terminal states, keyset pages in ``list_jobs``' order (with
ties on the sort column) and prefix lookups. The estimate threshold is lowered so the
table stays small; no timing is asserted."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from qctl_store.postgres import PostgresStore, admin
from qctl_store.types import Job, JobFilter, JobSearch, JobState, Source

Q = Source.QUEUE
ROWS = 3000
KIND = "scale_done"


def seed(c: psycopg.Connection[Any]) -> None:
    """Succeeded jobs in threes sharing one completed_at, so keyset pages must break
    ties on id."""
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                enqueued_at, completed_at, payload)
        SELECT gen_random_uuid(), 'queue', %s, 'succeeded', now(), 1, now(),
               now() - (i / 3) * interval '1 ms', '{}'
        FROM generate_series(1, %s) AS i
        """,
        (KIND, ROWS),
    )


def test_count_of_a_huge_succeeded_set_is_estimated_unless_exact(
    store: PostgresStore, low_threshold: None
) -> None:
    search = JobSearch(source=Q, state=JobState.SUCCEEDED)
    count, estimated = store.count_jobs(search)
    assert estimated and ROWS / 2 <= count <= ROWS * 2
    assert store.count_jobs(search, exact=True) == (ROWS, False)


def test_filtered_or_live_counts_stay_exact(store: PostgresStore, low_threshold: None) -> None:
    assert store.count_jobs(JobSearch(source=Q, state=JobState.PENDING)) == (0, False)
    assert store.count_jobs(JobSearch(source=Q, kind="no_such_kind")) == (0, False)
    assert store.count_jobs(JobSearch(source=Q, error="boom")) == (0, False)


def test_keyset_pages_walk_the_listing_order_with_ties(store: PostgresStore) -> None:
    search = JobSearch(source=Q, kind=KIND, state=JobState.SUCCEEDED)
    walked: list[Job] = []
    after = None
    while True:
        page = store.search_jobs(search, limit=700, after=after)
        if not page:
            break
        walked.extend(page)
        after = store.job_cursor(page[-1], JobState.SUCCEEDED)
    listed, total = store.list_jobs(Q, JobFilter(kind=KIND, state=JobState.SUCCEEDED))
    assert total == ROWS
    assert [j.id for j in walked] == [j.id for j in listed]


def test_prefix_lookup_accepts_dashes_and_bounds_the_result(store: PostgresStore) -> None:
    jobs, _ = store.list_jobs(Q, JobFilter(kind=KIND), limit=1)
    text = str(jobs[0].id)
    assert jobs[0].id in store.find_ids_by_prefix("job", text[:13])
    assert store.find_ids_by_prefix("job", text) == [jobs[0].id]
    assert len(store.find_ids_by_prefix("job", text[:1], limit=5)) <= 5
    assert store.find_ids_by_prefix("event", uuid.uuid4().hex) == []


def test_prefix_lookup_is_a_primary_key_range_scan(store: PostgresStore) -> None:
    sql = admin.Q.find_ids_by_prefix.replace("{table}", "azync_jobs")
    args = {"lo": "ab" + "0" * 30, "hi": "ab" + "f" * 30, "limit": 10}
    with store.read() as cur:
        cur.execute("EXPLAIN " + sql, args)
        plan = "\n".join(r["QUERY PLAN"] for r in cur.fetchall())
    assert "azync_jobs_pkey" in plan and "Seq Scan" not in plan, plan
