"""Change-hint latency: from an enqueue's commit to the hint reaching a subscriber.

    .venv/bin/python bench/hint_latency.py [--n 200] [--gap-ms 20] [--pg DSN] [--no-pg]
                                           [--storm 20000]

For each backend: open a store on a scratch database (a temporary SQLite file; a fresh
PostgreSQL schema, dropped afterwards), subscribe to ``changes()``, wait for the
opening reset, then enqueue ``n`` jobs one at a time, ``gap-ms`` apart. A consumer
thread stamps each job's hint on arrival. Two latencies per job:

- ``call``: from the start of ``enqueue()`` (an upper bound: it includes the insert,
  the commit and, on PostgreSQL, the post-commit wake notify);
- ``return``: from ``enqueue()`` returning (the commit is durable by then; a hint can
  beat the return, which shows as a latency near zero).

Prints median and p95 in milliseconds per backend.

``--storm N`` (PostgreSQL) also times how far the listener falls behind when another
schema of the database commits N hints in one transaction: the delay from that commit
to the hint of one job enqueued right after it in the store's own schema. Every schema
shares the ``azync_changes`` channel, so this is the cost of skipping foreign payloads.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable

import psycopg

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import ChangeEntity, EnqueueParams

DEFAULT_PG = os.environ.get("QCTL_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def measure(store: PostgresStore | SqliteStore, n: int, gap: float) -> dict[str, list[float]]:
    sub = store.changes()
    assert sub is not None
    arrived: dict[uuid.UUID, float] = {}
    done = threading.Event()
    wanted = n

    def consume() -> None:
        for change in sub:
            if change.entity == ChangeEntity.JOB and change.id is not None:
                arrived.setdefault(change.id, time.perf_counter())
                if len(arrived) >= wanted:
                    done.set()

    first = sub.get(timeout=10)
    assert first is not None and first.entity == ChangeEntity.RESET, "no opening reset"
    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    started: dict[uuid.UUID, tuple[float, float]] = {}
    kind = f"bench_hint_{uuid.uuid4().hex[:8]}"
    for _ in range(n):
        p = EnqueueParams(kind=kind, payload={})
        t0 = time.perf_counter()
        store.enqueue(p)
        started[p.id] = (t0, time.perf_counter())
        time.sleep(gap)
    done.wait(timeout=30)
    sub.close()
    consumer.join(timeout=5)
    call = [(arrived[i] - t0) * 1000 for i, (t0, _) in started.items() if i in arrived]
    ret = [max(0.0, (arrived[i] - t1) * 1000) for i, (_, t1) in started.items() if i in arrived]
    return {"call": call, "return": ret, "lost": [float(n - len(call))]}


def report(name: str, run: Callable[[], dict[str, list[float]]]) -> None:
    r = run()
    print(f"{name}: {len(r['call'])} hints, {int(r['lost'][0])} lost")
    for key in ("call", "return"):
        values = r[key]
        if values:
            print(
                f"  from enqueue {key:<6}  median {statistics.median(values):7.2f} ms"
                f"   p95 {p95(values):7.2f} ms   max {max(values):7.2f} ms"
            )


def sqlite_run(n: int, gap: float) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(os.path.join(tmp, "bench.db"))
        try:
            store.migrate()
            return measure(store, n, gap)
        finally:
            store.close()


def pg_run(dsn: str, n: int, gap: float) -> dict[str, list[float]]:
    schema = f"qctl_bench_{uuid.uuid4().hex[:8]}"
    store = PostgresStore(dsn, Config(schema=schema))
    try:
        store.migrate()
        return measure(store, n, gap)
    finally:
        store.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


STORM_INSERT = """
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload, enqueued_at)
    SELECT gen_random_uuid(), 'queue', 'storm', 'pending', now(), 1, '{}'::jsonb, now()
    FROM generate_series(1, 40)
"""


def storm_lag(dsn: str, hints: int) -> float:
    """Seconds from a foreign schema's storm commit to the next own hint arriving."""
    own, other = (
        PostgresStore(dsn, Config(schema=f"qctl_bench_{uuid.uuid4().hex[:8]}")) for _ in "ab"
    )
    try:
        own.migrate()
        other.migrate()
        sub = own.changes()
        assert sub is not None
        first = sub.get(timeout=10)
        assert first is not None and first.entity == ChangeEntity.RESET, "no opening reset"
        with psycopg.connect(dsn, options=f"-c search_path={other.schema}") as conn:
            for _ in range(hints // 40):  # 40 rows a statement: under the bulk cap
                conn.execute(STORM_INSERT)
        started = time.perf_counter()
        marker = EnqueueParams(kind="marker", payload={})
        own.enqueue(marker)
        while (change := sub.get(timeout=60)) is not None and change.id != marker.id:
            pass
        return time.perf_counter() - started
    finally:
        for store in (own, other):
            store.close()
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{store.schema}" CASCADE')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--gap-ms", type=float, default=20.0)
    ap.add_argument("--pg", default=DEFAULT_PG)
    ap.add_argument("--no-pg", action="store_true")
    ap.add_argument("--storm", type=int, default=0, metavar="N")
    args = ap.parse_args()
    gap = args.gap_ms / 1000
    report("sqlite", lambda: sqlite_run(args.n, gap))
    if not args.no_pg:
        report("postgres", lambda: pg_run(args.pg, args.n, gap))
    if args.storm and not args.no_pg:
        lag = storm_lag(args.pg, args.storm)
        print(f"postgres: own hint {lag * 1000:.0f} ms after a {args.storm}-hint foreign storm")


if __name__ == "__main__":
    main()
