"""Scenarios 1 to 3 for the peers, pgqueuer and procrastinate, with their own setup.

Runs in the bench-only environment ``bench/.venv-peers`` (``bench/run.py`` creates it
from PyPI); neither library is ever a dependency of qctl.

    bench/.venv-peers/bin/python bench/queue_peers.py [--quick] [--pg DSN]
        [--json out.jsonl] [--peers pgqueuer,procrastinate] [--scenarios 1,2,3]
        [--vacuum-every SECONDS]

Each peer gets its own scratch database, dropped at the end. The figures mirror
``queue_qctl.py``:

1. Enqueue: one job per call (pgqueuer ``Queries.enqueue`` with scalars; procrastinate
   ``Task.defer_async``), and batched (pgqueuer ``enqueue`` with lists: one statement;
   procrastinate ``Task.batch_defer_async``), 500 jobs per call.
2. Burn-down: jobs pre-inserted (setup: pgqueuer's batch API; procrastinate: SQL into
   ``procrastinate_jobs``, its triggers still firing), then 4 workers
   (pgqueuer: 4 ``QueueManager`` on their own connections, batch size 50;
   procrastinate: one worker with concurrency 4) run a no-op task for a fixed time;
   completions are counted in the task body. What-if ``--vacuum-every``: the same with
   ``VACUUM`` of the peer's queue table every so many seconds (``common.vacuuming``), as
   ``queue_qctl.py`` runs it for azync_jobs.
3. Continuous end to end: a producer process defers single jobs at 25/50/75% of the
   peer's own burn-down rate with the wall clock in the payload; the task records
   enqueue-to-start latency. Both peers wake on LISTEN/NOTIFY by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (
    RateSampler,
    Recorder,
    base_args,
    cv,
    median,
    pct,
    scratch_database,
    vacuuming,
)

THREADS = 4
BATCH = 50
SENDERS = 4  # concurrent producer calls: one alone cannot reach the higher rates
STOP_TIMEOUT = 60.0
"""Seconds a peer's workers get to stop after the clock: then they are cancelled and
their connections cut. A pgqueuer ``QueueManager`` runs every job it has leased and
flushes their log rows before it returns, which on a loaded machine took longer than
this; the figures are taken before the shutdown, so a slow one costs none of them."""


# --- pgqueuer -----------------------------------------------------------------------------


class PgQueuerPeer:
    name = "pgqueuer"
    table = "pgqueuer"
    """The table its workers lease from (the burn-down what-if vacuums it)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    async def _queries(self) -> tuple[Any, Any]:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(self.dsn)
        return conn, Queries(AsyncpgDriver(conn))

    async def install(self) -> None:
        conn, q = await self._queries()
        await q.install()
        await conn.close()

    async def enqueue_single(self, n: int) -> float:
        conn, q = await self._queries()
        t0 = time.perf_counter()
        for i in range(n):
            await q.enqueue("bench", json.dumps({"i": i}).encode(), 0)
        rate = n / (time.perf_counter() - t0)
        await conn.close()
        return rate

    async def enqueue_batched(self, n: int, batch: int, entrypoint: str = "bench") -> float:
        conn, q = await self._queries()
        t0 = time.perf_counter()
        for start in range(0, n, batch):
            k = min(batch, n - start)
            payloads = [json.dumps({"i": start + i}).encode() for i in range(k)]
            async with conn.transaction():
                await q.enqueue([entrypoint] * k, payloads, [0] * k)
        rate = n / (time.perf_counter() - t0)
        await conn.close()
        return rate

    async def work(
        self, entrypoint: str, until: Awaitable[Any], on_job: Callable[[dict[str, Any]], None]
    ) -> None:
        """``THREADS`` queue managers until ``until`` is done, calling ``on_job(payload)``."""
        from pgqueuer import QueueManager

        managers = []
        conns = []
        for _ in range(THREADS):
            conn, q = await self._queries()
            conns.append(conn)
            qm = QueueManager(q)

            @qm.entrypoint(entrypoint)
            async def task(job: Any) -> None:
                on_job(json.loads(job.payload) if job.payload else {})

            managers.append(qm)
        runs = [asyncio.create_task(qm.run(batch_size=BATCH)) for qm in managers]
        await until
        for qm in managers:
            qm.shutdown.set()
        _, late = await asyncio.wait(runs, timeout=STOP_TIMEOUT)
        for run in late:
            run.cancel()
        if late:
            print(
                f"  {len(late)} of {THREADS} queue managers did not stop within"
                f" {STOP_TIMEOUT:g} s: cancelled",
                flush=True,
            )
            await asyncio.wait(late, timeout=10)
        for conn in conns:
            if late:
                conn.terminate()  # a cancelled manager may have left a query running
            else:
                await conn.close()

    async def preinsert(self, n: int) -> None:
        await self.enqueue_batched(n, 10_000)

    async def produce(self, entrypoint: str, payload: dict[str, Any], q: Any) -> None:
        await q.enqueue(entrypoint, json.dumps(payload).encode(), 0)


