"""Connections, transactions and the clock of the embedded SQLite backend.

Several threads and processes may share one database file. Each thread gets its own
connection (WAL journal, a busy timeout, foreign keys on); every write runs in a
``BEGIN IMMEDIATE`` transaction so writers queue on the database lock instead of
failing on a lock upgrade. The backend clock is the host clock, read once per
transaction after the write lock is held, so transaction times are ordered like the
commits. Instants are stored as INTEGER microseconds since the Unix epoch (UTC), ids as
canonical lower-case UUID text, JSON as text.

Writer fairness: SQLite's busy handler sleeps with growing back-off (up to 100ms) and
hands the lock to whoever asks first once it is free, so a process committing in a
tight loop re-takes the lock before a sleeping waiter wakes and can starve it for as
long as it keeps writing. Writers of this package therefore pass a turnstile first: an
``flock`` on a side file (``<db>-qctl-lock``) that a writer holds only while it waits
for the database lock, polling for it every few hundred microseconds. A writer that just
committed finds the turnstile held by the waiter and queues behind it, so the lock
alternates between contending writers. The turnstile is only a fairness aid: where
it cannot be used (no side file, in-memory database, no ``fcntl``) or is held past the
busy timeout, writers fall back to SQLite's own busy handler.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl_kit import decode, errors
from qctl_kit.sqlfile import Queries, load
from qctl_kit.sqlite.connect import full_or_unavailable, read_only_uri, unwritable
from qctl_store import jsonb
from qctl_store.backend import StoreBase
from qctl_store.columns import AZYNC_SQL
from qctl_store.config import Config
from qctl_store.listing import stats_bump_sql

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

BUSY_TIMEOUT_MS = 30_000
TURNSTILE_SUFFIX = "-qctl-lock"
"""The turnstile's side file is the database path plus this (like SQLite's -wal/-shm)."""
TURNSTILE_POLL_S = 0.0002
"""How often the writer holding the turnstile retries the database lock: short, so the
lock is not left idle for long after its holder commits."""
CACHE_KIB = 256
"""Each connection's page cache (``PRAGMA cache_size``), a bound instead of SQLite's
2 MiB: the store opens one connection per thread (a dashboard with a live workload
holds a dozen), and each default cache fills as the file grows, so the process grew
by up to 2 MiB a thread for as long as its database did. In WAL mode a connection
drops its cache whenever another one has committed since its last transaction, so a
larger one mostly held pages already stale; the OS page cache keeps the file anyway."""
US = 1_000_000
JSONB_CONTAINS = "qctl_jsonb_contains"
"""The SQL function every connection registers for PostgreSQL's jsonb ``@>``."""


