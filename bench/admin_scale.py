"""Scenario 5: the admin surface over a big table (most of it succeeded jobs).

    .venv/bin/python bench/admin_scale.py [--quick] [--pg DSN] [--json out.jsonl]
        [--backends postgres,sqlite] [--rows N] [--sqlite-rows N]

Setup (SQL, not measured): ``rows`` queue jobs over 20 kinds are bulk-inserted with
``generate_series`` (PostgreSQL; secondary indexes and the change triggers are taken
off during the load and put back from their own catalog definitions) or
``executemany`` (SQLite): 100,000 dead (scaled down for small runs), 50,000 pending,
20,000 scheduled, 1,000 paused, the rest succeeded, 2% of those completed 40 days ago;
dead jobs failed at random times of the last 30 days (1% without a failure time).

Measured through the public API: ``kind_depths`` (exact) and ``live_depths`` (the
dashboard's refresh read, estimates marked); the first page (50) of every state
with ``list_jobs`` (which also counts the state) and with ``search_jobs`` +
``count_jobs`` (the console's keyset/estimate path), and dead jobs newest failure first
(the console's default, untuned and with ``db tune``'s index, first page and 5,000
deep, half the dead jobs on a small table); a page 100,000 rows deep into the
succeeded listing by offset (``list_jobs``) and by keyset (``search_jobs(after=...)``);
``retry_all_dead`` of all dead jobs while two worker threads lease and ack a live kind
fed by a producer (their lease latency idle and during the retry, and, on PostgreSQL,
the longest transaction of the admin connection sampled from ``pg_stat_activity``);
``vacuum_completed`` with a 30-day retention. On PostgreSQL each read also reports how
many sequential scans of ``azync_jobs`` it caused (``pg_stat_user_tables``).
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg
from common import (
    Plans,
    Recorder,
    base_args,
    drop_database,
    kept_args,
    loaded_database,
    median,
    pct,
    sqlite_file,
)

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.postgres.admin import CONSOLE_INDEXES
from qctl_store.sqlite import SqliteStore
from qctl_store.types import (
    DequeueParams,
    EnqueueParams,
    JobFilter,
    JobSearch,
    JobState,
    Source,
)

SCHEMA = "qctl_bench"
ADMIN_APP = "qctl_bench_admin"
KINDS = 40
LAYOUT_VERSION = 4
"""Bumped whenever the generated data changes, so a kept database is rebuilt."""
AnyStore = PostgresStore | SqliteStore
PAGED_STATES = [
    JobState.PENDING,
    JobState.SCHEDULED,
    JobState.ACTIVE,
    JobState.DEAD,
    JobState.PAUSED,
    JobState.CANCELLED,
    JobState.UNCERTAIN,
    JobState.SKIPPED,
    JobState.SUCCEEDED,
]


def layout(rows: int) -> dict[str, int]:
    """Jobs per state: 1% dead, 0.5% pending, 0.2% scheduled, 0.1% each paused,
    cancelled, uncertain and skipped (capped at 100,000, 50,000, 20,000 and 10,000), 200
    active, the rest succeeded."""
    live = {
        "dead": min(100_000, rows // 100),
        "pending": min(50_000, rows // 200),
        "scheduled": min(20_000, rows // 500),
        "paused": min(10_000, rows // 1000),
        "cancelled": min(10_000, rows // 1000),
        "uncertain": min(10_000, rows // 1000),
        "skipped": min(10_000, rows // 1000),
        "active": min(200, rows // 1000),
    }
    return {**live, "succeeded": rows - sum(live.values())}


# --- setup ------------------------------------------------------------------------------------

_DAY = 86_400
# (run_at, completed_at, last_error) per state, as SQL over the series index i and r, a
# uniform random number per row: times spread over the last 30 days the way a live
# system leaves them, never in the order of i (which also picks the kind).
_PG_STATE_SQL = {
    "succeeded": (
        # 2% completed 40 days ago, beyond a 30-day retention (vacuum_completed's work).
        "CASE WHEN mod(i, 50) = 0 THEN now() - interval '40 days' - r * interval '1 day'"
        f" ELSE now() - r * {30 * _DAY} * interval '1 second' END - interval '2 seconds'",
        "CASE WHEN mod(i, 50) = 0 THEN now() - interval '40 days' - r * interval '1 day'"
        f" ELSE now() - r * {30 * _DAY} * interval '1 second' END",
        "NULL",
    ),
    "dead": (f"now() - r * {30 * _DAY} * interval '1 second'", "NULL", "'boom: ' || i"),
    "pending": ("now() - r * interval '1 hour'", "NULL", "NULL"),
    "scheduled": ("now() + interval '1 hour' + r * interval '7 days'", "NULL", "NULL"),
    "paused": (f"now() - r * {30 * _DAY} * interval '1 second'", "NULL", "NULL"),
    "cancelled": (f"now() - r * {30 * _DAY} * interval '1 second'", "NULL", "NULL"),
    "uncertain": (f"now() - r * {30 * _DAY} * interval '1 second'", "NULL", "NULL"),
    "skipped": (
        f"now() - r * {30 * _DAY} * interval '1 second'",
        f"now() - r * {30 * _DAY} * interval '1 second' + interval '1 second'",
        "NULL",
    ),
    "active": ("now() - r * interval '1 minute'", "NULL", "NULL"),
}


def pg_fresh(dsn: str, rows: int) -> None:
    """The schema created afresh and loaded (SQL, not measured)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    setup = PostgresStore(dsn, Config(schema=SCHEMA))
    setup.migrate()
    setup.close()
    pg_load(dsn, rows)


