"""The console's refresh-path reads on PostgreSQL never scan the whole job table: every
statement ``live_depths`` and a page of succeeded jobs across kinds run is planned on a
partial index, checked with EXPLAIN over a table of some 40,000 rows bulk-inserted with
generate_series and analyzed. The estimate threshold is lowered so the huge-table path of
``live_depths`` runs. No timing is asserted (bench/ measures it)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from qctl_kit.postgres import tune
from qctl_kit.values import PageCursor
from qctl_store import types
from qctl_store.listing import order_for
from qctl_store.postgres import PostgresStore, admin
from qctl_store.types import CAPPED_DEPTHS, JobFilter, JobSearch, JobState, Source, estimated_depths
from tests.conftest import raw_pg
from tests.postgres.conftest import plans

Q = Source.QUEUE
KINDS = 4
SUCCEEDED_PER_KIND = 10_000
LIVE = {"pending": 2000, "scheduled": 200, "active": 40, "dead": 40, "paused": 8}  # per kind: / 4
UNINDEXED = {"cancelled": 12, "uncertain": 12, "skipped": 12}
"""States azync's schema has no index for (``db tune`` adds one each)."""
EPOCH = datetime.fromtimestamp(0, UTC)


def seed(c: psycopg.Connection[Any]) -> None:
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                enqueued_at, completed_at, payload)
        SELECT gen_random_uuid(), 'queue', 'plan_' || (i %% %s), 'succeeded', now(), 1,
               now() - interval '1 day', now() - i * interval '1 second', '{}'
        FROM generate_series(1, %s) AS i
        """,
        (KINDS, KINDS * SUCCEEDED_PER_KIND),
    )
    # A kind with few succeeded jobs, which live_depths counts exactly.
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                enqueued_at, completed_at, payload)
        SELECT gen_random_uuid(), 'queue', 'plan_few', 'succeeded', now(), 1,
               now() - interval '1 day', now() - i * interval '1 second', '{}'
        FROM generate_series(1, 30) AS i
        """
    )
    for state, n in {**LIVE, **UNINDEXED}.items():
        c.execute(
            """
            INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                    enqueued_at, lease_until, completed_at, payload)
            SELECT gen_random_uuid(), 'queue', 'plan_' || (i %% %s), %s,
                   now() - i * interval '1 ms', 1, now() - i * interval '1 ms',
                   CASE WHEN %s = 'active' THEN now() + interval '1 hour' END,
                   CASE WHEN %s = 'skipped' THEN now() - i * interval '1 ms' END, '{}'
            FROM generate_series(1, %s) AS i
            """,
            (KINDS, state, state, state, n),
        )
    # Dead jobs fail in an order of their own: ties, and every fifth without a failure
    # time (azync's resolveUncertain writes none).
    c.execute(
        """
        UPDATE azync_jobs j SET failed_at = CASE WHEN n.i % 5 = 0 THEN NULL
                                                 ELSE now() + (n.i % 7) * interval '1 minute' END
        FROM (SELECT id, row_number() OVER (ORDER BY enqueued_at, id) AS i
              FROM azync_jobs WHERE state = 'dead') AS n
        WHERE j.id = n.id
        """
    )


def assert_no_table_scan(plan: str) -> None:
    assert not re.search(r"Seq Scan on azync_jobs\b", plan), plan


