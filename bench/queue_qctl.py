"""Scenarios 1 to 4 for qctl_store, on PostgreSQL and on SQLite.

    .venv/bin/python bench/queue_qctl.py [--quick] [--pg DSN] [--json out.jsonl]
        [--backends postgres,sqlite] [--scenarios 1,2,3,4,w] [--vacuum-every SECONDS]

1. Enqueue: one job per ``enqueue()`` call (one transaction each), then batched: one
   ``enqueue_many_tx()`` call per caller transaction (on a table holding the single
   enqueues' jobs, as the peers' batches do), and many ``enqueue_tx()`` calls inside one
   caller transaction (PostgreSQL: plain, and inside a psycopg pipeline; SQLite: one
   ``BEGIN IMMEDIATE`` on the caller's connection).
2. Burn-down: jobs pre-inserted with one SQL statement (setup, not measured), then
   worker threads lease with ``dequeue_batch`` and ``ack`` each job, for a fixed time
   or until the queue is empty; jobs per second overall and per window (stability).
   What-if ``--vacuum-every``: PostgreSQL burn-downs with ``VACUUM azync_jobs`` every
   so many seconds beside the workers, as an autovacuum tuned for a queue table would
   run it: each lease walks the pending index's entries of the jobs leased before, until
   a vacuum removes them.
3. Continuous end to end: a producer process enqueues jobs at 25/50/75% of the
   measured ``ack_many`` burn-down rate, stamping the wall clock into the payload, one
   ``enqueue`` per job or, with the batch call, one ``enqueue_many`` per sender every
   10 ms for the jobs due by then; workers lease with ``dequeue_batch``, record
   enqueue-to-lease latency and ack each leased batch with ``ack_many``, waking on
   ``wake()`` or polling every second (azync's default fetch poll interval) in
   poll-only mode.
4. Change-hint overhead: scenario 1 again with a ``changes()`` watcher attached.
w. SQLite only: two writer processes enqueue concurrently (single and batched); any
   "database is locked" error is counted.

PostgreSQL runs in a scratch database created for this script and dropped at the end.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg
from common import (
    RateSampler,
    Recorder,
    base_args,
    cv,
    median,
    pct,
    scratch_database,
    sqlite_file,
    vacuuming,
)

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import DequeueParams, EnqueueParams, Source, Wake

AnyStore = PostgresStore | SqliteStore
SCHEMA = "qctl_bench"
POLL_INTERVAL = 1.0  # azync's default FetchPollInterval
SENDERS = 4  # producer threads: one alone cannot reach the higher rates
LEASE_BATCH = 50
"""Jobs leased per ``dequeue_batch`` in scenarios 2 and 3 (the peers' batch size too)."""
BATCH_TICK = 0.01
"""Seconds a batched producer's sender gathers due jobs before one ``enqueue_many``."""


def open_store(backend: str, target: str, **config: Any) -> AnyStore:
    if backend == "postgres":
        return PostgresStore(target, Config(schema=SCHEMA, **config))
    return SqliteStore(target, Config(**config))


# --- 1. enqueue -------------------------------------------------------------------------------


def enqueue_single(store: AnyStore, n: int, kind: str) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        store.enqueue(EnqueueParams(kind=kind, payload={"i": i}))
    return n / (time.perf_counter() - t0)


def enqueue_batched(
    store: AnyStore, backend: str, target: str, n: int, batch: int, kind: str, pipeline: bool
) -> float:
    """``enqueue_tx`` in caller transactions of ``batch`` jobs each; jobs per second. The
    caller's connection is opened before the clock starts, as the peers' are."""
    if isinstance(store, PostgresStore):
        with psycopg.connect(target) as pg:
            t0 = time.perf_counter()
            for start in range(0, n, batch):
                with pg.transaction(), pg.pipeline() if pipeline else contextlib.nullcontext():
                    for i in range(start, min(n, start + batch)):
                        store.enqueue_tx(pg, EnqueueParams(kind=kind, payload={"i": i}))
            return n / (time.perf_counter() - t0)
    conn = sqlite3.connect(target, isolation_level=None, timeout=30)
    try:
        t0 = time.perf_counter()
        for start in range(0, n, batch):
            conn.execute("BEGIN IMMEDIATE")
            for i in range(start, min(n, start + batch)):
                store.enqueue_tx(conn, EnqueueParams(kind=kind, payload={"i": i}))
            conn.execute("COMMIT")
        return n / (time.perf_counter() - t0)
    finally:
        conn.close()


def enqueue_many_tx(store: AnyStore, target: str, n: int, batch: int, kind: str) -> float:
    """The batch extension: one ``enqueue_many_tx`` call per caller transaction, the jobs
    built inside the clock (as the peers build their payloads), the caller's connection
    opened before it."""

    def chunks() -> Iterator[list[EnqueueParams]]:
        for lo in range(0, n, batch):
            yield [
                EnqueueParams(kind=kind, payload={"i": i}) for i in range(lo, min(n, lo + batch))
            ]

    if isinstance(store, PostgresStore):
        with psycopg.connect(target) as pg:
            t0 = time.perf_counter()
            for chunk in chunks():
                with pg.transaction():
                    store.enqueue_many_tx(pg, chunk)
            return n / (time.perf_counter() - t0)
    conn = sqlite3.connect(target, isolation_level=None, timeout=30)
    try:
        t0 = time.perf_counter()
        for chunk in chunks():
            conn.execute("BEGIN IMMEDIATE")
            store.enqueue_many_tx(conn, chunk)
            conn.execute("COMMIT")
        return n / (time.perf_counter() - t0)
    finally:
        conn.close()


def scenario_enqueue(
    rec: Recorder,
    store: AnyStore,
    backend: str,
    target: str,
    q: bool,
    label: str = "",
    pipelined: bool = True,
) -> None:
    n_single = 500 if q else 4000
    n_batch = 5000 if q else 20_000
    kind = f"bench.enq.{uuid.uuid4().hex[:6]}"
    rate = enqueue_single(store, n_single, kind)
    rec.add(backend, f"single enqueue{label}", rate, "jobs/s", f"{n_single} jobs, 1 per tx")
    batch = 500
    if not label:
        # Right after the single enqueues, as the peers' batched enqueue runs: the table
        # then holds the same 4,000 jobs. After the two enqueue_tx steps it held 44,000,
        # which cost this step 10% of its rate and 14% more WAL a job (docs/benchmarks.md).
        r = enqueue_many_tx(store, target, n_batch, batch, kind)
        rec.add(backend, "batched enqueue, enqueue_many_tx", r, "jobs/s", f"{batch}/call and tx")
    if backend == "postgres":
        plain = enqueue_batched(store, backend, target, n_batch, batch, kind, pipeline=False)
        rec.add(backend, f"batched enqueue{label}", plain, "jobs/s", f"{batch}/tx, {n_batch} jobs")
        if pipelined:
            piped = enqueue_batched(store, backend, target, n_batch, batch, kind, pipeline=True)
            rec.add(backend, f"batched enqueue, pipelined{label}", piped, "jobs/s", f"{batch}/tx")
    else:
        r = enqueue_batched(store, backend, target, n_batch, batch, kind, pipeline=False)
        rec.add(backend, f"batched enqueue{label}", r, "jobs/s", f"{batch}/tx, {n_batch} jobs")


# --- 2. burn-down -----------------------------------------------------------------------------


def preinsert(backend: str, target: str, n: int, kind: str) -> float:
    """Bulk-insert ``n`` due pending jobs with SQL (setup, not measured); seconds taken."""
    t0 = time.perf_counter()
    if backend == "postgres":
        with psycopg.connect(target, autocommit=True) as pg:
            pg.execute(f"SET search_path = {SCHEMA}")
            step = 250_000
            for lo in range(0, n, step):
                pg.execute(
                    "INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,"
                    " payload, enqueued_at)"
                    " SELECT gen_random_uuid(), 'queue', %s, 'pending',"
                    " now() - interval '1 hour' + i * interval '1 microsecond', 25,"
                    " jsonb_build_object('i', i), now()"
                    " FROM generate_series(%s::int, %s::int) i",
                    (kind, lo + 1, min(n, lo + step)),
                )
            pg.execute("VACUUM ANALYZE azync_jobs")
    else:
        conn = sqlite3.connect(target, isolation_level=None, timeout=30)
        now = time.time_ns() // 1000
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload,"
            " enqueued_at, created_at, updated_at) VALUES (?, 'queue', ?, 'pending', ?, 25,"
            " ?, ?, ?, ?)",
            (
                (str(uuid.uuid4()), kind, now - 3_600_000_000 + i, f'{{"i":{i}}}', now, now, now)
                for i in range(n)
            ),
        )
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
        conn.close()
    return time.perf_counter() - t0