def pg_load(dsn: str, rows: int) -> None:
    """Bulk-load with the primary key, the foreign key pointing at it, the secondary
    indexes and the change triggers taken off, then put back from their own catalog
    definitions (same names, same definitions): a random-uuid primary key maintained
    row by row would make the 10-million-row load take a quarter of an hour here."""
    t0 = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path = {SCHEMA}")
        conn.execute("SET maintenance_work_mem = '512MB'")
        indexes = conn.execute(
            "SELECT i.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x"
            " JOIN pg_class i ON i.oid = x.indexrelid"
            " WHERE x.indrelid = 'azync_jobs'::regclass AND NOT EXISTS"
            " (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"
        ).fetchall()
        # The referencing foreign keys first, then the key they depend on.
        constraints = conn.execute(
            "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)"
            " FROM pg_constraint c WHERE c.confrelid = 'azync_jobs'::regclass"
            " UNION ALL SELECT 'azync_jobs', conname, pg_get_constraintdef(oid)"
            " FROM pg_constraint WHERE conrelid = 'azync_jobs'::regclass AND contype = 'p'"
        ).fetchall()
        for table, name, _ in constraints:
            conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        conn.execute("ALTER TABLE azync_jobs DISABLE TRIGGER USER")
        step = 1_000_000
        for state, n in layout(rows).items():
            run_at, completed, error = _PG_STATE_SQL[state]
            for lo in range(0, n, step):
                conn.execute(
                    "INSERT INTO azync_jobs (id, source, kind, state, run_at, lease_until,"
                    " lease_token, max_attempts, attempt, payload, last_error, enqueued_at,"
                    " completed_at, failed_at)"
                    f" SELECT gen_random_uuid(), 'queue', 'bench.k' || lpad(mod(i, {KINDS})::text,"
                    f" 2, '0'), %(state)s, {run_at},"
                    " CASE WHEN %(state)s = 'active' THEN now() + interval '5 minutes' END,"
                    " CASE WHEN %(state)s = 'active' THEN gen_random_uuid() END,"
                    f" 25, 1, jsonb_build_object('i', i), {error},"
                    f" {run_at} - interval '1 minute', {completed},"
                    # Failed in an order of their own; 1% without a failure time (as
                    # azync's resolveUncertain leaves a dead job).
                    " CASE WHEN %(state)s = 'dead' AND mod(i, 100) <> 0"
                    f" THEN now() - random() * {30 * _DAY} * interval '1 second' END"
                    " FROM (SELECT i, random() AS r"
                    " FROM generate_series(%(lo)s::int, %(hi)s::int) i) s",
                    {"state": state, "lo": lo + 1, "hi": min(n, lo + step)},
                )
            print(f"    {state}: {n:,} rows, {time.perf_counter() - t0:.0f} s", flush=True)
        for table, name, definition in reversed(constraints):
            conn.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
        for _, definition in indexes:
            conn.execute(definition)
        conn.execute("ALTER TABLE azync_jobs ENABLE TRIGGER USER")
        conn.execute("VACUUM ANALYZE azync_jobs")


