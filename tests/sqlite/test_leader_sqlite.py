"""Leader election over lease rows: acquire, contend, release, renewal, takeover after
the holder died."""

from __future__ import annotations

import multiprocessing
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest

from qctl_store.sqlite import SqliteStore

TTL = timedelta(milliseconds=600)


@pytest.fixture
def path(tmp_path: Path) -> str:
    p = str(tmp_path / "q.db")
    with SqliteStore(p) as store:
        store.migrate()
    return p


def _store(path: str) -> SqliteStore:
    store = SqliteStore(path)
    store.lease_ttl = TTL
    return store


def test_acquire_contend_release(path: str) -> None:
    a, b = _store(path), _store(path)
    try:
        lease, acquired = a.acquire_leadership_lease("cron")
        assert acquired and lease is not None and lease.valid()
        assert b.acquire_leadership_lease("cron") == (None, False)
        # Other names are independent.
        other, ok = b.acquire_leadership_lease("other")
        assert ok and other is not None
        other.release()
        lease.release()
        lease.release()  # idempotent
        assert not lease.valid()
        again, acquired = b.acquire_leadership_lease("cron")
        assert acquired and again is not None
        again.release()
    finally:
        a.close()
        b.close()


def test_the_lease_renews_itself_past_its_ttl(path: str) -> None:
    a, b = _store(path), _store(path)
    try:
        lease, _ = a.acquire_leadership_lease("renew")
        assert lease is not None
        time.sleep(TTL.total_seconds() * 2)
        assert lease.valid()
        assert b.acquire_leadership_lease("renew") == (None, False)
        lease.release()
    finally:
        a.close()
        b.close()


def test_the_lease_outlives_close_of_its_store(path: str) -> None:
    a = _store(path)
    lease, _ = a.acquire_leadership_lease("survivor")
    assert lease is not None
    a.close()
    assert lease.valid()
    lease.release()


def test_acquire_leadership_returns_a_release_func(path: str) -> None:
    a, b = _store(path), _store(path)
    try:
        release, acquired = a.acquire_leadership("wrapped")
        assert acquired
        noop, lost = b.acquire_leadership("wrapped")
        assert not lost
        noop()
        release()
        release_b, acquired_b = b.acquire_leadership("wrapped")
        assert acquired_b
        release_b()
    finally:
        a.close()
        b.close()


def test_a_taken_row_invalidates_the_lease(path: str) -> None:
    import sqlite3

    a = _store(path)
    try:
        lease, _ = a.acquire_leadership_lease("stolen")
        assert lease is not None
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE qctl_leases SET holder = 'someone-else' WHERE name = 'stolen'")
        assert not lease.valid()
        lease.release()  # does not delete the new holder's row
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT holder FROM qctl_leases WHERE name = 'stolen'").fetchone()
    finally:
        a.close()


def _hold_and_die(path: str, ready: multiprocessing.synchronize.Event) -> None:
    store = _store(path)
    lease, acquired = store.acquire_leadership_lease("crashy")
    assert acquired and lease is not None
    ready.set()
    os._exit(0)  # dies holding the lease: no release, no more renewals


def test_expired_lease_of_a_dead_holder_is_taken_over(path: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    child = ctx.Process(target=_hold_and_die, args=(path, ready))
    child.start()
    assert ready.wait(30)
    child.join(30)
    b = _store(path)
    try:
        lease, acquired = b.acquire_leadership_lease("crashy")
        if acquired:  # the child's lease expired already on a slow machine
            assert lease is not None
            lease.release()
            return
        time.sleep(TTL.total_seconds() + 0.1)
        lease, acquired = b.acquire_leadership_lease("crashy")
        assert acquired and lease is not None
        lease.release()
    finally:
        b.close()