def burn(
    store: AnyStore,
    kind: str,
    threads: int,
    batch: int,
    seconds: float,
    window: float,
    many: bool = False,
) -> tuple[int, float, list[float]]:
    """Lease-and-ack until empty or ``seconds``; (jobs done, elapsed, window rates)."""
    sampler = RateSampler(window)
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []
    p = DequeueParams(kind=kind, limit=batch, lease=timedelta(minutes=5))

    def work() -> None:
        try:
            while not stop.is_set():
                jobs = store.dequeue_batch(Source.QUEUE, p)
                if not jobs:
                    stop.set()
                    return
                if many:
                    store.ack_many([(j.id, j.lease_token) for j in jobs if j.lease_token])
                else:
                    for j in jobs:
                        assert j.lease_token is not None
                        store.ack(j.id, j.lease_token)
                with lock:
                    sampler.count += len(jobs)
                    sampler.tick()
        except BaseException as exc:  # surfaced after the run
            errors.append(exc)
            stop.set()

    t0 = time.perf_counter()
    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    stop.wait(seconds)
    with lock:
        done, elapsed = sampler.count, time.perf_counter() - t0  # before the shutdown
    stop.set()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    return done, elapsed, sampler.samples


def scenario_burn(
    rec: Recorder,
    store: AnyStore,
    backend: str,
    target: str,
    q: bool,
    threads: int,
    vacuum_every: float = 0.0,
) -> float:
    n = 100_000 if q else 1_000_000
    seconds = 10.0 if q else 40.0
    window = 2.0 if q else 5.0
    batch = LEASE_BATCH
    setup = preinsert(backend, target, n, "bench.burn")
    setup += preinsert(backend, target, n, "bench.burn_many")
    print(f"  pre-inserted 2 x {n:,} jobs in {setup:.1f} s (SQL, not measured)", flush=True)
    rate = 0.0
    # One kind per variant: acked rows leave dead entries in the pending index that slow
    # later lease scans of the same kind.
    for kind, many, metric in (
        ("bench.burn", False, "burn-down"),
        ("bench.burn_many", True, "burn-down, ack_many"),
    ):
        every = vacuum_every if backend == "postgres" else 0.0
        if every:
            metric += f", VACUUM every {every:g} s"
        with vacuuming(target, every, f"{SCHEMA}.azync_jobs"):
            done, elapsed, samples = burn(store, kind, threads, batch, seconds, window, many)
        r = done / elapsed
        rate = r  # scenario 3 paces its producer on the ack_many rate (its workers' call)
        how = "ack_many per leased batch" if many else "ack per job"
        note = f"{n:,} pre-inserted, {threads} threads, lease batch {batch}, {how}, {elapsed:.0f} s"
        rec.add(
            backend,
            metric,
            r,
            "jobs/s",
            note,
            windows=[round(x) for x in samples],
            cv=cv(samples),
        )
        if samples:
            rec.add(
                backend,
                f"{metric} stability (CV of windows)",
                cv(samples),
                "",
                f"{window:.0f} s windows, min {min(samples):,.0f} max {max(samples):,.0f} jobs/s",
            )
    return rate