def sqlite_load(path: str, rows: int) -> float:
    t0 = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    now = time.time_ns() // 1000
    day = 86_400_000_000
    conn.execute("BEGIN IMMEDIATE")
    for state, n in layout(rows).items():

        def gen(state: str = state, n: int = n) -> Any:
            rnd = random.Random(n)
            for i in range(n):
                r = rnd.random()
                ago = int(r * 30 * day)
                completed = None
                run_at = {
                    "dead": now - ago,
                    "pending": now - int(r * day / 24),
                    "scheduled": now + day // 24 + int(r * 7 * day),
                    "paused": now - ago,
                    "cancelled": now - ago,
                    "uncertain": now - ago,
                    "skipped": now - ago,
                    "active": now - int(r * 60_000_000),
                }.get(state, 0)
                if state == "skipped":
                    completed = run_at + 1_000_000
                if state == "succeeded":
                    completed = now - 40 * day - int(r * day) if i % 50 == 0 else now - ago
                    run_at = completed - 2_000_000
                yield (
                    str(uuid.uuid4()),
                    f"bench.k{i % KINDS:02d}",
                    state,
                    run_at,
                    now + 300_000_000 if state == "active" else None,
                    str(uuid.uuid4()) if state == "active" else None,
                    f'{{"i":{i}}}',
                    f"boom: {i}" if state == "dead" else None,
                    run_at - 60_000_000,
                    completed,
                    now - int(rnd.random() * 30 * day) if state == "dead" and i % 100 else None,
                    now,
                    now,
                )

        conn.executemany(
            "INSERT INTO azync_jobs (id, source, kind, state, run_at, lease_until, lease_token,"
            " max_attempts, attempt, payload, last_error, enqueued_at, completed_at, failed_at,"
            " created_at, updated_at)"
            " VALUES (?, 'queue', ?, ?, ?, ?, ?, 25, 1, ?, ?, ?, ?, ?, ?, ?)",
            gen(),
        )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()
    return time.perf_counter() - t0


# --- measurement helpers ---------------------------------------------------------------------


class SeqScans:
    """Sequential scans of azync_jobs on PostgreSQL (cumulative statistics)."""

    def __init__(self, dsn: str | None) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True) if dsn else None

    def read(self) -> int:
        if self.conn is None:
            return 0
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        row = self.conn.execute(
            "SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = %s"
            " AND relname = 'azync_jobs'",
            (SCHEMA,),
        ).fetchone()
        return int(row[0]) if row else 0


def measure(
    rec: Recorder,
    backend: str,
    scans: SeqScans,
    metric: str,
    fn: Callable[[], Any],
    repeat: int,
    note: str = "",
    plans: Plans | None = None,
) -> float:
    t0 = time.perf_counter()
    # Warm the cache once (the figures are steady-state reads), EXPLAINing what ran.
    planned: list[str] = []
    if plans is None:
        fn()
    else:
        planned = plans.seq_scans(fn)
    took = time.perf_counter() - t0
    if took > 1.0:
        repeat = 2 if took < 5.0 else 1  # a read this slow shows its cost at once
    before = scans.read()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    seq = (scans.read() - before) / repeat
    # The stats collector reports with a short delay; a second look catches stragglers.
    if scans.conn is not None and seq == 0:
        time.sleep(0.6)
        seq = (scans.read() - before) / repeat
    m = median(times)
    full = f"median of {repeat}" + (f", {seq:g} seq scans/call" if scans.conn else "")
    if plans is not None and plans.conn is not None:
        full += f", EXPLAIN: {len(planned)} seq scan plans"
        for text in planned:
            print(f"    seq scan planned: {text}", flush=True)
    rec.add(
        backend,
        metric,
        m,
        "ms",
        f"{note}; {full}" if note else full,
        seq_scan_plans=len(planned),
        runs=[round(t, 3) for t in times],
    )
    return m


