"""enqueue_tx / publish_tx join the caller's transaction on their own connection to the
same file: rolled back with it, or committed with it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from qctl_kit import errors
from qctl_store.sqlite import SqliteStore
from qctl_store.types import EnqueueParams, JobFilter, PublishParams, Source, Subscriber


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(str(tmp_path / "q.db")) as s:
        s.migrate()
        s.register_subscriber(Subscriber(name="tx_sub", event_type="evt.tx", max_attempts=3))
        yield s


@pytest.fixture
def conn(store: SqliteStore) -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(store.path, isolation_level=None)
    c.execute("PRAGMA foreign_keys = ON")
    yield c
    c.close()


def _app_write(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS app_orders (id INTEGER PRIMARY KEY)")
    conn.execute("INSERT INTO app_orders DEFAULT VALUES")


def test_enqueue_tx_commits_with_the_caller(store: SqliteStore, conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    _app_write(conn)
    p = EnqueueParams(kind="tx_commit", payload={"a": 1})
    assert store.enqueue_tx(conn, p)
    conn.execute("COMMIT")
    job = store.get_job(Source.QUEUE, p.id)
    assert job.payload == {"a": 1}
    assert sum(d.enqueued for d in store.stats(Source.QUEUE, "tx_commit")[1]) == 1


def test_enqueue_tx_rolls_back_with_the_caller(
    store: SqliteStore, conn: sqlite3.Connection
) -> None:
    conn.execute("BEGIN IMMEDIATE")
    p = EnqueueParams(kind="tx_rollback", payload={})
    assert store.enqueue_tx(conn, p)
    conn.execute("ROLLBACK")
    with pytest.raises(errors.NotFound):
        store.get_job(Source.QUEUE, p.id)
    assert store.list_kinds(Source.QUEUE) == []


def test_enqueue_tx_dedupes_inside_the_transaction(
    store: SqliteStore, conn: sqlite3.Connection
) -> None:
    conn.execute("BEGIN IMMEDIATE")
    assert store.enqueue_tx(conn, EnqueueParams(kind="tx_dup", idempotency_key="k"))
    assert not store.enqueue_tx(conn, EnqueueParams(kind="tx_dup", idempotency_key="k"))
    conn.execute("COMMIT")
    assert store.list_jobs(Source.QUEUE, JobFilter(kind="tx_dup"))[1] == 1


def test_publish_tx_commits_with_the_caller(store: SqliteStore, conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    p = PublishParams(type="evt.tx", payload={"k": "v"})
    assert store.publish_tx(conn, p) == 1
    conn.execute("COMMIT")
    assert store.get_event(p.id).deliveries == 1


def test_publish_tx_rolls_back_with_the_caller(
    store: SqliteStore, conn: sqlite3.Connection
) -> None:
    conn.execute("BEGIN IMMEDIATE")
    p = PublishParams(type="evt.tx", payload={})
    assert store.publish_tx(conn, p) == 1
    conn.execute("ROLLBACK")
    with pytest.raises(errors.NotFound):
        store.get_event(p.id)
    assert store.list_jobs(Source.EVENT, JobFilter(kind="tx_sub"))[1] == 0


def test_bad_input_is_refused_before_touching_the_transaction(
    store: SqliteStore, conn: sqlite3.Connection
) -> None:
    conn.execute("BEGIN IMMEDIATE")
    with pytest.raises(errors.InvalidInput):
        store.enqueue_tx(conn, EnqueueParams(kind=""))
    conn.execute("COMMIT")


def test_a_connection_outside_a_transaction_is_refused(
    store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # In autocommit each statement would commit alone, losing the all-or-nothing promise.
    with pytest.raises(errors.InvalidInput, match="transaction"):
        store.enqueue_tx(conn, EnqueueParams(kind="tx_autocommit"))
    assert store.list_kinds(Source.QUEUE) == []


def test_an_error_after_sqlite_ended_the_transaction_is_not_masked(store: SqliteStore) -> None:
    """When SQLite already rolled the transaction back (as it does on some errors), the
    caller's error surfaces, not a "no transaction is active" from our rollback, and the
    connection is ready for the next transaction."""
    with pytest.raises(LookupError), store.tx() as t:
        t.execute("INSERT INTO qctl_leases VALUES ('tx_err', 'h', 1)")
        t.execute("ROLLBACK")
        raise LookupError("the caller's error")
    with store.tx() as t:
        assert t.one("SELECT 1 FROM qctl_leases WHERE name = 'tx_err'") is None
    with store.read() as t:  # a read ended early by SQLite is closed quietly too
        t.execute("ROLLBACK")
    assert store.list_jobs(Source.QUEUE, JobFilter())[1] == 0
