"""What-if: where qctl's PostgreSQL enqueue and ack time goes, measured in one process.

    .venv/bin/python bench/whatif_roundtrips.py [--quick] [--pg DSN] [--json out.jsonl]

Not a qctl API figure: each pair runs the store's call, then the same database effect
issued another way, to size the fixes proposed in docs/benchmarks.md.

- enqueue: ``store.enqueue()`` (a pool checkout, then one autocommit statement over
  the batch's JSON document) against one autocommit statement of scalar parameters
  doing the insert, the stats upsert and the NOTIFY as CTEs;
- batched enqueue, 500 jobs per transaction: ``enqueue_many_tx()``; its statement with
  the documents built beforehand; a minimal ``INSERT ... SELECT FROM unnest(...)`` with
  one stats upsert and one NOTIFY per kind; the bare insert with triggers off;
- what azync's schema costs: the fused enqueue with the change triggers off (no NOTIFY
  per commit) and the bare insert; burn-down with ``ack_many`` as shipped and with the
  change triggers off;
- client CPU a job (``time.process_time``, the whole process: a figure load moves far
  less than a rate) of each hot path, one thread: ``enqueue_many_tx`` (500 a call and
  transaction), ``enqueue``, ``dequeue_batch`` (50 a lease) and ``ack_many`` (50 a call);
- ack: burn-down with 4 threads as in scenario 2, as shipped; then with the pool's
  per-checkout check off and single-statement writes in autocommit (no BEGIN/COMMIT
  round trips); then additionally with ``synchronous_commit = off`` for the session.

The table layout is qctl's (azync's); the statements below are written for this
experiment only.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg
from common import Recorder, base_args, scratch_database

from qctl_kit.postgres.connect import mapped_errors
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.postgres.base import PgBase
from qctl_store.types import DequeueParams, EnqueueParams, Source

SCHEMA = "qctl_bench"

_CONFLICT = (
    "ON CONFLICT (source, kind, idempotency_key) WHERE idempotency_key IS NOT NULL"
    " AND state <> ALL (ARRAY['dead'::text, 'succeeded'::text]) DO NOTHING"
)
FUSED_ONE = f"""
WITH ins AS (
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                            max_attempts_explicit, payload, meta, enqueued_at)
    VALUES (%(id)s, 'queue', %(kind)s, 'pending', now(), 0, false, %(payload)s::jsonb,
            '{{}}'::jsonb, now())
    {_CONFLICT}
    RETURNING kind),
st AS (
    INSERT INTO azync_stats_daily (source, kind, day, slot, enqueued)
    SELECT 'queue', kind, CURRENT_DATE, %(slot)s, 1 FROM ins
    ON CONFLICT (source, kind, day, slot)
    DO UPDATE SET enqueued = azync_stats_daily.enqueued + 1 RETURNING 1)
SELECT pg_notify(%(channel)s, 'queue:' || kind) FROM ins
"""
FUSED_MANY = f"""
WITH ins AS (
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                            max_attempts_explicit, payload, meta, enqueued_at)
    SELECT u.id, 'queue', u.kind, 'pending', now(), 0, false, u.payload, '{{}}'::jsonb, now()
    FROM unnest(%(ids)s::uuid[], %(kinds)s::text[], %(payloads)s::jsonb[])
         AS u(id, kind, payload)
    {_CONFLICT}
    RETURNING kind),
k AS (SELECT kind, count(*) AS n FROM ins GROUP BY kind),
st AS (
    INSERT INTO azync_stats_daily (source, kind, day, slot, enqueued)
    SELECT 'queue', kind, CURRENT_DATE, %(slot)s, n FROM k
    ON CONFLICT (source, kind, day, slot)
    DO UPDATE SET enqueued = azync_stats_daily.enqueued + EXCLUDED.enqueued RETURNING 1)
SELECT pg_notify(%(channel)s, 'queue:' || kind) FROM k
"""


INSERT_MANY = """
INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, max_attempts_explicit,
                        payload, meta, enqueued_at)
SELECT u.id, 'queue', u.kind, 'pending', now(), 0, false, u.payload, '{}'::jsonb, now()
FROM unnest(%(ids)s::uuid[], %(kinds)s::text[], %(payloads)s::jsonb[]) AS u(id, kind, payload)
"""


INSERT_ONE = """
INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, max_attempts_explicit,
                        payload, meta, enqueued_at)
VALUES (%(id)s, 'queue', %(kind)s, 'pending', now(), 0, false, %(payload)s::jsonb,
        '{}'::jsonb, now())
