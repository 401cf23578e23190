"""Scenario 6: DAGs driven to completion by worker and scheduler passes.

    .venv/bin/python bench/dags_bench.py [--quick] [--pg DSN] [--json out.jsonl]
        [--backends postgres,sqlite]

Two shapes: a fan-out (one root, then N children that depend on it; N = 1000) and a
chain of M steps (M = 100), each step depending on the previous one. One loop plays
both roles, as a single-process deployment would: lease a batch of due DAG tasks
(``dequeue_batch(Source.DAG, ...)``, 100 at a time), ``ack`` each, then one scheduler
pass (``promote_unblocked``, ``complete_dags``), until ``get_dag`` reports the DAG
succeeded. Reported: creation time, time to completion, scheduler passes, tasks per
second, and the median cost of one ``promote_unblocked`` pass.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Recorder, base_args, median, scratch_database, sqlite_file

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import DAGDep, DAGParams, DAGState, DAGTask, DequeueParams, Source

AnyStore = PostgresStore | SqliteStore
KIND = "bench.dag.step"


def fan_out(n: int) -> DAGParams:
    tasks = [DAGTask(key="root", kind=KIND)]
    tasks += [DAGTask(key=f"c{i}", kind=KIND) for i in range(n)]
    deps = [DAGDep(task_key=f"c{i}", depends_on_key="root") for i in range(n)]
    return DAGParams(name="bench.fanout", tasks=tasks, deps=deps)


def chain(m: int) -> DAGParams:
    tasks = [DAGTask(key=f"s{i}", kind=KIND) for i in range(m)]
    deps = [DAGDep(task_key=f"s{i}", depends_on_key=f"s{i - 1}") for i in range(1, m)]
    return DAGParams(name="bench.chain", tasks=tasks, deps=deps)


def drive(rec: Recorder, store: AnyStore, backend: str, label: str, p: DAGParams) -> None:
    t0 = time.perf_counter()
    inserted, _ = store.create_dag(p)
    created = time.perf_counter() - t0
    assert inserted
    dp = DequeueParams(kind=KIND, limit=100, lease=timedelta(minutes=5))
    passes = 0
    done = 0
    promote: list[float] = []
    deadline = time.time() + 600
    while time.time() < deadline:
        jobs = store.dequeue_batch(Source.DAG, dp)
        for j in jobs:
            assert j.lease_token is not None
            store.ack(j.id, j.lease_token)
        done += len(jobs)
        t1 = time.perf_counter()
        store.promote_unblocked()
        promote.append((time.perf_counter() - t1) * 1000)
        store.complete_dags()
        passes += 1
        if not jobs and store.get_dag(p.id).state != DAGState.RUNNING:
            break
    total = time.perf_counter() - t0
    state = store.get_dag(p.id).state
    note = f"{len(p.tasks)} tasks, {passes} passes, final state {state}"
    rec.add(backend, f"{label}: create_dag", created * 1000, "ms", f"{len(p.tasks)} tasks")
    rec.add(backend, f"{label}: to completion", total * 1000, "ms", note)
    rec.add(backend, f"{label}: tasks per second", done / total, "tasks/s", note)
    rec.add(backend, f"{label}: promote_unblocked pass p50", median(promote), "ms", note)


def run(rec: Recorder, store: AnyStore, backend: str, quick: bool) -> None:
    store.migrate()
    n, m = (200, 20) if quick else (1000, 100)
    drive(rec, store, backend, f"fan-out 1 to {n}", fan_out(n))
    drive(rec, store, backend, f"chain of {m}", chain(m))


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    ap.add_argument("--backends", default="postgres,sqlite")
    args = ap.parse_args()
    rec = Recorder(args.json, "dags", "qctl")
    backends = args.backends.split(",")
    if "postgres" in backends:
        print("== qctl DAGs on postgres", flush=True)
        with scratch_database(args.pg, "qctl_bench_dags") as dsn:
            store = PostgresStore(dsn, Config(schema=f"qctl_bench_{uuid.uuid4().hex[:6]}"))
            try:
                run(rec, store, "postgres", args.quick)
            finally:
                store.close()
    if "sqlite" in backends:
        print("== qctl DAGs on sqlite", flush=True)
        lite = SqliteStore(sqlite_file("dags.db"))
        try:
            run(rec, lite, "sqlite", args.quick)
        finally:
            lite.close()


if __name__ == "__main__":
    main()