def queries(filename: str) -> Queries:
    return load("qctl_store.sqlite.queries", filename, AZYNC_SQL)


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
    except UnicodeEncodeError as exc:
        # A text argument the checks at the API edge do not cover: the driver refused it
        # before the statement reached the database.
        raise errors.not_unicode(exc) from None
    except sqlite3.OperationalError as exc:
        msg = str(exc)
        if msg.startswith("no such table"):
            raise errors.SchemaNotMigrated(
                f"azync tables are missing ({msg}); run `qctl db migrate`"
            ) from None
        if "readonly" in msg or "read-only" in msg or "query_only" in msg:
            raise errors.ReadOnly("the store is read-only") from None
        if _is_busy(exc):
            raise errors.Conflict(f"SQLite: {msg}") from None
        raise full_or_unavailable(exc, "SQLite") from None
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.IntegrityError):
            if str(exc).startswith("UNIQUE constraint failed"):
                raise errors.UniqueViolation(f"SQLite: {exc}") from None
            raise
        raise errors.Unavailable(f"SQLite: {exc}") from None


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY/SQLITE_LOCKED: another connection holds the lock."""
    msg = str(exc)
    return "locked" in msg or "busy" in msg


def _while_busy(
    conn: sqlite3.Connection, sql: str, deadline: float, pauses: Iterator[float]
) -> None:
    """Run ``sql``, again after each of ``pauses`` (seconds) while another connection holds
    the lock, until ``deadline``; then the busy error stands."""
    for pause in pauses:
        try:
            conn.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)


def _backoff() -> Iterator[float]:
    """Random pauses whose bound doubles from 1 ms to 100 ms."""
    bound = 0.001
    while True:
        yield random.uniform(0, bound)
        bound = min(bound * 2, 0.1)


def _switch_to_wal(conn: sqlite3.Connection, deadline: float) -> None:
    """Put the file in WAL mode (a no-op once it is). The switch needs the file to itself,
    and SQLite answers SQLITE_BUSY at once, without its busy handler, where waiting for
    another connection could deadlock: several processes opening one new file at the same
    instant (two cron jobs' first use of the embedded database) met that. The switch is
    retried here, with back-off, until the busy timeout."""
    _while_busy(conn, "PRAGMA journal_mode = WAL", deadline, _backoff())


def _flock(fd: int, deadline: float) -> bool:
    """Take the turnstile, polling (a blocking flock could not time out); False once
    the deadline passed."""
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
        except OSError:
            return False
        time.sleep(random.uniform(0, delay))
        delay = min(delay * 2, 0.005)


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is still open; SQLite may already have rolled back on an error,
    and a failing rollback must not hide the error that caused it."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


class Tx:
    """One write transaction: its cursor, its clock and its after-commit hooks."""

    def __init__(self, conn: sqlite3.Connection, now: int) -> None:
        self.conn = conn
        self.now = now
        self._after: list[Callable[[], None]] = []

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def executemany(
        self, sql: str, rows: Iterable[Sequence[Any] | Mapping[str, Any]]
    ) -> sqlite3.Cursor:
        return self.conn.executemany(sql, rows)

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        return list(self.conn.execute(sql, params).fetchall())

    def after_commit(self, fn: Callable[[], None]) -> None:
        self._after.append(fn)


class SqliteBase(StoreBase):
    backend = "sqlite"

    def __init__(self, path: str, config: Config | None = None) -> None:
        self.path = path
        self.config = config or Config()
        self.schema = ""
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._gates: list[int] = []
        self._conns_lock = threading.Lock()
        self._closed = False
        self.unwritable = ""
        """Why this process cannot write the file ("": it can): then it is read through
        read-only connections and a write is refused (``ReadOnly``) before it starts."""
        if path != ":memory:" and not path.startswith("file:"):
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise errors.Unavailable(f"SQLite: directory {parent} does not exist")
            if not os.path.exists(path):
                self._create_file()
            elif self.config.create_database and not os.path.isfile(path):
                # A device or a pipe (db migrate on /dev/null): SQLite would write its
                # journal beside it (/dev/null-journal).
                raise errors.InvalidInput(f"SQLite: {path} is not a regular file")
            self.unwritable = unwritable(path)
        self._conn()  # fail fast on an unopenable file

    def _create_file(self) -> None:
        """Create the missing database file, private to its owner (SQLite gives its
        -wal and -shm files the same mode), unless this store may not create it: a
        mistyped path must not silently become a new, empty database."""
        if self.config.read_only or not self.config.create_database:
            raise errors.SchemaNotMigrated(
                f"SQLite database {self.path} does not exist; `qctl db migrate` creates it"
            )
        with contextlib.suppress(FileExistsError):
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))

    # --- connections ----------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise errors.Unavailable("SQLite: the store is closed")
        # Read-only opens the file with mode=ro: it is never created, and its journal
        # mode is left as it is (switching to WAL would write the file).
        read_only = (self.config.read_only or bool(self.unwritable)) and self.path != ":memory:"
        target, uri = self.path, self.path.startswith("file:")
        if read_only and not uri:
            target, uri = read_only_uri(self.path, self.unwritable), True
        with mapped_errors():
            conn = sqlite3.connect(
                target,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
                uri=uri,
            )
            conn.row_factory = sqlite3.Row
            conn.text_factory = decode.SQLITE_TEXT
            conn.create_function(JSONB_CONTAINS, 2, jsonb.contains_text, deterministic=True)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            if self.path != ":memory:" and not read_only:
                _switch_to_wal(conn, time.monotonic() + BUSY_TIMEOUT_MS / 1000)
            if self.config.read_only:
                conn.execute("PRAGMA query_only = ON")
        self._local.conn = conn
        self._local.gate = self._open_gate()
        with self._conns_lock:
            self._conns.append(conn)
            if self._local.gate is not None:
                self._gates.append(self._local.gate)
        return conn

    def _open_gate(self) -> int | None:
        """This thread's descriptor of the turnstile file (flock is per open file, so
        threads of one process queue on it too), or None where there is none."""
        if (
            fcntl is None
            or self.config.read_only
            or self.path == ":memory:"
            or self.path.startswith("file:")
        ):
            return None
        try:
            info = os.stat(self.path)
            if not stat.S_ISREG(info.st_mode):  # /dev/null: no file beside a device
                return None
            mode = info.st_mode & 0o666  # as private as the database
            return os.open(self.path + TURNSTILE_SUFFIX, os.O_RDWR | os.O_CREAT, mode)
        except OSError:
            return None

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        gate: int | None = getattr(self._local, "gate", None)
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        if gate is None or not _flock(gate, deadline):
            conn.execute("BEGIN IMMEDIATE")
            return
        try:
            conn.execute("PRAGMA busy_timeout = 0")  # we poll instead of SQLite's back-off
            try:
                polls = (random.uniform(0, TURNSTILE_POLL_S) for _ in itertools.count())
                _while_busy(conn, "BEGIN IMMEDIATE", deadline, polls)
            finally:
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def tx(self) -> Iterator[Tx]:
        """A write transaction (BEGIN IMMEDIATE); commits on success, else rolls back.
        After-commit hooks run once the commit succeeded."""
        if self.config.read_only:
            raise errors.ReadOnly("the store is read-only; the write was refused")
        if self.unwritable:
            raise errors.ReadOnly(f"SQLite {self.path}: {self.unwritable}; the write was refused")
        conn = self._conn()
        with mapped_errors():
            self._begin_immediate(conn)
            try:
                t = Tx(conn, now_us())
                yield t
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
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
                if conn.in_transaction:  # an error may have ended it already
                    conn.execute("COMMIT")

    def random_slot(self) -> int:
        return random.randrange(self.config.stats_slots)

    def bump_stat(self, t: Tx, source: str, kind: str, column: str, n: int = 1) -> None:
        """Add ``n`` to today's (UTC) ``column`` counter of (source, kind)."""
        if n > 0:
            args = {"source": source, "kind": kind, "slot": self.random_slot(), "n": n}
            t.execute(stats_bump_sql(":{}", ":day", column), {**args, "day": utc_day(t.now)})

    # --- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_listeners()
        with self._conns_lock:
            conns, self._conns = self._conns, []
            gates, self._gates = self._gates, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        for gate in gates:
            with contextlib.suppress(OSError):
                os.close(gate)

    def _close_listeners(self) -> None:
        """Overridden by the listener mixins to stop their threads."""