"""


def single(conn: psycopg.Connection[Any], sql: str, n: int, channel: str) -> float:
    """Jobs per second of ``n`` autocommit executions of ``sql``, one job each."""
    t0 = time.perf_counter()
    for i in range(n):
        args = {"id": uuid.uuid4(), "kind": "one", "payload": json.dumps({"i": i})}
        conn.execute(sql, {**args, "slot": random.randrange(8), "channel": channel})
    return n / (time.perf_counter() - t0)


def burn(store: PostgresStore, kind: str, seconds: float, many: bool = False) -> float:
    p = DequeueParams(kind=kind, limit=50, lease=timedelta(minutes=5))
    count = [0]
    stop = threading.Event()
    lock = threading.Lock()

    def work() -> None:
        while not stop.is_set():
            jobs = store.dequeue_batch(Source.QUEUE, p)
            if many:
                store.ack_many([(j.id, j.lease_token) for j in jobs if j.lease_token])
            for j in [] if many else jobs:
                assert j.lease_token is not None
                store.ack(j.id, j.lease_token)
            with lock:
                count[0] += len(jobs)

    threads = [threading.Thread(target=work) for _ in range(4)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return count[0] / (time.perf_counter() - t0)


@contextlib.contextmanager
def client_cpu(rec: Recorder, store: PostgresStore, dsn: str, batches: int) -> None:
    """Client CPU a job of the queue's hot paths: each path's calls, one after the other
    in this thread, over the jobs the enqueues before them wrote."""
    kind = "cpu"
    jobs: list[Any] = []

    def per_job(path: str, n: int, calls: Callable[[], None]) -> None:
        t0 = time.process_time()
        calls()
        rec.add("postgres", f"client CPU a job, {path}", (time.process_time() - t0) / n * 1e6, "us")

    def many() -> None:
        with psycopg.connect(dsn) as pg:
            for _ in range(batches):
                chunk = [EnqueueParams(kind=kind, payload={"i": i}) for i in range(500)]
                with pg.transaction():
                    store.enqueue_many_tx(pg, chunk)

    def single() -> None:
        for i in range(batches * 50):
            store.enqueue(EnqueueParams(kind=kind, payload={"i": i}))

    def lease() -> None:
        while batch := store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=50)):
            jobs.extend(batch)

    def ack() -> None:
        for lo in range(0, len(jobs), 50):
            store.ack_many([(j.id, j.lease_token) for j in jobs[lo : lo + 50] if j.lease_token])

    per_job("enqueue_many_tx (500/call and tx)", batches * 500, many)
    per_job("enqueue", batches * 50, single)
    per_job("dequeue_batch (50/lease)", batches * 550, lease)
    per_job("ack_many (50/call)", len(jobs), ack)


def autocommit_tx(self: PgBase) -> Iterator[Any]:
    """``PgBase.tx`` without BEGIN/COMMIT: exact for the single-statement writes that
    dequeue_batch and ack issue (one statement is atomic on its own)."""
    with mapped_errors(self.dsn), self._provider.connection() as conn, conn.cursor() as cur:
        yield cur


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    args = ap.parse_args()
    rec = Recorder(args.json, "whatif", "qctl")
    n, batches, seconds = (300, 4, 5.0) if args.quick else (1500, 20, 15.0)
    with scratch_database(args.pg, "qctl_bench_whatif") as dsn:
        store = PostgresStore(dsn, Config(schema=SCHEMA))
        store.migrate()
        conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={SCHEMA}")
        channel = store.config.channel
        client_cpu(rec, store, dsn, batches)

        t0 = time.perf_counter()
        for i in range(n):
            store.enqueue(EnqueueParams(kind="one", payload={"i": i}))
        rec.add("postgres", "enqueue, as shipped", n / (time.perf_counter() - t0), "jobs/s")
        t0 = time.perf_counter()
        for i in range(n):
            conn.execute(
                FUSED_ONE,
                {
                    "id": uuid.uuid4(),
                    "kind": "one",
                    "payload": json.dumps({"i": i}),
                    "slot": random.randrange(8),
                    "channel": channel,
                },
            )
        rec.add(
            "postgres",
            "enqueue, one fused autocommit statement",
            n / (time.perf_counter() - t0),
            "jobs/s",
        )
        # What azync's schema costs each commit: the same statement with the change
        # triggers off (session_replication_role = replica skips them: no NOTIFY per
        # commit), then the bare insert (no stats row, no wake, no triggers).
        conn.execute("SET session_replication_role = replica")
        rec.add(
            "postgres",
            "enqueue, fused statement, change triggers off",
            single(conn, FUSED_ONE, n, channel),
            "jobs/s",
            "no azync_changes NOTIFY per commit",
        )
        rec.add(
            "postgres",
            "enqueue, the insert alone, triggers off",
            single(conn, INSERT_ONE, n, channel),
            "jobs/s",
            "no stats row, no wake NOTIFY, no change NOTIFY",
        )
        conn.execute("RESET session_replication_role")

        # Batched enqueue, one step down at a time: the call; its statement with the
        # documents built beforehand (no Python per job); the same insert, stats and
        # wake in a minimal statement (no dedupe, three columns); the bare insert with
        # the change trigger and the foreign keys off, which is what azync's table
        # itself costs (its partial indexes, three foreign keys, jsonb payloads).
        def batches_of() -> list[list[EnqueueParams]]:
            return [
                [EnqueueParams(kind="many", payload={"i": i}) for i in range(500)]
                for _ in range(batches + 1)
            ]

        def rate(calls: list[Callable[[], Any]]) -> float:
            """Jobs per second of 500-job transactions after the first, which warms the
            statement up (psycopg prepares it on its sixth execution)."""
            with conn.transaction():
                calls[0]()
            t0 = time.perf_counter()
            for call in calls[1:]:
                with conn.transaction():
                    call()
            return (len(calls) - 1) * 500 / (time.perf_counter() - t0)

        def execute(sql: str, params: dict[str, Any]) -> Callable[[], Any]:
            return lambda: conn.execute(sql, params)

        def unnest_args() -> dict[str, Any]:
            return {
                "ids": [uuid.uuid4() for _ in range(500)],
                "kinds": ["many"] * 500,
                "payloads": [json.dumps({"i": i}) for i in range(500)],
                "slot": random.randrange(8),
                "channel": channel,
            }

        def enqueue_many(chunk: list[EnqueueParams]) -> Callable[[], Any]:
            return lambda: store.enqueue_many_tx(conn, chunk)

        rec.add(
            "postgres",
            "batched enqueue (500/tx), enqueue_many_tx as shipped",
            rate([enqueue_many(chunk) for chunk in batches_of()]),
            "jobs/s",
        )
        built = [store._enqueue_batch(c) for c in batches_of()]
        rec.add(
            "postgres",
            "batched enqueue (500/tx), its statement, documents built beforehand",
            rate([execute(b.sql, b.args) for b in built]),
            "jobs/s",
            "no Python per job",
        )
        rec.add(
            "postgres",
            "batched enqueue (500/tx), one minimal unnest statement",
            rate([execute(FUSED_MANY, unnest_args()) for _ in range(batches + 1)]),
            "jobs/s",
            "insert, stats and wake; no dedupe; arguments built beforehand",
        )
        conn.execute("SET session_replication_role = replica")
        rec.add(
            "postgres",
            "batched enqueue (500/tx), the insert alone, triggers and foreign keys off",
            rate([execute(INSERT_MANY, unnest_args()) for _ in range(batches + 1)]),
            "jobs/s",
            "azync's table: no stats row, no wake, no change NOTIFY, no FK checks",
        )
        conn.execute("RESET session_replication_role")

        # One kind per variant: acked rows leave dead entries in the pending index that
        # slow the next lease scans of the same kind, which would favour the first variant.
        for kind in ("burn_a", "burn_b", "burn_c", "burn_m", "burn_t"):
            conn.execute(
                "INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,"
                " payload, enqueued_at) SELECT gen_random_uuid(), 'queue', %s, 'pending',"
                " now() - interval '1 hour', 25, '{}', now() FROM generate_series(1, 150000)",
                (kind,),
            )
        conn.execute("VACUUM ANALYZE azync_jobs")
        rec.add(
            "postgres", "burn-down 4 threads, as shipped", burn(store, "burn_a", seconds), "jobs/s"
        )
        rec.add(
            "postgres",
            "burn-down 4 threads, ack_many, as shipped",
            burn(store, "burn_m", seconds, many=True),
            "jobs/s",
        )
        store.close()
        db = dsn.rsplit("/", 1)[1]
        conn.execute(f"ALTER DATABASE {db} SET session_replication_role = replica")
        store = PostgresStore(dsn, Config(schema=SCHEMA))
        rec.add(
            "postgres",
            "burn-down 4 threads, ack_many, change triggers off",
            burn(store, "burn_t", seconds, many=True),
            "jobs/s",
            "no azync_changes NOTIFY per lease and per ack commit",
        )
        store.close()
        conn.execute(f"ALTER DATABASE {db} RESET session_replication_role")
        store = PostgresStore(dsn, Config(schema=SCHEMA))
        original = PgBase.tx
        try:
            store._provider._check = None  # type: ignore[union-attr]
            PgBase.tx = autocommit_tx  # type: ignore[method-assign]
            rec.add(
                "postgres",
                "burn-down, no pool check, autocommit single statements",
                burn(store, "burn_b", seconds),
                "jobs/s",
            )
            store.close()
            conn.execute(f"ALTER DATABASE {dsn.rsplit('/', 1)[1]} SET synchronous_commit = off")
            store = PostgresStore(dsn, Config(schema=SCHEMA))
            store._provider._check = None  # type: ignore[union-attr]
            rec.add(
                "postgres",
                "burn-down, as above + synchronous_commit off",
                burn(store, "burn_c", seconds),
                "jobs/s",
            )
        finally:
            PgBase.tx = original  # type: ignore[method-assign]
            store.close()
            conn.close()


if __name__ == "__main__":
    main()