def profile(
    rec: Recorder, backend: str, plans: Plans, metric: str, fn: Callable[[], Any], repeat: int
) -> None:
    """Where a read's time goes: each statement ``fn`` runs, timed alone on the EXPLAIN
    connection (median of ``repeat``, the round trip included), with the server's own
    execution time and heap fetches (EXPLAIN ANALYZE) of each SELECT."""
    if plans.conn is None:
        return
    plans.seen = []
    try:
        fn()
    finally:
        seen, plans.seen = plans.seen, None
    for i, (query, params) in enumerate(seen, 1):
        text = query if isinstance(query, str) else query.as_string(plans.conn)
        if not text.strip():
            # psycopg_pool's check of a connection on checkout (an empty query): one
            # round trip each time the store takes a connection.
            text = "SELECT 1"
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            plans.conn.execute(text, params).fetchall()
            times.append((time.perf_counter() - t0) * 1000)
        words = " ".join(text.split())
        note = (
            "the pool's connection check (timed as SELECT 1)" if text == "SELECT 1" else words[:60]
        )
        if words.upper().startswith(("SELECT", "WITH")):
            row = plans.conn.execute(
                f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {text}", params
            ).fetchone()
            plan = row[0][0] if row else {}
            note += (
                f"; server {plan.get('Execution Time', 0):.1f} ms,"
                f" {_sum_plan(plan.get('Plan', {}), 'Heap Fetches')} heap fetches,"
                f" {_sum_plan(plan.get('Plan', {}), 'Actual Rows')} scan rows (per loop)"
            )
        rec.add(backend, f"{metric} profile, statement {i}", median(times), "ms", note)


def _sum_plan(node: dict[str, Any], key: str) -> int:
    """``key`` summed over the scan nodes of a plan (rows read, heap fetches)."""
    own = int(node.get(key, 0)) if "Scan" in node.get("Node Type", "") else 0
    return own + sum(_sum_plan(child, key) for child in node.get("Plans", []))


class TxSampler(threading.Thread):
    """Longest transaction age of the admin connection, sampled every 10 ms (PostgreSQL)."""

    def __init__(self, dsn: str) -> None:
        super().__init__(daemon=True)
        self.dsn = dsn
        self.longest = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while not self.stop.is_set():
                row = conn.execute(
                    "SELECT EXTRACT(EPOCH FROM max(clock_timestamp() - xact_start))"
                    " FROM pg_stat_activity WHERE application_name = %s"
                    " AND xact_start IS NOT NULL",
                    (ADMIN_APP,),
                ).fetchone()
                if row and row[0] is not None:
                    self.longest = max(self.longest, float(row[0]))
                time.sleep(0.01)


class Workers:
    """Two threads leasing and acking a live kind, fed by a producer thread; records
    each ``dequeue_batch`` call's latency with a phase label."""

    def __init__(self, store: AnyStore, rate: float = 50.0) -> None:
        self.store = store
        self.rate = rate
        self.phase = "idle"
        self.lat: dict[str, list[float]] = {}
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.work) for _ in range(2)]
        self.threads.append(threading.Thread(target=self.produce))

    def produce(self) -> None:
        while not self.stop.is_set():
            self.store.enqueue(EnqueueParams(kind="bench.live", payload={}))
            time.sleep(1 / self.rate)

    def work(self) -> None:
        p = DequeueParams(kind="bench.live", limit=10, lease=timedelta(minutes=5))
        while not self.stop.is_set():
            t0 = time.perf_counter()
            jobs = self.store.dequeue_batch(Source.QUEUE, p)
            self.lat.setdefault(self.phase, []).append((time.perf_counter() - t0) * 1000)
            for j in jobs:
                assert j.lease_token is not None
                self.store.ack(j.id, j.lease_token)
            if not jobs:
                time.sleep(0.02)

    def __enter__(self) -> Workers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


