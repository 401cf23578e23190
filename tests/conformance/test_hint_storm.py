"""A storm of change hints against a deliberately slow consumer, on both backends.

Tens of thousands of per-row hints arrive within seconds. The slow subscriber's buffer
stays bounded (azync's 256), it is owed a reset for what it lost, writers never wait
for it, and a fast subscriber on the same store keeps receiving.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator

from qctl_store.config import CHANGE_BUFFER
from qctl_store.types import Change
from tests.conformance.helpers import (
    PG_INSERT_QUEUE_JOBS,
    SQLITE_INSERT_QUEUE_JOBS,
    AnyStore,
    await_change,
    enqueue_due,
    is_reset,
    unique,
)
from tests.conftest import raw_pg, raw_sqlite

STATEMENTS = 500
ROWS = 40
"""Rows per statement: under the bulk cap of 50, so every row is its own hint."""


@contextlib.contextmanager
def raw_writer(store: AnyStore) -> Iterator[Callable[[str], object]]:
    """Runs one ROWS-row insert statement of a kind, as another session would."""
    if store.backend == "postgres":
        with raw_pg(store.schema) as pg:
            yield lambda kind: pg.execute(PG_INSERT_QUEUE_JOBS, (kind, ROWS))
    else:
        with raw_sqlite(store.path) as lite:  # type: ignore[union-attr]
            yield lambda kind: lite.execute(SQLITE_INSERT_QUEUE_JOBS, (ROWS, kind))


def test_slow_subscriber_is_bounded_and_reset(store: AnyStore) -> None:
    slow, fast = store.changes(), store.changes()
    assert slow is not None and fast is not None
    markers = [uuid.uuid4() for _ in range(30)]
    seen_marker = threading.Event()
    received = 0

    def consume() -> None:
        nonlocal received
        for change in fast:  # ends when the subscription is closed
            received += 1
            if change.id in markers:
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

        # The fast subscriber keeps receiving. A consumer thread competing for the CPU
        # may itself overflow while the backlog drains, and then legitimately gets a
        # reset instead of a marker: write markers until one arrives.
        for marker in markers:
            enqueue_due(store, unique("storm_marker"), id=marker)
            if seen_marker.wait(timeout=1):
                break
        assert seen_marker.is_set(), f"no marker received (writes took {written:.1f}s)"
        assert received > CHANGE_BUFFER

        assert slow.buffered <= CHANGE_BUFFER
        assert slow.dropped > 0, "the slow subscriber lost hints to its full buffer"
        # The slow consumer finally catches up: besides what fit in its buffer, it is
        # told of what it lost by a reset (its opening reset was consumed above), and
        # hints committed later reach it again.
        after = uuid.uuid4()
        resets = 0

        def note(c: Change) -> bool:
            nonlocal resets
            resets += is_reset(c)
            return c.id == after

        while (change := slow.get(timeout=0.5)) is not None:
            note(change)
        enqueue_due(store, unique("storm_after"), id=after)
        await_change(slow, "the hint after the storm", note)
        assert resets >= 1, "an overflowed subscriber gets a reset"
    finally:
        slow.close()
        fast.close()
        consumer.join(timeout=5)