# --- procrastinate --------------------------------------------------------------------------


class ProcrastinatePeer:
    name = "procrastinate"
    table = "procrastinate_jobs"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    def app(self, on_job: Callable[[dict[str, Any]], None] | None = None) -> tuple[Any, Any]:
        from procrastinate import App, PsycopgConnector

        app = App(connector=PsycopgConnector(conninfo=self.dsn))

        @app.task(name="bench", queue="bench")
        async def bench(**kwargs: Any) -> None:
            if on_job is not None:
                on_job(kwargs)

        return app, bench

    async def install(self) -> None:
        app, _ = self.app()
        async with app.open_async():
            await app.schema_manager.apply_schema_async()

    async def enqueue_single(self, n: int) -> float:
        app, task = self.app()
        async with app.open_async():
            t0 = time.perf_counter()
            for i in range(n):
                await task.defer_async(i=i)
            return n / (time.perf_counter() - t0)

    async def preinsert(self, n: int) -> None:
        """SQL into procrastinate_jobs (its own triggers still run): deferring a
        million jobs through the API takes minutes on this machine."""
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            for lo in range(0, n, 250_000):
                await conn.execute(
                    "INSERT INTO procrastinate_jobs (queue_name, task_name, args)"
                    " SELECT 'bench', 'bench', jsonb_build_object('i', i)"
                    " FROM generate_series(%s::int, %s::int) i",
                    (lo + 1, min(n, lo + 250_000)),
                )

    async def enqueue_batched(self, n: int, batch: int) -> float:
        app, task = self.app()
        async with app.open_async():
            t0 = time.perf_counter()
            for start in range(0, n, batch):
                await task.batch_defer_async(
                    *[{"i": start + i} for i in range(min(batch, n - start))]
                )
            return n / (time.perf_counter() - t0)

    async def work(
        self, entrypoint: str, until: Awaitable[Any], on_job: Callable[[dict[str, Any]], None]
    ) -> None:
        app, _ = self.app(on_job)
        async with app.open_async():
            run = asyncio.create_task(
                app.run_worker_async(
                    queues=["bench"], concurrency=THREADS, install_signal_handlers=False
                )
            )
            await until
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(run, timeout=STOP_TIMEOUT)


Peer = PgQueuerPeer | ProcrastinatePeer


def make_peer(name: str, dsn: str) -> Peer:
    return PgQueuerPeer(dsn) if name == "pgqueuer" else ProcrastinatePeer(dsn)


# --- scenarios --------------------------------------------------------------------------------


async def scenario_enqueue(rec: Recorder, peer: Peer, q: bool) -> None:
    n_single = 500 if q else 4000
    n_batch = 5000 if q else 20_000
    rate = await peer.enqueue_single(n_single)
    rec.add("postgres", "single enqueue", rate, "jobs/s", f"{n_single} jobs, 1 per call")
    rate = await peer.enqueue_batched(n_batch, 500)
    rec.add("postgres", "batched enqueue", rate, "jobs/s", f"500/call, {n_batch} jobs")
    await clear(peer)


