"""Change hints (``driver.ChangeNotifier``) and wakes on SQLite, read from the change log.

Triggers (``migrations/0002_change_log.sql``) append one row per changed job, DAG
header or ledger event to ``qctl_changes``, in the writer's transaction, whichever
process wrote. One reader thread per store polls the log by position (every 50 ms, one
primary-key range scan) and feeds two hubs: change hints (``changes()``) and wakes for
job rows that became pending (``wake()``, see ``wake.py``). The thread starts with the
first subscription of either stream and stops once neither has had a subscriber for
``IDLE_STOP`` seconds (a console closing its views, a worker gone), so an idle store
costs no polling; the next subscription starts a fresh thread.

Reset rules, as azync's PostgreSQL listener: the first read pins the position and
resets every subscriber ("live"); whenever the reader cannot prove it missed nothing
(the log was trimmed past its position, or a read failed) it resets everyone again. A
subscriber whose buffer overflows gets a reset before its next delivery (``streams``).

Bulk rule: more than 50 rows of one partition (entity, and source for jobs) written by
one statement become one ``bulk`` hint with their count. Rows of one statement are
contiguous in the log (SQLite has one writer at a time) and share the statement clock
``at_us``, which is how the reader finds them.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterable
from typing import Any

from qctl_kit import errors
from qctl_kit.streams import Hub, Subscription
from qctl_store.config import BULK_HINT_CAP, CHANGE_BUFFER, WAKE_BUFFER
from qctl_store.hints import reset_change
from qctl_store.sqlite.base import SqliteBase, from_us, queries
from qctl_store.types import Change, ChangeEntity, JobState, Source, Wake

Q = queries("changes.sql")

POLL_INTERVAL = 0.02
"""Seconds between two reads of the log, while anyone subscribes: half of it is the
mean delay of a hint (a dashboard's refresh, a worker's wake-up); a read of an idle log
is one indexed lookup of its head."""
READ_BATCH = 10_000
"""Rows per read; a full batch is followed by another read right away."""
IDLE_STOP = 1.0
"""Seconds without any subscriber before the reader thread stops; long enough that a
view closing one subscription and opening the next does not restart it."""


def _row_change(row: Any) -> Change | None:
    """A per-row hint; None for a row whose ids do not parse (dropped, as on PostgreSQL)."""
    try:
        id = uuid.UUID(row["id"])
        dag_id = uuid.UUID(row["dag_id"]) if row["dag_id"] else None
    except ValueError:
        return None
    return Change(
        entity=ChangeEntity(row["entity"]),
        source=Source(row["source"]) if row["source"] else None,
        id=id,
        dag_id=dag_id,
        kind=row["kind"] or "",
        task_key=row["task_key"] or "",
        state=row["state"] or "",
        at=from_us(row["at_us"]),
    )


def _partition(row: Any) -> tuple[str, str | None]:
    return row["entity"], row["source"] if row["entity"] == ChangeEntity.JOB else None


def coalesce(rows: list[Any]) -> list[Change]:
    """Hints for a run of log rows, in log order, with the bulk rule applied."""
    out: list[Change] = []
    start = 0
    while start < len(rows):
        end = start
        marker = (rows[start]["at_us"], rows[start]["entity"])
        while end < len(rows) and (rows[end]["at_us"], rows[end]["entity"]) == marker:
            end += 1
        counts: dict[tuple[str, str | None], int] = {}
        for row in rows[start:end]:
            key = _partition(row)
            counts[key] = counts.get(key, 0) + 1
        announced: set[tuple[str, str | None]] = set()
        for row in rows[start:end]:
            key = _partition(row)
            if counts[key] <= BULK_HINT_CAP:
                change = _row_change(row)
                if change is not None:
                    out.append(change)
            elif key not in announced:
                announced.add(key)
                entity, source = key
                out.append(
                    Change(
                        entity=ChangeEntity(entity),
                        source=Source(source) if source else None,
                        at=from_us(row["at_us"]),
                        bulk=True,
                        count=counts[key],
                    )
                )
        start = end
    return out


def wakes(rows: Iterable[Any]) -> list[Wake]:
    """One wake per distinct (source, kind) of job rows that became pending."""
    seen: dict[tuple[str, str], None] = {}
    for row in rows:
        if row["entity"] == ChangeEntity.JOB and row["state"] == JobState.PENDING:
            seen.setdefault((row["source"], row["kind"]), None)
    return [Wake(source=Source(s), kind=k) for s, k in seen]


def _trailing_run_start(rows: list[Any]) -> int:
    """Index where the last statement's run of rows begins."""
    i = len(rows) - 1
    marker = (rows[i]["at_us"], rows[i]["entity"])
    while i > 0 and (rows[i - 1]["at_us"], rows[i - 1]["entity"]) == marker:
        i -= 1
    return i


