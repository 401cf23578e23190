"""SQLite change log: hints and wakes across processes, the bulk rule, gap resets and
the log's bound (``qctl_store/sqlite/migrations/0002_change_log.sql``)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from qctl_kit.errors import SchemaNotMigrated
from qctl_kit.streams import Subscription
from qctl_store.sqlite import SqliteStore, changes
from qctl_store.sqlite.changes import ChangeLogReader
from qctl_store.types import Change, ChangeEntity, JobState, Source, Wake
from tests.conformance.helpers import (
    SQLITE_INSERT_QUEUE_JOBS,
    await_change,
    enqueue_due,
    is_reset,
    unique,
)
from tests.conftest import StoreFactory, raw_sqlite

LOG_BOUND = 10_500
"""At most the last 10000 rows plus one trim period of 500 (see the migration)."""


@pytest.fixture(scope="module")
def backend() -> str:
    return "sqlite"


@pytest.fixture
def db_path(store: SqliteStore) -> str:
    return store.path


CHILD = """
import sys, time, uuid
from qctl_kit.errors import SchemaNotMigrated
from qctl_store.sqlite import SqliteStore
from qctl_store.types import EnqueueParams
s = SqliteStore(sys.argv[1])
p = EnqueueParams(kind=sys.argv[2], payload={}, id=uuid.UUID(sys.argv[3]))
assert s.enqueue(p)
print(time.time(), flush=True)
s.close()
"""


def test_writer_in_another_process_is_seen_within_a_second(
    store: SqliteStore, live: Subscription[Change]
) -> None:
    wake = store.wake()
    assert wake is not None
    try:
        kind, id = unique("xproc"), uuid.uuid4()
        child = subprocess.run(
            [sys.executable, "-c", CHILD, store.path, kind, str(id)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        committed = float(child.stdout.strip())
        hint = await_change(live, "the other process's hint", lambda c: c.id == id)
        received = time.time()
        assert (hint.source, hint.kind, hint.state) == (Source.QUEUE, kind, JobState.PENDING)
        # The hint is read at most one poll interval after the commit (plus scheduling).
        assert received - committed < 1.0
        deadline = time.monotonic() + 5
        woken: Wake | None = None
        while woken is None or woken.kind != kind:
            woken = wake.get(timeout=max(0.0, deadline - time.monotonic()))
            assert woken is not None, "the enqueue in the other process woke nobody"
        assert woken == Wake(source=Source.QUEUE, kind=kind)
    finally:
        wake.close()


def test_bulk_rule_per_statement(db_path: str, live: Subscription[Change]) -> None:
    kind, kind50 = unique("bulk60"), unique("rows50")
    with raw_sqlite(db_path) as conn:
        conn.execute(SQLITE_INSERT_QUEUE_JOBS, (60, kind))
    hint = await_change(live, "the bulk insert hint", lambda c: c.bulk)
    assert (hint.entity, hint.source, hint.count, hint.id) == (
        ChangeEntity.JOB,
        Source.QUEUE,
        60,
        None,
    )
    with raw_sqlite(db_path) as conn:
        conn.execute("UPDATE azync_jobs SET state = 'paused' WHERE kind = ?", (kind,))
    hint = await_change(live, "the bulk update hint", lambda c: c.bulk)
    assert (hint.source, hint.count) == (Source.QUEUE, 60)
    with raw_sqlite(db_path) as conn:
        conn.execute(SQLITE_INSERT_QUEUE_JOBS, (50, kind50))
    for _ in range(50):
        c = await_change(live, "a per-row hint", lambda c: c.kind in (kind, kind50) or c.bulk)
        assert c.kind == kind50 and not c.bulk, "50 rows are still announced one by one"


def test_lease_heartbeat_is_silent(store: SqliteStore, db_path: str) -> None:
    kind = unique("heartbeat")
    id = enqueue_due(store, kind)
    with raw_sqlite(db_path) as conn:
        before = conn.execute("SELECT max(seq) FROM qctl_changes").fetchone()[0]
        conn.execute(
            "UPDATE azync_jobs SET lease_until = 1, updated_at = 2 WHERE id = ?", (str(id),)
        )
        after = conn.execute("SELECT max(seq) FROM qctl_changes").fetchone()[0]
    assert before == after


def test_trimmed_past_the_reader_announces_a_reset(store: SqliteStore, db_path: str) -> None:
    # A reader driven by hand (subscribing to its hub starts no thread), so it can be
    # made to fall behind the trim.
    reader = ChangeLogReader(store)
    sub = reader.changes.subscribe()
    try:
        reader.poll()
        assert sub.get(timeout=0) is not None and sub.get(timeout=0) is None
        with raw_sqlite(db_path) as conn:
            for _ in range(12):
                conn.execute(SQLITE_INSERT_QUEUE_JOBS, (1000, unique("trim")))
        while reader.poll():
            pass
        first = sub.get(timeout=0)
        assert first is not None and first.entity == ChangeEntity.RESET
    finally:
        reader.close()


def test_log_stays_bounded_under_a_sustained_stream(
    store: SqliteStore, db_path: str, live: Subscription[Change]
) -> None:
    with raw_sqlite(db_path) as conn:
        for _ in range(30):  # 12000 changes in 300 statements of 40 rows
            for _ in range(10):
                conn.execute(SQLITE_INSERT_QUEUE_JOBS, (40, unique("stream")))
            count = conn.execute("SELECT count(*) FROM qctl_changes").fetchone()[0]
            assert count <= LOG_BOUND
    assert live.buffered <= 256


def test_poll_only_store_has_no_reader(store_factory: StoreFactory) -> None:
    s = store_factory(poll_only=True)
    assert s.changes() is None and s.wake() is None
    assert s.schema_status().push is False
    assert store_factory().schema_status().change_triggers is True


def test_unmigrated_file_is_reported(tmp_path: Path) -> None:
    s = SqliteStore(str(tmp_path / "empty.db"))
    try:
        with pytest.raises(SchemaNotMigrated):
            s.changes()
    finally:
        s.close()


def test_in_memory_database_is_poll_only() -> None:
    # Each thread's ":memory:" connection is a database of its own: no reader can see it.
    s = SqliteStore(":memory:")
    try:
        assert s.changes() is None and s.wake() is None
    finally:
        s.close()


def test_reader_stops_when_nobody_listens_and_restarts(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "IDLE_STOP", 0.1)
    s = store_factory()
    assert isinstance(s, SqliteStore)
    try:
        sub = s.changes()
        assert sub is not None
        await_change(sub, "the opening reset", is_reset)
        reader = changes.change_log_reader(s)
        sub.close()
        deadline = time.monotonic() + 5
        while reader.running and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not reader.running, "the reader thread kept polling with no subscriber"

        # A later subscriber opens with a reset from a fresh thread, then gets hints.
        again = s.changes()
        assert again is not None
        assert reader.running
        await_change(again, "the opening reset", is_reset)
        id = enqueue_due(s, unique("idle_restart"))
        await_change(again, "the hint after the restart", lambda c: c.id == id)
        again.close()
    finally:
        s.close()
