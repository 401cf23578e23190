"""A storm of change hints against a deliberately slow consumer, on both backends.

Tens of thousands of per-row hints arrive within seconds. The slow subscriber's buffer
stays bounded (azync's 256), it is owed a reset for what it lost, writers never wait
for it, and a fast subscriber on the same store keeps receiving.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import psycopg

from qctl_store.config import CHANGE_BUFFER
from qctl_store.types import ChangeEntity
from tests.conformance.helpers import AnyStore, enqueue_due, unique
from tests.conformance.test_changes import await_change, is_reset
from tests.conftest import PG_DSN

STATEMENTS = 500
ROWS = 40
"""Rows per statement: under the bulk cap of 50, so every row is its own hint."""

PG_INSERT = """
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload, enqueued_at)
    SELECT gen_random_uuid(), 'queue', %s, 'pending', now(), 1, '{}'::jsonb, now()
    FROM generate_series(1, %s)
"""
SQLITE_INSERT = """
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload,
                            enqueued_at, created_at, updated_at)
    SELECT lower(
               hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
               substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) ||
               '-' || hex(randomblob(6))),
           'queue', ?, 'pending', 0, 1, '{}', 0, 0, 0
    FROM n
"""


@contextlib.contextmanager
def raw_writer(store: AnyStore) -> Iterator[Callable[[str], object]]:
    """Runs one ROWS-row insert statement of a kind, as another session would."""
    if store.backend == "postgres":
        with psycopg.connect(
            PG_DSN, autocommit=True, options=f"-c search_path={store.schema}"
        ) as pg:
            yield lambda kind: pg.execute(PG_INSERT, (kind, ROWS))
    else:
        lite = sqlite3.connect(store.path, isolation_level=None, timeout=30)  # type: ignore[union-attr]
        try:
            yield lambda kind: lite.execute(SQLITE_INSERT, (ROWS, kind))
        finally:
            lite.close()


def test_slow_subscriber_is_bounded_and_reset(store: AnyStore) -> None:
    slow, fast = store.changes(), store.changes()
    assert slow is not None and fast is not None
    marker = uuid.uuid4()
    seen_marker = threading.Event()
    received = 0

    def consume() -> None:
        nonlocal received
        for change in fast:  # ends when the subscription is closed
            received += 1
            if change.id == marker:
                seen_marker.set()

    consumer = threading.Thread(target=consume, daemon=True)
    try:
        await_change(slow, "the opening reset", is_reset)
        consumer.start()
        kind = unique("storm")
        peak = 0
        started = time.monotonic()
        with raw_writer(store) as write:
            for _ in range(STATEMENTS):
                write(kind)  # never waits for the subscribers
                peak = max(peak, slow.buffered)
        written = time.monotonic() - started
        assert peak <= CHANGE_BUFFER

        # The fast subscriber keeps receiving: a marker written after the storm arrives
        # once the listener has worked through the backlog.
        enqueue_due(store, unique("storm_marker"), id=marker)
        assert seen_marker.wait(timeout=30), f"marker not received (writes took {written:.1f}s)"
        assert received > CHANGE_BUFFER

        assert slow.buffered <= CHANGE_BUFFER
        assert slow.dropped > 0, "the slow subscriber lost hints to its full buffer"
        while slow.get(timeout=0) is not None:  # the consumer finally catches up
            pass
        after = enqueue_due(store, unique("storm_after"))
        first = slow.get(timeout=5)
        assert first is not None and first.entity == ChangeEntity.RESET, (
            "the next delivery after an overflow is a reset"
        )
        await_change(slow, "the hint after the reset", lambda c: c.id == after)
    finally:
        slow.close()
        fast.close()
        consumer.join(timeout=5)
