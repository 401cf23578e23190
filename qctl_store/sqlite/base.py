"""Connections, transactions and the clock of the embedded SQLite backend.

Several threads and processes may share one database file. Each thread gets its own
connection (WAL journal, a busy timeout, foreign keys on); every write runs in a
``BEGIN IMMEDIATE`` transaction so writers queue on the database lock instead of
failing on a lock upgrade. The backend clock is the host clock, read once per
transaction after the write lock is held, so transaction times are ordered like the
commits. Instants are stored as INTEGER microseconds since the Unix epoch (UTC), ids as
canonical lower-case UUID text, JSON as text.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl_store import errors
from qctl_store.config import Config
from qctl_store.sqlfile import Queries, load

BUSY_TIMEOUT_MS = 30_000
US = 1_000_000


def queries(filename: str) -> Queries:
    return load("qctl_store.sqlite.queries", filename)


def now_us() -> int:
    return time.time_ns() // 1000


def to_us(value: datetime | None) -> int | None:
    if value is None:
        return None
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * US + delta.microseconds


def from_us(value: int | None) -> datetime | None:
    if value is None:
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=value)


def td_us(value: timedelta) -> int:
    return (value.days * 86_400 + value.seconds) * US + value.microseconds


def uid(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def parse_uuid(value: str | None) -> uuid.UUID | None:
    return None if value is None else uuid.UUID(value)


def utc_day(us: int) -> str:
    """The UTC calendar day (``YYYY-MM-DD``) of an instant, for the daily stats."""
    return time.strftime("%Y-%m-%d", time.gmtime(us // US))


@contextlib.contextmanager
def mapped_errors() -> Iterator[None]:
    try:
        yield
    except sqlite3.OperationalError as exc:
        msg = str(exc)
        if msg.startswith("no such table"):
            raise errors.SchemaNotMigrated(
                f"azync tables are missing ({msg}); run `qctl db migrate`"
            ) from None
        if "readonly" in msg or "read-only" in msg or "query_only" in msg:
            raise errors.ReadOnly("the store is read-only") from None
        if "locked" in msg or "busy" in msg:
            raise errors.Conflict(f"SQLite: {msg}") from None
        raise errors.Unavailable(f"SQLite: {msg}") from None
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.IntegrityError):
            raise
        raise errors.Unavailable(f"SQLite: {exc}") from None


class Tx:
    """One write transaction: its cursor, its clock and its after-commit hooks."""

    def __init__(self, conn: sqlite3.Connection, now: int) -> None:
        self.conn = conn
        self.now = now
        self._after: list[Callable[[], None]] = []

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> sqlite3.Cursor:
        return self.conn.executemany(sql, rows)

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        return list(self.conn.execute(sql, params).fetchall())

    def after_commit(self, fn: Callable[[], None]) -> None:
        self._after.append(fn)


class SqliteBase:
    backend = "sqlite"

    def __init__(self, path: str, config: Config | None = None) -> None:
        self.path = path
        self.config = config or Config()
        self.schema = ""
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._closed = False
        if path != ":memory:" and not path.startswith("file:"):
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise errors.Unavailable(f"SQLite: directory {parent} does not exist")
        self._conn()  # fail fast on an unopenable file

    # --- connections ----------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise errors.Unavailable("SQLite: the store is closed")
        with mapped_errors():
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
                uri=self.path.startswith("file:"),
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
            if self.config.read_only:
                conn.execute("PRAGMA query_only = ON")
        self._local.conn = conn
        with self._conns_lock:
            self._conns.append(conn)
        return conn

    @contextlib.contextmanager
    def tx(self) -> Iterator[Tx]:
        """A write transaction (BEGIN IMMEDIATE); commits on success, else rolls back.
        After-commit hooks run once the commit succeeded."""
        if self.config.read_only:
            raise errors.ReadOnly("the store is read-only; the write was refused")
        conn = self._conn()
        with mapped_errors():
            conn.execute("BEGIN IMMEDIATE")
            t = Tx(conn, now_us())
            try:
                yield t
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        for fn in t._after:
            try:
                fn()
            except Exception as exc:  # best effort, like azync's post-commit notify
                self.config.logger.warning("after-commit hook failed: %s", exc)

    @contextlib.contextmanager
    def read(self) -> Iterator[Tx]:
        """A read transaction: one consistent snapshot for several statements."""
        conn = self._conn()
        with mapped_errors():
            conn.execute("BEGIN")
            try:
                yield Tx(conn, now_us())
            finally:
                conn.execute("COMMIT")

    def random_slot(self) -> int:
        return random.randrange(self.config.stats_slots)

    def bump_stat(self, t: Tx, source: str, kind: str, column: str, n: int = 1) -> None:
        """Add ``n`` to today's (UTC) ``column`` counter of (source, kind)."""
        if n <= 0:
            return
        assert column in ("enqueued", "processed", "failed", "reaped")
        t.execute(
            f"INSERT INTO azync_stats_daily (source, kind, day, slot, {column}) "
            f"VALUES (?, ?, ?, ?, ?) ON CONFLICT (source, kind, day, slot) DO UPDATE "
            f"SET {column} = {column} + excluded.{column}",
            (source, kind, utc_day(t.now), self.random_slot(), n),
        )

    # --- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_listeners()
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _close_listeners(self) -> None:
        """Overridden by the listener mixins to stop their threads."""