async def clear(peer: Peer) -> None:
    """Empty the peer's job tables between scenarios (as a fresh queue would be), after
    ending any session a worker stopped by cancellation left behind in the scratch
    database (it would hold the locks TRUNCATE waits for)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(peer.dsn, autocommit=True) as conn:
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        if peer.name == "pgqueuer":
            await conn.execute("TRUNCATE pgqueuer, pgqueuer_log")
        else:
            await conn.execute("TRUNCATE procrastinate_jobs CASCADE")
        await conn.execute("VACUUM ANALYZE")


async def scenario_burn(rec: Recorder, peer: Peer, q: bool, vacuum_every: float = 0.0) -> float:
    n = 100_000 if q else 1_000_000
    seconds = 10.0 if q else 40.0
    window = 2.0 if q else 5.0
    t0 = time.perf_counter()
    await peer.preinsert(n)
    async with await _vacuum_conn(peer) as conn:
        await conn.execute("VACUUM ANALYZE")
    how = "its batch API" if peer.name == "pgqueuer" else "SQL"
    print(f"  pre-inserted {n:,} jobs in {time.perf_counter() - t0:.1f} s ({how})", flush=True)
    sampler = RateSampler(window)

    def on_job(_: dict[str, Any]) -> None:
        sampler.count += 1
        sampler.tick()

    snap: dict[str, float] = {}

    async def until() -> None:
        await asyncio.sleep(seconds)
        snap["count"], snap["t"] = sampler.count, time.perf_counter()  # before the shutdown

    metric = f"burn-down, VACUUM every {vacuum_every:g} s" if vacuum_every else "burn-down"
    t1 = time.perf_counter()
    with vacuuming(peer.dsn, vacuum_every, peer.table):
        await peer.work("bench", until(), on_job)
    elapsed = snap["t"] - t1
    rate = snap["count"] / elapsed
    rec.add(
        "postgres",
        metric,
        rate,
        "jobs/s",
        f"{n:,} pre-inserted, {THREADS} workers, batch {BATCH}, {elapsed:.0f} s",
        windows=[round(s) for s in sampler.samples],
        cv=cv(sampler.samples),
    )
    if sampler.samples:
        s = sampler.samples
        rec.add(
            "postgres",
            f"{metric} stability (CV of windows)",
            cv(s),
            "",
            f"{window:.0f} s windows, min {min(s):,.0f} max {max(s):,.0f} jobs/s",
        )
    await clear(peer)
    return rate


async def _vacuum_conn(peer: Peer) -> Any:
    import psycopg

    return await psycopg.AsyncConnection.connect(peer.dsn, autocommit=True)


def producer_main(peer_name: str, dsn: str, rate: float, seconds: float, out: Any) -> None:
    """Child process: single enqueues at ``rate`` per second, wall clock in the payload."""

    async def run() -> tuple[int, float]:
        peer = make_peer(peer_name, dsn)
        send: Callable[[], Awaitable[Any]]
        if isinstance(peer, PgQueuerPeer):
            import asyncpg
            from pgqueuer import AsyncpgPoolDriver, Queries

            pool = await asyncpg.create_pool(dsn, min_size=SENDERS, max_size=SENDERS)
            q = Queries(AsyncpgPoolDriver(pool))

            def send() -> Awaitable[Any]:
                return peer.produce("bench", {"t": time.time()}, q)

            closer: Callable[[], Awaitable[Any]] = pool.close
        else:
            app, task = peer.app()
            await app.open_async()

            def send() -> Awaitable[Any]:
                return task.defer_async(t=time.time())

            closer = app.close_async
        t0 = time.perf_counter()
        sent = [0] * SENDERS

        async def sender(k: int) -> None:
            i = 0
            while True:
                due = t0 + (i * SENDERS + k) / rate
                if due - t0 >= seconds or time.perf_counter() - t0 >= seconds:
                    return
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                await send()
                sent[k] += 1
                i += 1

        await asyncio.gather(*(sender(k) for k in range(SENDERS)))
        took = time.perf_counter() - t0
        await closer()
        return sum(sent), took

    out.put(asyncio.run(run()))


async def scenario_e2e(rec: Recorder, peer: Peer, q: bool, burn_rate: float) -> None:
    seconds = 5.0 if q else 10.0
    for frac in (0.25, 0.5, 0.75):
        lat: list[float] = []
        target = burn_rate * frac

        def on_job(payload: dict[str, Any], lat: list[float] = lat) -> None:
            if "t" in payload:
                lat.append((time.time() - payload["t"]) * 1000)

        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        proc = ctx.Process(target=producer_main, args=(peer.name, peer.dsn, target, seconds, out))

        async def produce_and_drain(
            proc: Any = proc, out: Any = out, lat: list[float] = lat
        ) -> tuple[int, float]:
            await asyncio.sleep(1.0)  # the workers listen before the first job
            proc.start()
            sent, took = await asyncio.to_thread(out.get)
            deadline = time.time() + 15
            while len(lat) < sent and time.time() < deadline:
                await asyncio.sleep(0.05)
            return sent, took

        done = asyncio.ensure_future(produce_and_drain())
        await peer.work("bench", done, on_job)
        sent, took = done.result()
        proc.join()
        note = f"target {target:,.0f}/s, achieved {sent / took:,.0f}/s, {len(lat)}/{sent} jobs"
        label = f"e2e {int(frac * 100)}% wakeups"
        rec.add("postgres", f"{label} p50", median(lat), "ms", note)
        rec.add("postgres", f"{label} p99", pct(lat, 0.99), "ms", note)
        await clear(peer)


async def run_peer(rec: Recorder, peer: Peer, scenarios: set[str], args: Any) -> list[str]:
    """The scenarios asked for; a scenario that fails leaves its figures missing and the
    next one runs (on an emptied queue). Returns what failed."""
    print(f"== {peer.name}", flush=True)
    await peer.install()
    failed: list[str] = []
    burn_rate = args.burn_rate

    async def attempt(scenario: str, run: Callable[[], Awaitable[Any]]) -> Any:
        if scenario not in scenarios:
            return None
        try:
            return await run()
        except Exception as exc:
            what = f"{peer.name} scenario {scenario}: {type(exc).__name__}: {exc}"
            print(f"  FIGURES MISSING, {what}", flush=True)
            failed.append(what)
            await clear(peer)
            return None

    await attempt("1", lambda: scenario_enqueue(rec, peer, args.quick))
    rate = await attempt("2", lambda: scenario_burn(rec, peer, args.quick, args.vacuum_every))
    if rate:  # scenario 3 paces its producer on the burn-down rate, if there is one
        burn_rate = rate
    await attempt("3", lambda: scenario_e2e(rec, peer, args.quick, burn_rate))
    return failed


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    ap.add_argument("--peers", default="pgqueuer,procrastinate")
    ap.add_argument("--scenarios", default="1,2,3")
    ap.add_argument("--burn-rate", type=float, default=1000.0, help="for 3 without 2")
    ap.add_argument(
        "--vacuum-every",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="what-if for 2: VACUUM the peer's queue table every SECONDS during the burn-down",
    )
    args = ap.parse_args()
    scenarios = set(args.scenarios.split(","))
    failed: list[str] = []
    for name in args.peers.split(","):
        from importlib.metadata import version

        rec = Recorder(args.json, "queue", name)
        print(f"{name} {version(name)}", flush=True)
        with scratch_database(args.pg, f"qctl_bench_{name}") as dsn:
            failed += asyncio.run(run_peer(rec, make_peer(name, dsn), scenarios, args))
    if failed:  # the run's report lists the step as failed; the other figures stand
        sys.exit("figures missing: " + "; ".join(failed))


if __name__ == "__main__":
    import logging

    logging.basicConfig(level=logging.WARNING)  # the peers' INFO logs drown the figures
    logging.getLogger("procrastinate.blueprints").setLevel(logging.ERROR)  # "App in __main__"
    main()