def test_live_depths_reads_only_partial_indexes(
    store: PostgresStore,
    low_threshold: None,
    statements: list[tuple[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(admin, "LIVE_DEPTH_CAP", max(LIVE.values()))  # under it: exact
    depths, estimated = store.live_depths(Q)
    assert estimated
    d = depths["plan_0"]
    per_kind = {state: n // KINDS for state, n in LIVE.items()}
    assert (d.pending, d.scheduled, d.active, d.dead) == (
        per_kind["pending"],
        per_kind["scheduled"],
        per_kind["active"],
        per_kind["dead"],
    )
    assert SUCCEEDED_PER_KIND / 3 <= d.succeeded <= SUCCEEDED_PER_KIND * 3
    assert depths["plan_few"].succeeded == 30  # small: counted on the index
    assert d.oldest_pending_age.total_seconds() > 0
    found = plans(store, statements)
    for plan in found:
        assert_no_table_scan(plan)
    text = "\n".join(found)
    for index in ("pending", "scheduled", "active", "dead", "succeeded"):
        assert f"azync_jobs_{index}_idx" in text, text


def test_live_depths_are_exact_below_the_threshold(store: PostgresStore) -> None:
    depths, estimated = store.live_depths(Q)
    assert not estimated
    assert depths["plan_1"].succeeded == SUCCEEDED_PER_KIND
    assert depths["plan_1"].paused == LIVE["paused"] // KINDS


@pytest.mark.parametrize("deep", [False, True], ids=["first_page", "keyset_page"])
def test_succeeded_pages_across_kinds_walk_the_vacuum_index(
    store: PostgresStore, statements: list[tuple[str, Any]], deep: bool
) -> None:
    search = JobSearch(source=Q, state=JobState.SUCCEEDED)
    after: PageCursor | None = None
    if deep:
        ahead = store.search_jobs(search, limit=5000)
        after = store.job_cursor(ahead[-1], JobState.SUCCEEDED)
        statements.clear()
    page = store.search_jobs(search, limit=50, after=after)
    assert len(page) == 50
    completed = [j.completed_at for j in page]
    assert completed == sorted(completed, reverse=True)  # type: ignore[type-var]
    (plan,) = plans(store, statements)
    assert_no_table_scan(plan)
    assert "azync_jobs_succeeded_vacuum_idx" in plan, plan
    if deep:
        # The cursor bounds the index scan rather than filtering the rows before it.
        assert re.search(r"Index Cond: .*completed_at <=", plan), plan


def test_live_depths_of_an_empty_source_estimate_nothing(
    store: PostgresStore, low_threshold: None
) -> None:
    assert store.live_depths(Source.WORKFLOW) == ({}, False)


def test_untuned_dead_pages_sort_the_dead_index_in_failure_order(
    store: PostgresStore, statements: list[tuple[str, Any]]
) -> None:
    """Without ``db tune``'s index a dead page reads azync's dead index (every dead job)
    and sorts it by failure time: never the table."""
    search = JobSearch(source=Q, state=JobState.DEAD)
    first = store.search_jobs(search, limit=7)
    store.search_jobs(search, limit=7, after=store.job_cursor(first[-1], JobState.DEAD))
    for plan in plans(store, [(q, a) for q, a in statements if q != tune.PRESENT]):
        assert_no_table_scan(plan)
        assert "azync_jobs_dead_idx" in plan, plan
        assert re.search(r"Sort Key: (azync_jobs\.)?failed_at", plan), plan


def test_succeeded_pages_across_kinds_follow_list_jobs_order(store: PostgresStore) -> None:
    search = JobSearch(source=Q, state=JobState.SUCCEEDED)
    walked: list[uuid.UUID] = []
    after: PageCursor | None = None
    for _ in range(6):
        page = store.search_jobs(search, limit=7, after=after)
        walked.extend(j.id for j in page)
        after = store.job_cursor(page[-1], JobState.SUCCEEDED)
    listed, _ = store.list_jobs(Q, JobFilter(state=JobState.SUCCEEDED), 0, 42)
    assert walked == [j.id for j in listed]


def test_list_jobs_keeps_azync_s_enqueue_order_for_dead_jobs(store: PostgresStore) -> None:
    listed, total = store.list_jobs(Q, JobFilter(state=JobState.DEAD), 0, 0)
    assert total == LIVE["dead"]
    assert [(j.enqueued_at, j.id) for j in listed] == sorted((j.enqueued_at, j.id) for j in listed)
    failed = [j.failed_at for j in listed if j.failed_at is not None]
    assert failed != sorted(failed)  # the seed's failure order is another order


@pytest.fixture
def tuned(store: PostgresStore) -> Iterator[None]:
    """The console's opt-in indexes, as ``qctl db tune`` creates them."""
    assert store.tune() == list(admin.CONSOLE_INDEXES)
    assert store.tune() == []  # idempotent
    with raw_pg(store.schema) as c:
        # Fresh statistics, so an autovacuum ANALYZE arriving mid-test cannot change the
        # plans compared here (a dead page once took azync's dead index and a sort).
        c.execute("ANALYZE azync_jobs")
    try:
        yield
    finally:
        with raw_pg(store.schema) as c:
            for name in admin.CONSOLE_INDEXES:
                c.execute(f"DROP INDEX {name}")


def _merged_pages(store: PostgresStore, state: JobState, seen: list[tuple[str, Any]]) -> None:
    """Walks every page of ``state`` across kinds: in its order by (sort column, id),
    each statement merging the state's index ranges, none scanning the table."""
    column, desc = order_for(state, search=True)
    search = JobSearch(source=Q, state=state)
    walked: list[Any] = []
    after: PageCursor | None = None
    while page := store.search_jobs(search, limit=7, after=after):
        walked.extend(page)
        after = store.job_cursor(page[-1], state)
    listed, total = store.list_jobs(Q, JobFilter(state=state), 0, 0)
    assert len(walked) == total
    key = [(getattr(j, column), str(j.id)) for j in walked]
    by_id = sorted(((getattr(j, column), str(j.id)) for j in listed), key=lambda r: r[1])
    # Ties by id ascending; NULL after every time (PostgreSQL's btree order).
    assert key == sorted(by_id, key=lambda r: (r[0] is None, r[0] or EPOCH), reverse=desc)
    found = plans(store, seen)
    for plan in found:
        assert_no_table_scan(plan)
    index = admin.STATE_INDEXES.get(state, f"azync_jobs_{state}_idx")
    lacking = [plan for plan in found if index not in plan]
    assert not lacking, lacking


@pytest.mark.parametrize("state", [JobState.PENDING, JobState.SCHEDULED, JobState.ACTIVE])
def test_live_state_pages_across_kinds_merge_per_kind_index_ranges(
    store: PostgresStore, statements: list[tuple[str, Any]], state: JobState
) -> None:
    _merged_pages(store, state, statements)


@pytest.mark.parametrize("state", list(admin.STATE_INDEXES))
def test_unindexed_state_pages_and_counts_merge_the_console_index_once_tuned(
    store: PostgresStore,
    statements: list[tuple[str, Any]],
    tuned: None,
    monkeypatch: pytest.MonkeyPatch,
    state: JobState,
) -> None:
    assert store.console_indexes() == sorted(admin.CONSOLE_INDEXES)
    monkeypatch.setattr(admin, "ESTIMATE_THRESHOLD", 1000)
    assert not store.listing_scans(state)
    assert store.listing_scans(None)
    statements.clear()
    _merged_pages(store, state, statements)
    statements.clear()
    count = store.count_jobs(JobSearch(source=Q, state=state))
    assert count == ({**LIVE, **UNINDEXED}[state.value], False)
    for plan in plans(store, statements):
        assert_no_table_scan(plan)


def test_without_the_console_index_paused_listings_say_they_scan(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert store.console_indexes() == []
    assert not store.listing_scans(JobState.PAUSED)  # a small table: a scan is cheap
    assert not store.listing_scans(None)
    monkeypatch.setattr(admin, "ESTIMATE_THRESHOLD", 1000)
    for state in admin.STATE_INDEXES:
        assert store.listing_scans(state)
    assert store.listing_scans(None)
    # Dead jobs sort in failure order without the console index, but their count stays
    # exact on azync's dead index.
    assert store.count_jobs(JobSearch(source=Q, state=JobState.DEAD)) == (LIVE["dead"], False)
    n, estimated = store.count_jobs(JobSearch(source=Q, state=JobState.PAUSED))
    assert estimated and 0 <= n <= 100  # the statistics', never a scan
    assert store.count_jobs(JobSearch(source=Q, state=JobState.PAUSED), exact=True) == (
        LIVE["paused"],
        False,
    )


def test_dead_counts_are_exact_up_to_the_limit_then_estimated(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch, statements: list[tuple[str, Any]]
) -> None:
    dead = JobSearch(source=Q, state=JobState.DEAD)
    assert store.count_jobs(dead) == (LIVE["dead"], False)
    monkeypatch.setattr(admin, "EXACT_LIMIT", LIVE["dead"] // 2)
    n, estimated = store.count_jobs(dead)
    assert estimated and LIVE["dead"] // 2 <= n <= LIVE["dead"] * 3
    for plan in plans(store, statements):
        assert_no_table_scan(plan)


@pytest.mark.parametrize("state", CAPPED_DEPTHS)
def test_live_depths_estimate_a_kind_s_backlog_beyond_the_cap(
    store: PostgresStore, low_threshold: None, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    """Pending, scheduled and dead are counted exactly below the cap; at it, the
    statistics' estimate (never below the cap) is taken and the depths say so."""
    per_kind = {s: n // KINDS for s, n in LIVE.items()}
    for module in (admin, types):  # the store's cap and the marker's
        monkeypatch.setattr(module, "LIVE_DEPTH_CAP", per_kind[state])
    depths, estimated = store.live_depths(Q)
    d = depths["plan_0"]
    assert estimated
    assert per_kind[state] <= getattr(d, state) <= per_kind[state] * 3
    assert state in estimated_depths(d, Q)
    for other in CAPPED_DEPTHS:
        if per_kind[other] < per_kind[state]:  # below the cap: exact, not marked
            assert getattr(d, other) == per_kind[other]
            assert other not in estimated_depths(d, Q)
    assert d.active == per_kind["active"]
    assert d.oldest_pending_age.total_seconds() > 0


def test_live_depths_count_paused_on_the_console_index(
    store: PostgresStore, low_threshold: None, tuned: None, statements: list[tuple[str, Any]]
) -> None:
    depths, _ = store.live_depths(Q)
    assert depths["plan_0"].paused == LIVE["paused"] // KINDS
    text = "\n".join(plans(store, statements))
    assert admin.PAUSED_INDEX in text, text


def test_live_depths_count_succeeded_exactly_only_within_a_budget(
    store: PostgresStore,
    low_threshold: None,
    monkeypatch: pytest.MonkeyPatch,
    statements: list[tuple[str, Any]],
) -> None:
    """Many mid-sized kinds: only the smallest are counted on the index, while their
    estimates fit in EXACT_LIMIT; the rest stay the statistics' (marked)."""
    monkeypatch.setattr(admin, "EXACT_LIMIT", SUCCEEDED_PER_KIND + SUCCEEDED_PER_KIND // 2)
    depths, estimated = store.live_depths(Q)
    assert estimated
    assert depths["plan_few"].succeeded == 30
    (counted,) = [args["kinds"] for sql, args in statements if sql == admin.Q.succeeded_depths]
    assert "plan_few" in counted and len(counted) == 2, counted  # and one plan_N
    for kind in ("plan_0", "plan_1", "plan_2", "plan_3"):
        assert SUCCEEDED_PER_KIND / 3 <= depths[kind].succeeded <= SUCCEEDED_PER_KIND * 3


def test_tuned_newest_dead_pages_start_their_index_range_at_the_cursor(
    store: PostgresStore, statements: list[tuple[str, Any]], tuned: None
) -> None:
    """The console's default dead listing, newest failure first: each kind's range of
    ``qctl_jobs_dead_idx`` is read backwards from the cursor (an index condition, not a
    filter over the rows before it), past the jobs without a failure time."""
    search = JobSearch(source=Q, state=JobState.DEAD, reverse=True)
    ahead = store.search_jobs(search, limit=LIVE["dead"] // 2)
    assert ahead[0].failed_at is None and ahead[-1].failed_at is not None
    statements.clear()
    store.search_jobs(search, limit=7, after=store.job_cursor(ahead[-1], JobState.DEAD))
    (plan,) = plans(store, [(q, a) for q, a in statements if q != tune.PRESENT])
    assert_no_table_scan(plan)
    assert re.search(r"Index Cond: .*kind = k\.kind.*failed_at <=", plan), plan
