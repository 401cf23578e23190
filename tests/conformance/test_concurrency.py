"""Leasing under concurrency, on both backends: competing workers (threads, and
separate processes) never get the same job, a stale lease token can never settle a
job, and ``retry_all_dead`` racing live workers loses nothing."""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from qctl_kit.errors import NotFound
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import DequeueParams, Job, JobFilter, JobState, Source
from tests.conformance.helpers import (
    MINUTE,
    REAP_LEASE,
    REAP_WAIT,
    AnyStore,
    dequeue_n,
    enqueue_due,
    token,
    unique,
)
from tests.conftest import StoreFactory

Q = Source.QUEUE
WORKERS = 4
DEADLINE = 60.0
"""Seconds a drain may take before the test gives up (it normally takes well under 5)."""
HANDLER_TIME = 0.002
"""Seconds a worker "handles" each batch, outside any transaction, as real workers do.
Without it a worker that acks in a tight loop re-takes SQLite's write lock before a
waiter's busy handler wakes up, and one worker may drain everything alone."""


def enqueue_many(store: AnyStore, kind: str, n: int) -> set[uuid.UUID]:
    return {enqueue_due(store, kind) for _ in range(n)}


def drain(store: AnyStore, kind: str, batch: int = 3) -> list[uuid.UUID]:
    """Lease and ack until the kind has nothing due; returns the ids this worker acked."""
    acked: list[uuid.UUID] = []
    while True:
        jobs = dequeue_n(store, Q, kind, batch)
        if not jobs:
            return acked
        time.sleep(HANDLER_TIME)
        for job in jobs:
            store.ack(job.id, token(job))
            acked.append(job.id)


def counts_by_state(store: AnyStore, kind: str) -> Counter[JobState]:
    jobs, _ = store.list_jobs(Q, JobFilter(kind=kind), 0, 0)
    return Counter(j.state for j in jobs)


def assert_competed(shares: list[list[uuid.UUID]]) -> None:
    """Guard against a vacuous pass: at least two workers really did lease jobs."""
    assert sum(1 for share in shares if share) >= 2, [len(s) for s in shares]


def assert_each_acked_once(acked: list[uuid.UUID], ids: set[uuid.UUID]) -> None:
    dupes = [id for id, n in Counter(acked).items() if n > 1]
    assert dupes == [], f"{len(dupes)} jobs were leased and acked more than once"
    assert set(acked) == ids, "every job was acked"


# --- no job is leased twice ----------------------------------------------------------------


def test_threads_sharing_one_store_never_lease_the_same_job(store: AnyStore) -> None:
    kind = unique("conc_shared")
    ids = enqueue_many(store, kind, 120)
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda _: drain(store, kind), range(WORKERS)))
    assert_competed(results)
    assert_each_acked_once([id for r in results for id in r], ids)
    assert counts_by_state(store, kind) == Counter({JobState.SUCCEEDED: len(ids)})


def test_threads_with_their_own_stores_never_lease_the_same_job(
    store: AnyStore, store_factory: StoreFactory
) -> None:
    kind = unique("conc_own")
    ids = enqueue_many(store, kind, 120)
    stores = [store_factory(pool_max_size=2) for _ in range(WORKERS)]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda s: drain(s, kind), stores))
    assert_competed(results)
    assert_each_acked_once([id for r in results for id in r], ids)
    assert counts_by_state(store, kind) == Counter({JobState.SUCCEEDED: len(ids)})


def _process_drain(
    backend: str,
    where: str,
    schema: str,
    kind: str,
    start: threading.Barrier,
    out: multiprocessing.Queue[list[str]],
) -> None:
    """A worker process with its own store on the same database."""
    s: AnyStore
    if backend == "postgres":
        s = PostgresStore(where, Config(schema=schema, pooled=False))
    else:
        s = SqliteStore(where)
    try:
        start.wait(DEADLINE)
        out.put([str(id) for id in drain(s, kind)])
    finally:
        s.close()


def test_worker_processes_never_lease_the_same_job(store: AnyStore) -> None:
    """Two worker processes and this one drain one kind (on SQLite: one shared file)."""
    kind = unique("conc_proc")
    ids = enqueue_many(store, kind, 150)
    where = store.dsn if isinstance(store, PostgresStore) else store.path
    ctx = multiprocessing.get_context("spawn")  # no fork of a process holding connections
    out: multiprocessing.Queue[list[str]] = ctx.Queue()
    start = ctx.Barrier(3)  # nobody drains before every worker has its store open
    args = (store.backend, where, store.schema, kind, start, out)
    procs = [ctx.Process(target=_process_drain, args=args) for _ in range(2)]
    for p in procs:
        p.start()
    start.wait(DEADLINE)
    mine = drain(store, kind)
    theirs = [[uuid.UUID(id) for id in out.get(timeout=DEADLINE)] for _ in procs]
    for p in procs:
        p.join(timeout=DEADLINE)
        assert p.exitcode == 0
    assert_competed([mine, *theirs])
    acked = mine + [id for share in theirs for id in share]
    assert_each_acked_once(acked, ids)
    assert counts_by_state(store, kind) == Counter({JobState.SUCCEEDED: len(ids)})


