"""Bulk verbs by filter at scale: retry and cancel of 150,000 jobs on azync, hopper,
dispatch, River and Oban, each run as ``qctl`` on the command line (whatever
implementation the checkout holds), beside a worker claiming jobs from another queue of
the same table.

    .venv/bin/python bench/bulk_verbs.py [--pg DSN] [--json PATH] [--quick] [--jobs N]

One scratch database per system, loaded with SQL (not measured), then VACUUM ANALYZE:

- azync: ``qctl db migrate``; N dead jobs of kind ``bench.target``, 50,000 succeeded of
  another kind, the worker's pending jobs of ``bench.worker``.
- hopper: its schema (``schema_5fd71c6.sql``); N discarded jobs of queue ``target`` in
  ``hopper_job_history``, 50,000 completed of another queue, the worker's available jobs
  in ``hopper_jobs`` and a few running ones.
- dispatch: its schema (``schema_6f7dda7.sql``); N pending jobs of queue ``target``,
  50,000 completed and 1,000 failed of another queue, the worker's pending jobs.
- River: its schema (``schema_v0.51.2.sql``, as the demo installs it) in ``public``; N
  discarded jobs of queue ``target`` with an error, 50,000 completed of another queue,
  the worker's available jobs.
- Oban: oban-py 0.7.0's schema (``schema_obanpy_0.7.0.sql``, as the demo installs it)
  in ``public``; N discarded jobs of queue ``target`` with an error, 50,000 completed of
  another queue, the worker's available jobs.

The verbs, each one ``qctl ... -o json`` subprocess: azync ``jobs retry --state dead``
then ``jobs delete --state pending`` of the same jobs (azync has no cancel; its ``jobs
pause`` by filter walks job by job on this main, 135 s for 15,000 in a smoke run, so the
set-based delete is the reference); hopper ``jobs retry --state discarded`` then ``jobs
cancel`` of the same jobs (now available); dispatch ``jobs cancel`` (it retries only
failed jobs, through their DLQ entries: nothing to retry among pending ones); River and
Oban ``jobs retry --state discarded`` then ``jobs cancel`` of the same jobs, their
worker claiming with the system's own fetch (River's JobGetAvailable, oban-py's
fetch_jobs, the demos' statements). For each:
wall time, the process's peak RSS (``wait4``), the result's ``done`` against N, the
longest transaction of a ``qctl*`` connection (``pg_stat_activity`` sampled every 20 ms),
and the worker's claim latency p99 during the verb over its p99 alone (the 10 s before
the verb). ``--profile DIR`` runs each verb under cProfile (its figures then include
cProfile's cost) and prints where its time went. ``--max`` is passed where the verb's
``--help`` offers it.

``--backend sqlite``: azync and River on SQLite files under bench/out/ (azync's made by
``qctl db migrate``, River's by its migrator through the Go harness ``riverd``), loaded as
above without the worker's jobs; azync ``jobs retry`` then ``jobs delete``, River ``jobs
retry``, ``jobs cancel`` and ``jobs delete --state cancelled`` of the same jobs, each
``qctl`` process alone: wall time, peak RSS and the time over azync's (retry over retry,
cancel and delete over delete) in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import psycopg  # noqa: E402
from common import Recorder, base_args, pct, scratch_database, sqlite_file  # noqa: E402
from machine import machine_info  # noqa: E402

QCTL = os.path.join(os.path.dirname(sys.executable), "qctl")
SAMPLE_EVERY = 0.02
"""pg_stat_activity is sampled this often (s) for the longest qctl transaction."""
WORKER_PAUSE = 0.02
"""The worker's sleep between claims: a polling worker, not a flood that would drain its
queue (and fill the table with dead tuples) before the verbs end."""
BACKGROUND = 50_000
"""Finished jobs of other queues: the verbs' filters must not walk them."""
BENCH_APP = "bulkbench"
"""The application_name of this script's own connections (never ``qctl*``)."""
MAX = 200_000


# --- loading ---------------------------------------------------------------------------------