class ChangeLogReader:
    """The one thread per store that reads ``qctl_changes`` and feeds both hubs."""

    def __init__(self, store: SqliteBase) -> None:
        self._store = store
        self.changes: Hub[Change] = Hub(CHANGE_BUFFER, reset=reset_change)
        self.wakes: Hub[Wake] = Hub(WAKE_BUFFER)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._position: int | None = None
        self.closed = False

    def subscribe_changes(self) -> Subscription[Change]:
        sub = self.changes.subscribe()
        self._ensure_running()
        return sub

    def subscribe_wakes(self) -> Subscription[Wake]:
        sub = self.wakes.subscribe()
        self._ensure_running()
        return sub

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None

    def _ensure_running(self) -> None:
        with self._lock:
            if self._thread is not None or self.closed:
                return
            self._thread = threading.Thread(
                target=self._run, name="qctl-sqlite-changes", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            thread = self._thread
        self._stop.set()
        if thread is not None:
            thread.join(timeout=5)
        self.changes.close()
        self.wakes.close()

    def _idle(self) -> bool:
        return self.changes.subscriber_count == 0 and self.wakes.subscriber_count == 0

    def _retire(self) -> bool:
        """Stop this thread if still nobody listens. The position is dropped and the hub
        marked not live, so the next thread pins a fresh position and opens with a
        reset, exactly like the first one."""
        with self._lock:
            if not self._idle():
                return False
            self._thread = None
            self._position = None
            self.changes.set_live(False)
            return True

    def _run(self) -> None:
        idle_since: float | None = None
        while not self._stop.is_set():
            if not self._idle():
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= IDLE_STOP and self._retire():
                return
            try:
                more = self.poll()
            except Exception as exc:  # a failed read proves nothing: reset on recovery
                self._store.config.logger.warning("change log read failed: %s", exc)
                self._position = None
                more = False
            if not more:
                self._stop.wait(POLL_INTERVAL)

    def poll(self) -> bool:
        """Read once; True when a full batch was read (more may be waiting)."""
        with self._store.read() as t:
            head = t.one(Q.log_head)
            top = int(head["seq"]) if head else 0
            if self._position is None:
                self._position = top
                self.changes.set_live()
                return False
            rows = t.all(Q.read_after, {"after": self._position, "limit": READ_BATCH})
        if not rows:
            if top > self._position:  # everything after our position was trimmed
                self._position = top
                self.changes.set_live()
            return False
        if rows[0]["seq"] != self._position + 1:
            self.changes.set_live()  # rows we never read were trimmed
        full = len(rows) == READ_BATCH
        if full:
            # The last statement may continue past this batch: read it whole next time,
            # unless it fills the batch on its own (it is bulk either way).
            cut = _trailing_run_start(rows)
            if cut > 0:
                rows = rows[:cut]
        self._position = int(rows[-1]["seq"])
        for change in coalesce(rows):
            self.changes.publish(change)
        for wake in wakes(rows):
            self.wakes.publish(wake)
        return full


_readers_lock = threading.Lock()


def pushes(store: SqliteBase) -> bool:
    """Whether the store can push hints: not when poll-only, nor for ``:memory:``,
    where every thread's connection (the reader's too) is a database of its own."""
    return not store.config.poll_only and store.path != ":memory:"


def change_log_reader(store: SqliteBase) -> ChangeLogReader:
    """The store's reader, created on first use (shared by ``changes()`` and ``wake()``)."""
    with _readers_lock:
        reader: ChangeLogReader | None = getattr(store, "_change_log_reader", None)
        if reader is None:
            if store._closed:
                raise errors.Unavailable("listener is closed")
            with store.read() as t:
                if t.one(Q.log_exists) is None:
                    raise errors.SchemaNotMigrated(
                        f"{store.path} has no change log; run `qctl db migrate`"
                    )
            reader = ChangeLogReader(store)
            store._change_log_reader = reader  # type: ignore[attr-defined]
        if reader.closed:
            raise errors.Unavailable("listener is closed")
        return reader


class ChangesMixin(SqliteBase):
    def changes(self) -> Subscription[Change] | None:
        if not pushes(self):
            return None
        return change_log_reader(self).subscribe_changes()

    def _change_push(self) -> bool:
        return pushes(self)

    def _close_listeners(self) -> None:
        with _readers_lock:
            reader: ChangeLogReader | None = getattr(self, "_change_log_reader", None)
        if reader is not None:
            reader.close()
        super()._close_listeners()