# --- the scenario ----------------------------------------------------------------------------


def run(
    rec: Recorder,
    backend: str,
    admin: AnyStore,
    work: AnyStore,
    dsn: str | None,
    q: bool,
    reads_only: bool = False,
) -> None:
    scans = SeqScans(dsn)
    plans = Plans(dsn, "azync_jobs", SCHEMA)
    if plans.conn is not None:  # a kept database: measure without the tuning first
        for name in CONSOLE_INDEXES:
            plans.conn.execute(f"DROP INDEX IF EXISTS {name}")
    repeat = 3 if q else 5
    src = Source.QUEUE
    measure(
        rec,
        backend,
        scans,
        "kind_depths",
        lambda: admin.kind_depths(src),
        repeat,
        "exact (the Go read)",
    )
    _, estimated = admin.live_depths(src)
    measure(
        rec,
        backend,
        scans,
        "live_depths",
        lambda: admin.live_depths(src),
        repeat,
        "the refresh path" + (", estimates marked" if estimated else ", exact"),
        plans,
    )
    if plans is not None:
        profile(rec, backend, plans, "live_depths", lambda: admin.live_depths(src), repeat)
    # The console's reads (the dashboard's jobs tab and `qctl jobs list`): a keyset page
    # and its count, for every state and for all states.
    states: list[JobState | None] = [*PAGED_STATES, None]
    for state in states:
        name = state or "any state"
        search = JobSearch(source=src, state=state)
        measure(
            rec,
            backend,
            scans,
            f"search_jobs {name} first page",
            lambda s=search: admin.search_jobs(s, 50),  # type: ignore[misc]
            repeat,
            "page of 50, keyset",
            plans,
        )
        n, est = admin.count_jobs(search)
        measure(
            rec,
            backend,
            scans,
            f"count_jobs {name}",
            lambda s=search: admin.count_jobs(s),  # type: ignore[misc]
            repeat,
            f"{n:,}, {'estimated' if est else 'exact'}",
            plans,
        )
    newest_dead = JobSearch(source=src, state=JobState.DEAD, reverse=True)
    # 5,000 deep, or half way on a small table (a page past the last row is empty).
    depth = min(5000, admin.count_jobs(newest_dead, exact=True)[0] // 2)
    deep_dead = admin.job_cursor(admin.search_jobs(newest_dead, depth)[-1], JobState.DEAD)
    dead_pages: list[tuple[str, Callable[[], Any]]] = [
        ("search_jobs dead newest first page", lambda: admin.search_jobs(newest_dead, 50)),
        (
            f"search_jobs dead newest first, {depth:,} deep",
            lambda: admin.search_jobs(newest_dead, 50, after=deep_dead),
        ),
    ]
    for metric, fn in dead_pages:
        measure(rec, backend, scans, metric, fn, repeat, "failure order, keyset", plans)
    if isinstance(admin, PostgresStore):
        # azync's schema has no index for paused, cancelled, uncertain or skipped jobs:
        # the console's opt-in ones. Throughput before and after (partial without them).
        hour = timedelta(hours=1)
        measure(
            rec,
            backend,
            scans,
            "throughput 1h by minute, untuned",
            lambda: admin.throughput(src, hour, timedelta(minutes=1)),
            repeat,
            "partial: leaves out " + ", ".join(s.value for s in admin.throughput_omits()),
            plans,
        )
        t0 = time.perf_counter()
        created = admin.tune()
        rec.add(
            backend,
            "tune (CREATE INDEX CONCURRENTLY)",
            (time.perf_counter() - t0) * 1000,
            "ms",
            ", ".join(created) or "already there",
        )
        tuned: list[tuple[str, Callable[[], Any]]] = [
            ("live_depths, tuned", lambda: admin.live_depths(src)),
            (
                "throughput 1h by minute, tuned",
                lambda: admin.throughput(src, hour, timedelta(minutes=1)),
            ),
        ]
        unindexed = (JobState.PAUSED, JobState.CANCELLED, JobState.UNCERTAIN, JobState.SKIPPED)
        for state in unindexed:
            search = JobSearch(source=src, state=state)
            tuned.append(
                (
                    f"count_jobs {state}, tuned",
                    lambda s=search: admin.count_jobs(s),  # type: ignore[misc]
                )
            )
        # every first page an index of `db tune` serves (dead: azync's order, oldest
        # failure first; the dashboard's newest first is among dead_pages)
        for state in (*unindexed, JobState.DEAD):
            search = JobSearch(source=src, state=state)
            tuned.append(
                (
                    f"search_jobs {state} first page, tuned",
                    lambda s=search: admin.search_jobs(s, 50),  # type: ignore[misc]
                )
            )
        tuned += [(f"{metric}, tuned", fn) for metric, fn in dead_pages]
        for metric, fn in tuned:
            measure(rec, backend, scans, metric, fn, repeat, "with qctl db tune's indexes", plans)
        if plans is not None:
            profile(
                rec, backend, plans, "live_depths, tuned", lambda: admin.live_depths(src), repeat
            )
    # The Go contract's read: a page with the exact total of its state.
    for state in PAGED_STATES:
        measure(
            rec,
            backend,
            scans,
            f"list_jobs {state} first page",
            lambda s=state: admin.list_jobs(src, JobFilter(state=s), 0, 50),  # type: ignore[misc]
            repeat,
            "page of 50 + exact total (the Go read)",
        )
    succeeded = JobSearch(source=src, state=JobState.SUCCEEDED)
    measure(
        rec,
        backend,
        scans,
        "count_jobs succeeded, exact=True",
        lambda: admin.count_jobs(succeeded, exact=True),
        1 if not q else 2,
        "on demand only",
    )
    depth = 100_000 if not q else 10_000
    first = measure(
        rec,
        backend,
        scans,
        "search_jobs succeeded page 1 (keyset)",
        lambda: admin.search_jobs(succeeded, 50),
        repeat,
    )
    deep_jobs, _ = admin.list_jobs(src, JobFilter(state=JobState.SUCCEEDED), depth - 1, 1)
    cursor = admin.job_cursor(deep_jobs[0], JobState.SUCCEEDED)
    keyset = measure(
        rec,
        backend,
        scans,
        f"search_jobs succeeded {depth:,} rows deep (keyset)",
        lambda: admin.search_jobs(succeeded, 50, after=cursor),
        repeat,
        "",
        plans,
    )
    offset = measure(
        rec,
        backend,
        scans,
        f"list_jobs succeeded {depth:,} rows deep (offset)",
        lambda: admin.list_jobs(src, JobFilter(state=JobState.SUCCEEDED), depth, 50),
        repeat,
        "page of 50 + exact total",
    )
    rec.add(backend, "deep keyset page / first page", keyset / first, "x", f"depth {depth:,}")
    rec.add(backend, "deep offset page / first page", offset / first, "x", f"depth {depth:,}")

    if reads_only:
        return
    with Workers(work) as w:
        time.sleep(3 if q else 8)
        sampler = TxSampler(dsn) if dsn else None
        if sampler:
            sampler.start()
        w.phase = "retry"
        t0 = time.perf_counter()
        revived = admin.retry_all_dead(src)
        took = time.perf_counter() - t0
        w.phase = "after"
        if sampler:
            sampler.stop.set()
            sampler.join()
    idle, during = w.lat.get("idle", []), w.lat.get("retry", [])
    rec.add(backend, "retry_all_dead", took * 1000, "ms", f"{revived:,} jobs revived")
    if sampler:
        rec.add(
            backend,
            "retry_all_dead longest transaction",
            sampler.longest * 1000,
            "ms",
            "sampled from pg_stat_activity every 10 ms",
        )
    rec.add(backend, "lease latency idle p50", median(idle), "ms", f"{len(idle)} calls")
    rec.add(backend, "lease latency idle p99", pct(idle, 0.99), "ms", f"{len(idle)} calls")
    rec.add(backend, "lease latency during retry p50", median(during), "ms", f"{len(during)} calls")
    rec.add(
        backend, "lease latency during retry p99", pct(during, 0.99), "ms", f"{len(during)} calls"
    )
    sampler = TxSampler(dsn) if dsn else None
    if sampler:
        sampler.start()
    t0 = time.perf_counter()
    deleted = admin.vacuum_completed(src, timedelta(days=30))
    took = time.perf_counter() - t0
    if sampler:
        sampler.stop.set()
        sampler.join()
    rec.add(backend, "vacuum_completed", took * 1000, "ms", f"{deleted:,} rows deleted")
    if sampler:
        rec.add(
            backend,
            "vacuum_completed longest transaction",
            sampler.longest * 1000,
            "ms",
            "sampled from pg_stat_activity every 10 ms",
        )


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    ap.add_argument("--backends", default="postgres,sqlite")
    ap.add_argument("--rows", type=int, default=None, help="PostgreSQL table size")
    ap.add_argument("--sqlite-rows", type=int, default=None)
    # a run with the bulk actions drops it afterwards: they change the data
    kept_args(ap, "the PostgreSQL table")
    ap.add_argument(
        "--reads-only", action="store_true", help="skip the bulk actions (they change the data)"
    )
    args = ap.parse_args()
    if args.drop_db:
        drop_database(args.pg, args.db)
        return
    rec = Recorder(args.json, "admin", "qctl")
    backends = args.backends.split(",")
    if "postgres" in backends:
        rows = args.rows or (200_000 if args.quick else 10_000_000)
        print(f"== qctl admin on postgres, {rows:,} rows", flush=True)
        layout_name = f"qctl bench layout v{LAYOUT_VERSION} {rows} rows"
        with loaded_database(
            rec, args.pg, args.db, "qctl_bench_admin", f"{SCHEMA}.azync_jobs", layout_name,
            lambda dsn: pg_fresh(dsn, rows),
        ) as dsn:  # fmt: skip
            setup = PostgresStore(dsn, Config(schema=SCHEMA))
            setup.migrate()  # a kept schema brought up to date
            setup.close()
            rec.add(
                "postgres",
                "table size",
                rows,
                "rows",
                ", ".join(f"{k} {v:,}" for k, v in layout(rows).items()),
            )
            admin = PostgresStore(dsn, Config(schema=SCHEMA, application_name=ADMIN_APP))
            work = PostgresStore(dsn, Config(schema=SCHEMA))
            try:
                run(rec, "postgres", admin, work, dsn, args.quick, args.reads_only)
            finally:
                admin.close()
                work.close()
        if args.db and not args.reads_only:
            # The bulk actions changed the kept data: the next run loads it afresh.
            drop_database(args.pg, args.db)
            print(f"  dropped {args.db} (the bulk actions changed its data)", flush=True)
    if "sqlite" in backends:
        rows = args.sqlite_rows or (100_000 if args.quick else 500_000)
        print(f"== qctl admin on sqlite, {rows:,} rows", flush=True)
        path = sqlite_file("admin.db")
        store = SqliteStore(path)
        store.migrate()
        store.close()
        took = sqlite_load(path, rows)
        print(f"  loaded {rows:,} rows in {took:.0f} s (SQL, not measured)", flush=True)
        rec.add(
            "sqlite",
            "table size",
            rows,
            "rows",
            ", ".join(f"{k} {v:,}" for k, v in layout(rows).items()),
        )
        lite_admin = SqliteStore(path)
        lite_work = SqliteStore(path)
        try:
            run(rec, "sqlite", lite_admin, lite_work, None, args.quick, args.reads_only)
        finally:
            lite_admin.close()
            lite_work.close()


if __name__ == "__main__":
    main()