def load_azync(dsn: str, n: int, worker_jobs: int) -> None:
    subprocess.run([QCTL, "--dsn", dsn, "db", "migrate"], check=True, capture_output=True)
    insert = (
        "INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, attempt,"
        " payload, last_error, enqueued_at, completed_at, failed_at)"
        " SELECT gen_random_uuid(), 'queue', %(kind)s, %(state)s, now() - interval '1 hour',"
        " 25, 1, jsonb_build_object('i', i),"
        " CASE WHEN %(state)s = 'dead' THEN 'boom: ' || i END, now() - interval '2 hours',"
        " CASE WHEN %(state)s = 'succeeded' THEN now() - i * interval '1 ms' END,"
        " CASE WHEN %(state)s = 'dead' THEN now() - i * interval '1 ms' END"
        " FROM generate_series(1, %(n)s) i"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        for kind, state, count in (
            ("bench.target", "dead", n),
            ("bench.other", "succeeded", BACKGROUND),
            ("bench.worker", "pending", worker_jobs),
        ):
            conn.execute(insert, {"kind": kind, "state": state, "n": count})
        conn.execute("VACUUM ANALYZE")


def load_hopper(dsn: str, n: int, worker_jobs: int) -> None:
    from qctl.systems.hopper.standin import install

    history = (
        "INSERT INTO hopper_job_history (id, seq, kind, queue, state, priority, attempt,"
        " max_attempts, scheduled_at, attempted_at, args, metadata, errors, await, created_at,"
        " finalized_at)"
        " SELECT hopper_uuidv7(), g, 'k' || (g %% 10), %(queue)s, %(state)s::hopper_job_state,"
        " 2, 25, 25, t - interval '1 second', t - interval '1 second',"
        " jsonb_build_object('n', g), '{}',"
        ' CASE WHEN %(state)s = \'discarded\' THEN \'[{"attempt": 25, "error": "boom"}]\''
        "  ELSE '[]' END::jsonb, false, t - interval '1 second', t"
        " FROM generate_series(%(lo)s::int, %(hi)s::int) g,"
        " LATERAL (SELECT now() - make_interval(secs => (%(hi)s - g) * 0.001) AS t) w"
    )
    live = (
        "INSERT INTO hopper_jobs (kind, queue, state, attempt, attempted_at, attempted_by)"
        " SELECT 'k' || (g %% 10), %(queue)s, %(state)s::hopper_job_state,"
        " CASE WHEN %(state)s = 'running' THEN 1 ELSE 0 END,"
        " CASE WHEN %(state)s = 'running' THEN now() END,"
        " CASE WHEN %(state)s = 'running' THEN %(client)s END"
        " FROM generate_series(1, %(n)s) g"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        install(conn, "hopper")
        conn.execute("SET search_path = hopper")
        row = conn.execute(
            "INSERT INTO hopper_clients (hostname, expires_at)"
            " VALUES ('bench', now() + interval '1 hour') RETURNING id"
        ).fetchone()
        assert row is not None
        conn.execute("INSERT INTO hopper_queues (name) VALUES ('target'), ('other'), ('worker')")
        conn.execute(history, {"queue": "target", "state": "discarded", "lo": 1, "hi": n})
        conn.execute(
            history, {"queue": "other", "state": "completed", "lo": n + 1, "hi": n + BACKGROUND}
        )
        for queue, state, count in (
            ("worker", "available", worker_jobs),
            ("other", "running", 100),
        ):
            conn.execute(live, {"queue": queue, "state": state, "n": count, "client": row[0]})
        conn.execute("VACUUM ANALYZE")


def load_dispatch(dsn: str, n: int, worker_jobs: int) -> None:
    from dispatch_scale import SCHEMA, typeid_sql

    insert = (
        "INSERT INTO dispatch_jobs (id, name, queue, payload, state, last_error, worker_id,"
        " run_at, completed_at, created_at, updated_at)"
        f" SELECT {typeid_sql('job', 't', 'g')}, 'job.' || (g %% 20), %(queue)s,"
        " convert_to('{\"n\":' || g || '}', 'UTF8'), %(state)s,"
        " CASE WHEN %(state)s = 'failed' THEN 'boom' ELSE '' END, '', t,"
        " CASE WHEN %(state)s IN ('completed', 'failed') THEN t END, t, t"
        " FROM generate_series(%(lo)s::int, %(hi)s::int) g,"
        " LATERAL (SELECT now() - interval '1 minute'"
        "  - make_interval(secs => (%(hi)s - g) * 0.001) AS t) w"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        with open(SCHEMA) as f:
            conn.execute(f.read())
        lo = 1
        for queue, state, count in (
            ("target", "pending", n),
            ("other", "completed", BACKGROUND),
            ("other", "failed", 1_000),
            ("worker", "pending", worker_jobs),
        ):
            # the series' numbers make the ids unique, so each load takes its own range
            conn.execute(insert, {"queue": queue, "state": state, "lo": lo, "hi": lo + count - 1})
            lo += count
        conn.execute("VACUUM ANALYZE")


def load_river(dsn: str, n: int, worker_jobs: int) -> None:
    from qctl.systems.river.standin import install

    error = '{"at": "2026-01-01T00:00:00Z", "attempt": 25, "error": "boom", "trace": ""}'
    finalized = (
        "INSERT INTO river_job (state, attempt, max_attempts, attempted_at, attempted_by,"
        " created_at, finalized_at, scheduled_at, args, errors, kind, queue)"
        " SELECT %(state)s::river_job_state, 25, 25, t - interval '1 second',"
        " ARRAY['bench'], t - interval '1 second', t, t - interval '1 second',"
        " jsonb_build_object('n', g),"
        " CASE WHEN %(state)s = 'discarded' THEN ARRAY[%(error)s::jsonb] END,"
        " 'k' || (g %% 10), %(queue)s"
        " FROM generate_series(1, %(n)s) g,"
        " LATERAL (SELECT now() - make_interval(secs => (%(n)s - g) * 0.001) AS t) w"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        install(conn, "public")
        conn.execute(
            "INSERT INTO river_queue (name, updated_at)"
            " VALUES ('target', now()), ('other', now()), ('worker', now())"
        )
        for queue, state, count in (("target", "discarded", n), ("other", "completed", BACKGROUND)):
            conn.execute(finalized, {"queue": queue, "state": state, "n": count, "error": error})
        conn.execute(
            "INSERT INTO river_job (kind, queue, args) SELECT 'k' || (g %% 10), 'worker',"
            " jsonb_build_object('n', g) FROM generate_series(1, %(n)s) g",
            {"n": worker_jobs},
        )
        conn.execute("VACUUM ANALYZE")


def load_oban(dsn: str, n: int, worker_jobs: int) -> None:
    from importlib.resources import files

    ddl = files("qctl.systems.oban").joinpath("schema_obanpy_0.7.0.sql").read_text()
    insert = (
        "INSERT INTO oban_jobs (state, queue, worker, attempt, max_attempts, args, errors,"
        " attempted_by, inserted_at, scheduled_at, attempted_at, completed_at, discarded_at)"
        " SELECT %(state)s::oban_job_state, %(queue)s, 'app.workers.W' || (g %% 10),"
        " CASE WHEN %(state)s = 'available' THEN 0 ELSE 20 END, 20, jsonb_build_object('n', g),"
        " CASE WHEN %(state)s = 'discarded' THEN jsonb_build_array(jsonb_build_object("
        "  'attempt', 20, 'at', t, 'error', 'RuntimeError: boom')) ELSE '[]'::jsonb END,"
        " CASE WHEN %(state)s = 'available' THEN ARRAY[]::text[] ELSE ARRAY['bench'] END,"
        " t, t, CASE WHEN %(state)s = 'available' THEN NULL ELSE t END,"
        " CASE WHEN %(state)s = 'completed' THEN t END,"
        " CASE WHEN %(state)s = 'discarded' THEN t END"
        " FROM generate_series(1, %(n)s) g,"
        " LATERAL (SELECT timezone('UTC', now()) - make_interval(secs => (%(n)s - g) * 0.001)"
        "  AS t) w"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("SET LOCAL search_path TO public")
            conn.execute(ddl.encode())
        for queue, state, count in (
            ("target", "discarded", n),
            ("other", "completed", BACKGROUND),
            ("worker", "available", worker_jobs),
        ):
            conn.execute(insert, {"queue": queue, "state": state, "n": count})
        conn.execute("VACUUM ANALYZE")


def load_azync_sqlite(path: str, n: int) -> None:
    """``load_azync``'s targets and background in a SQLite file ``qctl db migrate`` made
    (no worker's jobs: nothing claims beside a verb on SQLite, see ``run_sqlite``)."""
    import sqlite3
    import uuid

    subprocess.run(
        [QCTL, "--dsn", f"sqlite:///{path}", "db", "migrate"], check=True, capture_output=True
    )
    now = time.time_ns() // 1000
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    loads = (("bench.target", "dead", n), ("bench.other", "succeeded", BACKGROUND))
    for kind, state, count in loads:
        dead = state == "dead"
        conn.executemany(
            "INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, attempt,"
            " payload, last_error, enqueued_at, completed_at, failed_at, created_at, updated_at)"
            " VALUES (?, 'queue', ?, ?, ?, 25, 1, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    str(uuid.uuid4()), kind, state, now - 3_600_000_000, f'{{"i":{i}}}',
                    f"boom: {i}" if dead else None, now - 7_200_000_000,
                    None if dead else now - i * 1000, now - i * 1000 if dead else None,
                    now - 7_200_000_000, now,
                )
                for i in range(count)
            ),
        )  # fmt: skip
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def load_river_sqlite(path: str, n: int) -> None:
    """``load_river``'s targets and background in a SQLite file River's migrator made
    (riversqlite, through the Go harness ``riverd``), JSONB as River writes it."""
    import sqlite3

    from qctl_kit.sqlite import jsonb
    from tests.go.harness import Harness

    harness = Harness("riverd", f"sqlite://{path}")
    try:
        harness.call("migrate")
    finally:
        harness.close()
    error = '[{"at": "2026-01-01T00:00:00Z", "attempt": 25, "error": "boom", "trace": ""}]'
    # finalized one a millisecond up to now, attempted a second before
    at = "strftime('%Y-%m-%d %H:%M:%f', julianday('now') - (:n - i) / 86400000.0)"
    before = "strftime('%Y-%m-%d %H:%M:%f', julianday('now') - (:n - i) / 86400000.0 - 1 / 86400.0)"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO river_queue (name, created_at, metadata, updated_at) VALUES"
        " (?, strftime('%Y-%m-%d %H:%M:%f', 'now'), ?, strftime('%Y-%m-%d %H:%M:%f', 'now'))",
        [(name, jsonb.from_json("{}")) for name in ("target", "other")],
    )
    for queue, state, count in (("target", "discarded", n), ("other", "completed", BACKGROUND)):
        conn.execute(
            "INSERT INTO river_job (state, attempt, max_attempts, attempted_at, attempted_by,"
            " created_at, finalized_at, scheduled_at, args, errors, kind, queue, metadata, tags)"
            " WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < :n)"
            f" SELECT :state, 25, 25, {before}, :by, {before}, {at}, {before},"
            " :args, CASE WHEN :state = 'discarded' THEN :error END, 'k' || (i % 10), :queue,"
            " :empty, :none FROM g",
            {
                "n": count, "state": state, "queue": queue,
                "by": jsonb.from_json('["bench"]'), "args": jsonb.from_json('{"n": 1}'),
                "error": jsonb.from_json(error), "empty": jsonb.from_json("{}"),
                "none": jsonb.from_json("[]"),
            },
        )  # fmt: skip
    conn.execute("COMMIT")
    conn.close()


# --- the concurrent worker -------------------------------------------------------------------


class Worker:
    """A thread claiming one job at a time from the worker's queue with the system's own
    claim, recording each claim's latency (ms) under the current ``phase``."""

    def __init__(self, claim: Callable[[], Any], pids: list[int], close: Callable[[], None]):
        self.claim = claim
        self.pids = pids
        """Its backend pids (hopper's stand-in calls itself ``qctl hopper stand-in``)."""
        self.close = close
        self.phase = "warm-up"
        self.lat: dict[str, list[float]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="worker", daemon=True)

    def loop(self) -> None:
        while not self.stop.is_set():
            t0 = time.perf_counter()
            self.claim()
            self.lat.setdefault(self.phase, []).append((time.perf_counter() - t0) * 1000)
            time.sleep(WORKER_PAUSE)

    def __enter__(self) -> Worker:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.close()


def azync_worker(dsn: str) -> Worker:
    from qctl_store import Config
    from qctl_store.postgres import PostgresStore
    from qctl_store.types import DequeueParams, Source

    store = PostgresStore(dsn, Config(application_name=f"{BENCH_APP} worker"))
    p = DequeueParams(kind="bench.worker", limit=1, lease=timedelta(hours=1))
    return Worker(lambda: store.dequeue_batch(Source.QUEUE, p), [], store.close)


def hopper_worker(dsn: str) -> Worker:
    from qctl.systems.hopper.standin import StandIn

    standin = StandIn(dsn, "hopper")
    client = standin.register("bench-worker", ttl=3600)
    pid = standin.conn.info.backend_pid
    return Worker(lambda: standin.claim("worker", client), [pid], standin.close)


def dispatch_worker(dsn: str) -> Worker:
    from qctl.systems.dispatch import reads

    # dispatch's own DequeueJobs statement (FOR UPDATE SKIP LOCKED), as its workers run it
    dequeue = reads.queries("demo.sql").dequeue
    conn = psycopg.connect(dsn, autocommit=True, application_name=f"{BENCH_APP} worker")
    params = {"queues": ["worker"], "limit": 1}
    return Worker(
        lambda: conn.execute(dequeue, params).fetchall(), [conn.info.backend_pid], conn.close
    )


def river_worker(dsn: str) -> Worker:
    from qctl.systems.river.standin import StandIn

    # River's own JobGetAvailable (FOR UPDATE SKIP LOCKED), through the demo's stand-in;
    # an empty mark matches every job
    standin = StandIn(dsn, "public", {})
    pid = standin.conn.info.backend_pid
    return Worker(lambda: standin.fetch("worker", "bench-worker", 1), [pid], standin.close)


def oban_worker(dsn: str) -> Worker:
    from qctl.systems.oban import reads

    # oban-py's own fetch_jobs (FOR UPDATE SKIP LOCKED), as the demo's nodes run it; an
    # empty mark matches every job
    fetch = reads.queries("demo.sql").fetch_jobs
    conn = psycopg.connect(dsn, autocommit=True, application_name=f"{BENCH_APP} worker")
    params = {"queue": "worker", "mark": "{}", "demand": 1, "attempted_by": ["bench", "w"]}
    return Worker(
        lambda: conn.execute(fetch, params).fetchall(), [conn.info.backend_pid], conn.close
    )


# --- one measured verb -----------------------------------------------------------------------


class TxSampler(threading.Thread):
    """The longest transaction of any ``qctl*`` connection to the database (the worker's
    excluded), from pg_stat_activity every ``SAMPLE_EVERY`` seconds."""

    def __init__(self, dsn: str, exclude: list[int]) -> None:
        super().__init__(daemon=True)
        self.dsn = dsn
        self.exclude = exclude
        self.longest = 0.0
        self.statement = ""
        """What the longest transaction was running when it was seen longest."""
        self.seen = 0
        """Samples that found a qctl connection: 0 would mean it names itself otherwise."""
        self.stop = threading.Event()

    def run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True, application_name=f"{BENCH_APP} tx") as c:
            while not self.stop.is_set():
                rows = c.execute(
                    "SELECT EXTRACT(EPOCH FROM clock_timestamp() - xact_start),"
                    " state || ': ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 160)"
                    " FROM pg_stat_activity WHERE datname = current_database()"
                    " AND application_name LIKE 'qctl%%' AND pid <> ALL(%s)",
                    [self.exclude],
                ).fetchall()
                self.seen += bool(rows)
                for age, statement in rows:
                    if age is not None and float(age) > self.longest:
                        self.longest, self.statement = float(age), statement
                time.sleep(SAMPLE_EVERY)


@dataclass
class Measured:
    seconds: float
    rss_mb: float
    longest_tx: float
    done: int | None
    record: dict[str, Any]
    exit: int
    stderr: str
    load: tuple[float, float, float]
    tx_samples: int
    tx_statement: str
    lat: list[float] = field(default_factory=list)


def qctl_cmd(dsn: str, system: str, *args: str) -> list[str]:
    return [QCTL, "--dsn", dsn, "--system", system, *args]


def offers_max(dsn: str, system: str, noun: str, verb: str) -> bool:
    """Whether this checkout's verb takes ``--max`` (azync's bulk verbs gain it when they
    move onto the verb engine)."""
    out = subprocess.run(
        qctl_cmd(dsn, system, noun, verb, "--help"), capture_output=True, text=True, check=True
    ).stdout
    return "--max" in out


def done_count(record: dict[str, Any]) -> int | None:
    """The verb engine's ``done``; before azync's verbs move onto it, the count its own
    JSON gives."""
    for key in ("done", "count", "affected", "retried", "paused", "n"):
        if isinstance(record.get(key), int):
            return int(record[key])
    return None


def measure(dsn: str, cmd: list[str], worker: Worker, label: str) -> Measured:
    """``cmd`` as a subprocess, its output into files (a 150,000-id JSON would fill a
    pipe while ``wait4`` waits), its own peak RSS from ``wait4``."""
    sampler = TxSampler(dsn, worker.pids)
    sampler.start()
    worker.phase = label
    try:
        m = run_qctl(cmd)
    finally:
        worker.phase = "between"
        sampler.stop.set()
        sampler.join()
    m.longest_tx, m.tx_samples, m.tx_statement = sampler.longest, sampler.seen, sampler.statement
    m.lat = worker.lat.get(label, [])
    return m


def run_qctl(cmd: list[str]) -> Measured:
    """``cmd`` alone: its wall time, peak RSS, record and exit."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    try:
        record = json.loads(text)
    except ValueError:
        record = {}
    if not isinstance(record, dict):
        record = {"rows": record}
    return Measured(
        seconds=took,
        rss_mb=usage.ru_maxrss / 1024,  # KiB on Linux
        longest_tx=0.0,
        done=done_count(record),
        record=record,
        exit=proc.returncode,
        stderr=errors.strip()[-500:],
        load=os.getloadavg(),
        tx_samples=0,
        tx_statement="",
    )


# --- the scenario ----------------------------------------------------------------------------


@dataclass(frozen=True)
class System:
    name: str
    load: Callable[[str, int, int], None]
    worker: Callable[[str], Worker]
    verbs: tuple[tuple[str, str, tuple[str, ...]], ...]
    """(kind of verb: retry or cancel, the verb, its filter options)."""


SYSTEMS = (
    System(
        "azync",
        load_azync,
        azync_worker,
        (
            ("retry", "retry", ("--state", "dead", "--kind", "bench.target")),
            ("cancel", "delete", ("--state", "pending", "--kind", "bench.target")),
        ),
    ),
    System(
        "hopper",
        load_hopper,
        hopper_worker,
        (
            ("retry", "retry", ("--state", "discarded", "--queue", "target")),
            ("cancel", "cancel", ("--queue", "target")),
        ),
    ),
    System(
        "dispatch",
        load_dispatch,
        dispatch_worker,
        (("cancel", "cancel", ("--queue", "target")),),
    ),
    System(
        "river",
        load_river,
        river_worker,
        (
            ("retry", "retry", ("--state", "discarded", "--queue", "target")),
            ("cancel", "cancel", ("--queue", "target")),
        ),
    ),
    System(
        "oban",
        load_oban,
        oban_worker,
        (
            ("retry", "retry", ("--state", "discarded", "--queue", "target")),
            ("cancel", "cancel", ("--queue", "target")),
        ),
    ),
)


@contextmanager
def loaded(rec: Recorder, server: str, system: System, n: int, worker_jobs: int) -> Iterator[str]:
    with scratch_database(server, f"qctl_bench_bulk_{system.name}") as dsn:
        t0 = time.perf_counter()
        system.load(dsn, n, worker_jobs)
        took = time.perf_counter() - t0
        rec.add("postgres", "load", took, "s", f"{n:,} targets, SQL, not measured below")
        yield dsn


def run_system(
    server: str, json_path: str | None, system: System, n: int, baseline: float, profile: str
) -> None:
    rec = Recorder(json_path, "bulk", system.name)
    # More than the worker claims in the run (about 40 a second); no more, since
    # dispatch's dequeue sorts every pending job of its queue for each claim.
    worker_jobs = 5_000 if n < 50_000 else 20_000
    with loaded(rec, server, system, n, worker_jobs) as dsn, system.worker(dsn) as worker:
        time.sleep(1)  # connections made, caches warm: not part of the baseline
        for kind, verb, filters in system.verbs:
            # The baseline right before each verb: on a shared machine the load moves
            # within minutes (a first run's baselines were 32 to 118 ms apart).
            worker.phase = f"{verb} alone"
            time.sleep(baseline)
            base = worker.lat.get(worker.phase, [])
            base_p99 = pct(base, 0.99)
            alone = f"{len(base)} claims"
            rec.add("postgres", f"{kind}: worker claim p99 alone", base_p99, "ms", alone)
            extra = ("--max", str(MAX)) if offers_max(dsn, system.name, "jobs", verb) else ()
            args = ("jobs", verb, *filters, *extra, "--yes", "-o", "json")
            cmd = qctl_cmd(dsn, system.name, *args)
            if profile:
                # cProfile of the qctl process itself: its figures are not the run's
                path = os.path.join(profile, f"{system.name}-{verb}.prof")
                cmd = [sys.executable, "-m", "cProfile", "-o", path, *cmd]
            m = measure(dsn, cmd, worker, verb)
            if profile:
                show_profile(path)
            shown = "qctl " + " ".join(args)
            ok = m.exit == 0 and m.done == n
            if not ok:
                print(f"  {shown}: exit {m.exit}, done {m.done} of {n:,}: {m.stderr}", flush=True)
            p99 = pct(m.lat, 0.99)
            common = {
                "kind": kind,
                "command": shown,
                "jobs": n,
                "done": m.done,
                "exit": m.exit,
                "ok": ok,
                "batches": m.record.get("batches"),
                "skipped": m.record.get("skipped"),
                "load_after": [round(x, 2) for x in m.load],
            }
            rec.add("postgres", f"{kind}: time", m.seconds, "s", shown, **common)
            rec.add("postgres", f"{kind}: peak RSS", m.rss_mb, "MB", "wait4 ru_maxrss", **common)
            rec.add(
                "postgres",
                f"{kind}: longest qctl transaction",
                m.longest_tx * 1000,
                "ms",
                f"{m.tx_samples} samples found a qctl connection",
                statement=m.tx_statement,
                **common,
            )
            rec.add(
                "postgres",
                f"{kind}: worker claim p99 / alone",
                p99 / base_p99 if base_p99 else float("nan"),
                "x",
                f"p99 {p99:.2f} ms over {len(m.lat)} claims; alone {base_p99:.2f} ms"
                f" over {len(base)}",
                **common,
            )


Verbs = tuple[tuple[str, str, tuple[str, ...]], ...]
SQLITE_SYSTEMS: dict[str, tuple[Callable[[str, int], None], Verbs]] = {
    "azync": (
        load_azync_sqlite,
        (
            ("retry", "retry", ("--state", "dead", "--kind", "bench.target")),
            ("delete", "delete", ("--state", "pending", "--kind", "bench.target")),
        ),
    ),
    "river": (
        load_river_sqlite,
        (
            ("retry", "retry", ("--state", "discarded", "--queue", "target")),
            ("cancel", "cancel", ("--queue", "target")),
            ("delete", "delete", ("--state", "cancelled", "--queue", "target")),
        ),
    ),
}
"""The systems on SQLite, each loader and verbs as ``SYSTEMS``' (azync's delete is the
reference of River's cancel and delete, as its delete is of cancel on PostgreSQL)."""
AZYNC_REFERENCE = {"retry": "retry", "cancel": "delete", "delete": "delete"}


def run_sqlite(json_path: str | None, n: int, wanted: list[str]) -> None:
    """The verbs on SQLite files, azync's first: each one ``qctl`` process alone (no
    worker beside it, and no transaction sampling: SQLite has no pg_stat_activity), its
    time also over azync's of the same kind in this run."""
    reference: dict[str, float] = {}
    for name, (load, verbs) in SQLITE_SYSTEMS.items():
        if name not in wanted:
            continue
        print(f"== {name} on SQLite: {n:,} jobs", flush=True)
        rec = Recorder(json_path, "bulk", name)
        path = sqlite_file(f"bulk_{name}.sqlite3")
        t0 = time.perf_counter()
        load(path, n)
        took = time.perf_counter() - t0
        rec.add("sqlite", "load", took, "s", f"{n:,} targets, SQL, not measured below")
        dsn = f"sqlite:///{path}"
        for kind, verb, filters in verbs:
            extra = ("--max", str(MAX)) if offers_max(dsn, name, "jobs", verb) else ()
            args = ("jobs", verb, *filters, *extra, "--yes", "-o", "json")
            m = run_qctl(qctl_cmd(dsn, name, *args))
            shown = "qctl " + " ".join(args)
            ok = m.exit == 0 and m.done == n
            if not ok:
                print(f"  {shown}: exit {m.exit}, done {m.done} of {n:,}: {m.stderr}", flush=True)
            common = {
                "kind": kind,
                "command": shown,
                "jobs": n,
                "done": m.done,
                "exit": m.exit,
                "ok": ok,
                "batches": m.record.get("batches"),
                "load_after": [round(x, 2) for x in m.load],
            }
            rec.add("sqlite", f"{kind}: time", m.seconds, "s", shown, **common)
            rec.add("sqlite", f"{kind}: peak RSS", m.rss_mb, "MB", "wait4 ru_maxrss", **common)
            if name == "azync":
                reference[kind] = m.seconds
            elif (base := reference.get(AZYNC_REFERENCE[kind])) is not None:
                ref = f"azync's {AZYNC_REFERENCE[kind]} in this run, {base:.2f} s"
                rec.add("sqlite", f"{kind}: time / azync's", m.seconds / base, "x", ref, **common)


def show_profile(path: str, top: int = 25) -> None:
    import pstats

    print(f"  profile {path}:", flush=True)
    pstats.Stats(path).sort_stats("cumulative").print_stats(top)
    pstats.Stats(path).sort_stats("tottime").print_stats(top)


def main() -> None:
    ap = base_args(__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--jobs", type=int, default=150_000, help="targets per system")
    ap.add_argument("--systems", default="azync,hopper,dispatch,river,oban")
    ap.add_argument(
        "--backend",
        choices=("postgres", "sqlite"),
        default="postgres",
        help="sqlite: azync and River on SQLite files under bench/out/",
    )
    ap.add_argument(
        "--profile", default="", metavar="DIR", help="run each verb under cProfile into DIR"
    )
    args = ap.parse_args()
    n = 15_000 if args.quick else args.jobs
    baseline = 3.0 if args.quick else 10.0
    info = machine_info(args.pg)
    rec = Recorder(args.json, "bulk", "machine")
    rec.add("postgres", "machine", os.getloadavg()[0], "load", "load average at start", **info)
    wanted = args.systems.split(",")
    if args.backend == "sqlite":
        run_sqlite(args.json, n, wanted)
    for system in SYSTEMS if args.backend == "postgres" else ():
        if system.name in wanted:
            print(f"== {system.name}: {n:,} jobs", flush=True)
            run_system(args.pg, args.json, system, n, baseline, args.profile)
    load = os.getloadavg()
    rec.add("postgres", "load at end", load[0], "load", " ".join(f"{x:.2f}" for x in load))


if __name__ == "__main__":
    main()
