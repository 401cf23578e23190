"""Two writer processes sharing one database file: concurrent enqueue, lease and ack
finish without "database is locked" errors, and no job is ever leased twice."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from qctl_store.sqlite import SqliteStore
from qctl_store.types import DequeueParams, EnqueueParams, Source

KIND = "mp_work"
PER_WORKER = 150


def _worker(path: str, start: float) -> list[str]:
    """Enqueue PER_WORKER jobs while leasing and acking whatever is due, then drain."""
    while time.time() < start:  # line both processes up on the write lock
        time.sleep(0.001)
    leased: list[str] = []
    with SqliteStore(path) as store:
        params = DequeueParams(kind=KIND, limit=7, lease=timedelta(minutes=5))
        for _ in range(PER_WORKER):
            assert store.enqueue(EnqueueParams(kind=KIND, payload={"n": 1}))
            for job in store.dequeue_batch(Source.QUEUE, params):
                assert job.lease_token is not None
                store.ack(job.id, job.lease_token)
                leased.append(str(job.id))
        while batch := store.dequeue_batch(Source.QUEUE, params):
            for job in batch:
                assert job.lease_token is not None
                store.ack(job.id, job.lease_token)
                leased.append(str(job.id))
    return leased


def test_two_writer_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "q.db")
    with SqliteStore(path) as store:
        store.migrate()
    ctx = multiprocessing.get_context("spawn")
    start = time.time() + 1.5  # after both interpreters started
    with ctx.Pool(2) as pool:
        results = pool.starmap(_worker, [(path, start), (path, start)])
    leased = results[0] + results[1]
    assert len(leased) == len(set(leased)), "a job was leased twice"
    assert len(leased) == 2 * PER_WORKER
    with sqlite3.connect(path) as conn:
        states = dict(
            conn.execute(
                "SELECT state, COUNT(*) FROM azync_jobs WHERE kind = ? GROUP BY state", (KIND,)
            ).fetchall()
        )
        attempts = conn.execute(
            "SELECT MAX(attempt) FROM azync_jobs WHERE kind = ?", (KIND,)
        ).fetchone()[0]
    assert states == {"succeeded": 2 * PER_WORKER}
    assert attempts == 1
    assert {str(uuid.UUID(i)) for i in leased} == set(leased)


HOG_CAP = 1000
WAITER_JOBS = 5


def _hog(path: str, waiting: Any, result: Any) -> None:
    """Commit back-to-back write transactions that each hold the lock for a while, as a
    bulk maintenance loop does, until the waiter's jobs are all in (or the cap); report
    how many of them ran after the waiter started."""
    with SqliteStore(path) as store:
        since = 0
        for _ in range(HOG_CAP):
            with store.tx() as t:
                row = t.one("SELECT COUNT(*) AS n FROM azync_jobs WHERE kind = 'waiter'")
                time.sleep(0.01)
            since += waiting.is_set()
            if row is not None and row["n"] == WAITER_JOBS:
                break
    result.value = since


def _waiter(path: str, waiting: Any) -> None:
    with SqliteStore(path) as store:
        time.sleep(0.3)  # the hog is looping by now
        waiting.set()
        for _ in range(WAITER_JOBS):
            assert store.enqueue(EnqueueParams(kind="waiter", payload={}))


def test_a_writer_in_a_tight_loop_does_not_starve_another(tmp_path: Path) -> None:
    """SQLite's busy handler alone lets a process that re-takes the lock right after
    each commit starve a sleeping waiter for as long as it keeps writing (about a hundred
    of these transactions per waiter job); the turnstile hands the lock over."""
    path = str(tmp_path / "fair.db")
    with SqliteStore(path) as store:
        store.migrate()
    ctx = multiprocessing.get_context("spawn")
    waiting = ctx.Event()
    result = ctx.Value("i", -1)
    hog = ctx.Process(target=_hog, args=(path, waiting, result))
    waiter = ctx.Process(target=_waiter, args=(path, waiting))
    hog.start()
    waiter.start()
    waiter.join(120)
    hog.join(120)
    assert waiter.exitcode == 0 and hog.exitcode == 0
    # A few hand-overs per waiter job; without the turnstile it is dozens to hundreds.
    assert 0 <= result.value <= 4 * WAITER_JOBS, result.value