# --- stale lease tokens never settle -------------------------------------------------------

STALE_SETTLEMENTS: dict[str, Callable[[AnyStore, uuid.UUID, uuid.UUID], object]] = {
    "ack": lambda s, id, tok: s.ack(id, tok),
    "reschedule": lambda s, id, tok: s.reschedule(id, tok, timedelta(0), "stale"),
    "dead": lambda s, id, tok: s.dead(id, tok, "stale"),
    "skip": lambda s, id, tok: s.skip(id, tok, "stale"),
    "release": lambda s, id, tok: s.release(id, tok),
    "snooze": lambda s, id, tok: s.snooze(id, tok, timedelta(0), "stale"),
    "extend_lease": lambda s, id, tok: s.extend_lease(id, tok, MINUTE),
}


def observable(job: Job) -> tuple[object, ...]:
    return (
        job.state,
        job.attempt,
        job.reap_count,
        job.lease_token,
        job.lease_until,
        job.run_at,
        job.last_error,
        job.completed_at,
        job.failed_at,
    )


def test_a_stale_lease_token_can_never_settle_a_job(store: AnyStore) -> None:
    kind = unique("conc_stale")
    n = 8
    ids = enqueue_many(store, kind, n)
    stale = {j.id: token(j) for j in dequeue_n(store, Q, kind, n, REAP_LEASE)}
    assert set(stale) == ids
    time.sleep(REAP_WAIT)
    assert store.reap_expired(Q, [kind], 5) == (n, 0)
    live = {j.id: j for j in dequeue_n(store, Q, kind, n)}
    assert set(live) == ids
    assert all(token(live[id]) != stale[id] for id in ids), "a re-lease mints a new token"

    before = {id: (observable(store.get_job(Q, id)), store.job_attempts(Q, id)) for id in ids}
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()

    def settle_stale(id: uuid.UUID) -> None:
        for name, settle in STALE_SETTLEMENTS.items():
            try:
                settle(store, id, stale[id])
                outcome = f"{name}: settled"
            except NotFound:
                outcome = "not found"
            with lock:
                outcomes[outcome] += 1

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(settle_stale, ids))
    assert outcomes == Counter({"not found": n * len(STALE_SETTLEMENTS)})
    after = {id: (observable(store.get_job(Q, id)), store.job_attempts(Q, id)) for id in ids}
    assert after == before, "stale settlements changed nothing"
    for id in ids:  # the live owners still hold their leases
        store.ack(id, token(live[id]))


# --- retry_all_dead racing live workers ----------------------------------------------------


def test_retry_all_dead_racing_workers_loses_nothing(store: AnyStore) -> None:
    """Workers kill every job on its first run and ack it on its second, while another
    thread keeps calling retry_all_dead: every job must end succeeded, acked exactly once."""
    kind = unique("conc_retry")
    ids = enqueue_many(store, kind, 60)
    killed: set[uuid.UUID] = set()
    acked: list[uuid.UUID] = []
    lock = threading.Lock()
    done = threading.Event()
    retried = 0

    def worker() -> None:
        deadline = time.monotonic() + DEADLINE
        while not done.is_set() and time.monotonic() < deadline:
            jobs = store.dequeue_batch(Q, DequeueParams(kind=kind, limit=4, lease=MINUTE))
            if not jobs:
                time.sleep(0.002)
                continue
            for job in jobs:
                with lock:
                    first_run = job.id not in killed
                    killed.add(job.id)
                if first_run:
                    store.dead(job.id, token(job), "first run fails")
                else:
                    store.ack(job.id, token(job))
                    with lock:
                        acked.append(job.id)
                        if len(set(acked)) == len(ids):
                            done.set()

    def retrier() -> None:
        nonlocal retried
        deadline = time.monotonic() + DEADLINE
        while not done.is_set() and time.monotonic() < deadline:
            retried += store.retry_all_dead(Q, kind)
            time.sleep(0.001)

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    threads.append(threading.Thread(target=retrier))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE + 5)
    assert done.is_set(), f"only {len(set(acked))} of {len(ids)} jobs finished"
    assert_each_acked_once(acked, ids)
    assert retried == len(ids), "each job was dead exactly once, so retried exactly once"
    assert counts_by_state(store, kind) == Counter({JobState.SUCCEEDED: len(ids)})
    for id in ids:
        assert [a.error for a in store.job_attempts(Q, id)] == ["first run fails"]