# --- 3. continuous end to end -------------------------------------------------------------------


def producer_main(
    backend: str, target: str, kind: str, rate: float, seconds: float, out: Any, batched: bool
) -> None:
    """Child process: enqueues at ``rate`` per second for ``seconds``, from ``SENDERS``
    threads, wall clock in the payload; reports (sent, elapsed). Single: one
    ``enqueue`` per job when it is due. Batched: every ``BATCH_TICK`` each sender
    enqueues the jobs that fell due meanwhile with one ``enqueue_many`` (one commit)."""
    store = open_store(backend, target, pool_max_size=SENDERS)
    sent = [0] * SENDERS
    t0 = time.perf_counter()

    def send(k: int) -> None:
        i = 0
        while True:
            due = t0 + (i * SENDERS + k) / rate
            if due - t0 >= seconds or time.perf_counter() - t0 >= seconds:
                return
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay + (BATCH_TICK if batched else 0))
            n = 1
            if batched:  # every job of this sender due by now (its job j at j*SENDERS+k)
                now = min(time.perf_counter() - t0, seconds)
                n = max(1, math.ceil((now * rate - k) / SENDERS) - i)
                stamp = {"t": time.time()}
                store.enqueue_many([EnqueueParams(kind=kind, payload=stamp) for _ in range(n)])
            else:
                store.enqueue(EnqueueParams(kind=kind, payload={"t": time.time()}))
            sent[k] += n
            i += n

    threads = [threading.Thread(target=send, args=(k,)) for k in range(SENDERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put((sum(sent), time.perf_counter() - t0))
    store.close()


def e2e(
    backend: str,
    target: str,
    rate: float,
    seconds: float,
    threads: int,
    poll_only: bool,
    batched: bool = False,
) -> tuple[list[float], float]:
    """Enqueue-to-lease latencies (ms) and the producer's achieved rate."""
    store = open_store(backend, target, poll_only=poll_only)
    kind = f"bench.e2e.{uuid.uuid4().hex[:6]}"
    lat: list[float] = []
    lock = threading.Lock()
    stop = threading.Event()
    p = DequeueParams(kind=kind, limit=LEASE_BATCH, lease=timedelta(minutes=5))
    # One wake subscription for the workers: a wake wakes one idle worker, not all of
    # them (four leases racing for the same jobs, three finding none). A worker takes
    # the wakes buffered so far before it leases (one lease covers every job committed
    # before it starts: pgqueuer's manager likewise consumes a notice per job), and a
    # full lease wakes a peer, since more may be due.
    sub = None if poll_only else store.wake()
    more = Wake(source=Source.QUEUE, kind=kind)

    def work() -> None:
        while not stop.is_set():
            if sub is not None:
                while sub.get(timeout=0) is not None:
                    pass
            jobs = store.dequeue_batch(Source.QUEUE, p)
            now = time.time()
            if sub is not None and len(jobs) == LEASE_BATCH:
                sub.offer(more)
            for j in jobs:
                assert j.lease_token is not None and isinstance(j.payload, dict)
                with lock:
                    lat.append((now - j.payload["t"]) * 1000)
            if jobs:  # the batch call, as a worker built on qctl_store acks
                store.ack_many([(j.id, j.lease_token) for j in jobs if j.lease_token])
            elif sub is not None:
                sub.get(timeout=POLL_INTERVAL)
            else:
                stop.wait(POLL_INTERVAL)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    time.sleep(0.5)  # listeners up before the first job
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(
        target=producer_main, args=(backend, target, kind, rate, seconds, out, batched)
    )
    proc.start()
    sent, took = out.get()
    proc.join()
    deadline = time.time() + 2 * POLL_INTERVAL + 10
    while time.time() < deadline:
        with lock:
            if len(lat) >= sent:
                break
        time.sleep(0.05)
    stop.set()
    for t in pool:
        t.join()
    if sub is not None:
        sub.close()
    store.close()
    return lat, sent / took


def scenario_e2e(
    rec: Recorder, backend: str, target: str, q: bool, threads: int, burn_rate: float
) -> None:
    seconds = 5.0 if q else 10.0
    modes = {"wakeups": (False, False), "wakeups, batched producer": (False, True)}
    modes["poll-only"] = (True, False)
    for mode, (poll_only, batched) in modes.items():
        for frac in (0.25, 0.5, 0.75):
            target_rate = burn_rate * frac
            lat, achieved = e2e(backend, target, target_rate, seconds, threads, poll_only, batched)
            note = (
                f"{mode}, target {target_rate:,.0f}/s, achieved {achieved:,.0f}/s, {len(lat)} jobs"
            )
            rec.add(backend, f"e2e {int(frac * 100)}% {mode} p50", median(lat), "ms", note)
            rec.add(backend, f"e2e {int(frac * 100)}% {mode} p99", pct(lat, 0.99), "ms", note)


# --- 4. change-hint overhead ----------------------------------------------------------------


def scenario_hints(rec: Recorder, store: AnyStore, backend: str, target: str, q: bool) -> None:
    sub = store.changes()
    if sub is None:
        rec.add(backend, "watcher", 0, "", "changes() is None (poll-only); skipped")
        return
    seen = [0]

    def drain() -> None:
        for _ in sub:
            seen[0] += 1

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    try:
        scenario_enqueue(rec, store, backend, target, q, label=" + watcher", pipelined=False)
    finally:
        sub.close()
        t.join(timeout=5)
    print(f"  watcher received {seen[0]:,} hints", flush=True)


# --- w. two SQLite writer processes -----------------------------------------------------------


def writer_main(path: str, n_single: int, n_batches: int, batch: int, out: Any) -> None:
    store = SqliteStore(path)
    locked = 0
    other = 0
    kind = f"bench.writer.{os.getpid()}"
    t0 = time.perf_counter()

    def attempt(fn: Callable[[], None]) -> None:
        nonlocal locked, other
        try:
            fn()
        except Exception as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                locked += 1
            else:
                other += 1

    def one(i: int) -> None:
        store.enqueue(EnqueueParams(kind=kind, payload={"i": i}))

    for i in range(n_single):
        attempt(lambda i=i: one(i))  # type: ignore[misc]
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)

    def one_batch() -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for i in range(batch):
                store.enqueue_tx(conn, EnqueueParams(kind=kind, payload={"i": i}))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    for _ in range(n_batches):
        attempt(one_batch)
    conn.close()
    store.close()
    out.put((locked, other, time.perf_counter() - t0))


def scenario_writers(rec: Recorder, q: bool) -> None:
    path = sqlite_file("writers.db")
    s = SqliteStore(path)
    s.migrate()
    s.close()
    n_single, n_batches, batch = (300, 4, 500) if q else (2000, 20, 500)
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=writer_main, args=(path, n_single, n_batches, batch, out))
        for _ in range(2)
    ]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    took = time.perf_counter() - t0
    locked = sum(r[0] for r in results)
    other = sum(r[1] for r in results)
    total = 2 * (n_single + n_batches * batch)
    conn = sqlite3.connect(path)
    stored = conn.execute("SELECT COUNT(*) FROM azync_jobs").fetchone()[0]
    conn.close()
    rec.add(
        "sqlite",
        "two writers: 'database is locked' errors",
        locked,
        "errors",
        f"{total:,} jobs by 2 processes in {took:.1f} s, {stored:,} stored, {other} other errors",
    )


# --- main -------------------------------------------------------------------------------------


def run_backend(rec: Recorder, backend: str, target: str, scenarios: set[str], args: Any) -> None:
    print(f"== qctl on {backend}", flush=True)
    store = open_store(backend, target)
    store.migrate()
    try:
        if "1" in scenarios:
            scenario_enqueue(rec, store, backend, target, args.quick)
        if "4" in scenarios:
            scenario_hints(rec, store, backend, target, args.quick)
        burn_rate = args.burn_rate
        if "2" in scenarios:
            burn_rate = scenario_burn(
                rec, store, backend, target, args.quick, args.threads, args.vacuum_every
            )
    finally:
        store.close()
    if "3" in scenarios:
        scenario_e2e(rec, backend, target, args.quick, args.threads, burn_rate)


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    ap.add_argument("--backends", default="postgres,sqlite")
    ap.add_argument("--scenarios", default="1,2,3,4,w")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--burn-rate", type=float, default=1000.0, help="for 3 without 2")
    ap.add_argument(
        "--vacuum-every",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="what-if for 2 on PostgreSQL: VACUUM azync_jobs every SECONDS during the burn-down",
    )
    args = ap.parse_args()
    rec = Recorder(args.json, "queue", "qctl")
    scenarios = set(args.scenarios.split(","))
    backends = args.backends.split(",")
    if "postgres" in backends:
        with scratch_database(args.pg, "qctl_bench_q") as dsn:
            run_backend(rec, "postgres", dsn, scenarios, args)
    if "sqlite" in backends:
        run_backend(rec, "sqlite", sqlite_file("queue.db"), scenarios, args)
        if "w" in scenarios:
            scenario_writers(rec, args.quick)


if __name__ == "__main__":
    main()
