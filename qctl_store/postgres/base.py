"""Connections, transactions, error mapping and wake notifies for the PostgreSQL backend.

Every capability module (jobs, events, admin, maintenance, dags, workflows, changes,
leader, migrate) is a mixin over ``PgBase``: it runs its SQL through ``tx()`` (one
transaction on a pooled connection) or ``read()`` and never touches psycopg's error
classes itself, because ``azync_errors`` translates them into the toolkit's.
"""

from __future__ import annotations

import contextlib
import random
import select
import threading
import time
import weakref
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.rows import dict_row

from qctl_kit import errors
from qctl_kit.dsn import redact
from qctl_kit.postgres.connect import (
    SCHEMA_ACCESS,
    SCHEMAS_HOLDING,
    Connection,
    Cursor,
    connect_kwargs,
    mapped_errors,
    no_such_schema,
    usage_refused,
)
from qctl_kit.postgres.watch import SessionWatch, WatchedConnection, side_connection
from qctl_kit.sqlfile import Queries, fill, identifier, load
from qctl_kit.values import duration
from qctl_store.backend import StoreBase
from qctl_store.columns import AZYNC_SQL
from qctl_store.config import Config
from qctl_store.listing import stats_bump_sql

if TYPE_CHECKING:
    from collections.abc import Callable

    from psycopg_pool import ConnectionPool


def queries(filename: str) -> Queries:
    return load("qctl_store.postgres.queries", filename, AZYNC_SQL)


def seconds(value: timedelta, what: str) -> float:
    """A validated non-negative duration as float seconds (for make_interval)."""
    return duration(value, what).total_seconds()


def azync_errors(dsn: str, config: Config | None = None) -> contextlib.AbstractContextManager[None]:
    """``mapped_errors`` naming azync's tables when one is missing."""
    return mapped_errors(dsn, config, tables="azync")


class _SingleConnection:
    """One lazily (re)opened connection, for one-shot commands that should not pay for
    a pool (and its import). Serialised by a lock so threads can still share it."""

    def __init__(
        self,
        conninfo: str,
        kwargs: dict[str, Any],
        conn: Connection | None = None,
        configure: Callable[[Connection], None] | None = None,
    ) -> None:
        self._conninfo = conninfo
        self._kwargs = kwargs
        self._conn = conn
        self._configure = configure
        self._lock = threading.Lock()
        if conn is not None and configure is not None:
            configure(conn)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection]:
        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._conn = WatchedConnection.connect(self._conninfo, **self._kwargs)
                if self._configure is not None:
                    self._configure(self._conn)
            yield self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


CHECK_BYPASS = 1.0
"""Seconds after a pooled connection's last checkout within which the next one skips the
liveness round trip (HikariCP's aliveBypassWindow): it is a tenth of a single enqueue."""


class _LivenessCheck:
    """The pool's ``check``: ``ConnectionPool.check_connection`` (an empty query, one round
    trip) for a connection idle up to ``CHECK_BYPASS`` seconds only when its socket is
    readable. An idle connection is sent nothing unasked, except when the server ends the
    session (a terminated backend, a shutdown, an idle timeout): it sends a FATAL message
    and closes, so that connection still gets the round trip, fails it and is replaced.
    The time is taken at checkout, so it never understates how long a connection idled."""

    def __init__(self, check: Callable[[Connection], None]) -> None:
        self._check = check
        self._checked_out: weakref.WeakKeyDictionary[Connection, float] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self, conn: Connection) -> None:
        now = time.monotonic()
        last = self._checked_out.get(conn)
        if last is None or now - last > CHECK_BYPASS or _readable(conn):
            self._check(conn)
        self._checked_out[conn] = now


def _readable(conn: Connection) -> bool:
    """Whether the server sent something unasked; True when the socket cannot be polled
    (closed, or a descriptor too high for select), so that the full check decides."""
    try:
        return bool(select.select([conn.fileno()], [], [], 0)[0])
    except (OSError, ValueError, psycopg.Error):
        return True


class PgBase(StoreBase):
    backend = "postgres"

    def __init__(self, dsn: str, config: Config | None = None) -> None:
        self.dsn = dsn
        self.config = config or Config()
        self.schema = self.config.schema
        if self.schema != self.schema.lower():
            # azync's Migrate creates the quoted name while the search_path it sets is
            # folded to lower case, so such a schema never works for a Go deployment.
            raise errors.InvalidInput(
                f"schema {self.schema!r} has upper-case letters: PostgreSQL reads it as "
                f"{self.schema.lower()!r} in a search_path; use {self.schema.lower()!r}"
            )
        self._closed = False
        self._interrupted = False
        unanswered = self.config.unanswered_after
        self._watch = SessionWatch(
            self._side_connection,
            self.config.on_lock_wait,
            unanswered.total_seconds() if unanswered else None,
            self.config.lock_timeout.total_seconds() if self.config.lock_timeout else None,
        )
        watched = self._watch.add
        self._provider: ConnectionPool[Connection] | _SingleConnection
        kwargs = {"autocommit": True, "row_factory": dict_row, **self.connect_kwargs()}
        with azync_errors(dsn, self.config):
            if self.config.pooled:
                from psycopg_pool import ConnectionPool

                self._provider = ConnectionPool(
                    dsn,
                    kwargs=kwargs,
                    min_size=1,
                    max_size=max(1, self.config.pool_max_size),
                    open=False,
                    check=_LivenessCheck(ConnectionPool.check_connection),
                    name="qctl",
                    connection_class=WatchedConnection,
                    configure=watched,
                )
                try:
                    self._provider.open(wait=True, timeout=5.0)
                except Exception as exc:  # PoolTimeout: report it as unreachable
                    self._provider.close()
                    raise errors.Unavailable(
                        f"PostgreSQL at {redact(dsn)} is unavailable: {type(exc).__name__}"
                    ) from None
            else:
                # Connecting is the check: a fresh connection needs no SELECT 1.
                self._provider = _SingleConnection(dsn, kwargs, self.config.connection, watched)
                with self._provider.connection():
                    pass

    @contextlib.contextmanager
    def _mapped(self) -> Iterator[None]:
        """``azync_errors``, naming a configured schema that does not exist (only
        ``migrate`` creates one) instead of reporting its tables missing."""
        try:
            with azync_errors(self.dsn, self.config):
                yield
        except errors.SchemaNotMigrated:
            exists, usable, role = self._schema_access() if self.schema else (True, True, "")
            if not exists:
                raise errors.SchemaNotMigrated(
                    no_such_schema(self.schema, self._holders(), "azync")
                    + "; if it is a new one, `qctl db migrate` creates it"
                ) from None
            if not usable:  # its tables are invisible to this role, not missing
                raise usage_refused(self.schema, role) from None
            raise

    def _holders(self) -> list[str]:
        """The schemas that hold azync's job table."""
        with azync_errors(self.dsn, self.config), self._provider.connection() as conn:
            return [r["schema"] for r in conn.execute(SCHEMAS_HOLDING, ("azync_jobs",))]

    def _schema_access(self) -> tuple[bool, bool, str]:
        """Whether the configured schema exists, whether this session's role may use
        it, and the role's name."""
        with azync_errors(self.dsn, self.config), self._provider.connection() as conn:
            row = conn.execute(SCHEMA_ACCESS, (self.schema,)).fetchone()
        return (row is not None, bool(row and row["usable"]), row["role"] if row else "")

    # --- connections ----------------------------------------------------------------

    def connect_kwargs(self) -> dict[str, Any]:
        """``connect_kwargs`` of this store's DSN and configuration."""
        return connect_kwargs(self.dsn, self.config)

    def connect(self, **extra: Any) -> Connection:
        """A dedicated connection outside the pool (listeners, leadership locks)."""
        with azync_errors(self.dsn, self.config):
            conn = WatchedConnection.connect(
                self.dsn,
                autocommit=True,
                row_factory=dict_row,
                **{**self.connect_kwargs(), **extra},
            )
        self._watch.add(conn)
        return conn

    @contextlib.contextmanager
    def tx(self) -> Iterator[Cursor]:
        """A cursor inside one transaction; commits on success, rolls back on error."""
        self._check_writable()
        with (
            self._mapped(),
            self._provider.connection() as conn,
            self._answered(conn),
            conn.transaction(),
            conn.cursor() as cur,
        ):
            yield cur

    @contextlib.contextmanager
    def write(self) -> Iterator[Cursor]:
        """A cursor for a write of exactly one statement, sent without BEGIN/COMMIT: the
        connections are in autocommit, so the statement is its own transaction and the
        call saves two round trips over ``tx()``. Several statements need ``tx()``."""
        self._check_writable()
        with (
            self._mapped(),
            self._provider.connection() as conn,
            self._answered(conn),
            conn.cursor() as cur,
        ):
            yield cur

    def qualified(self, sql: str, **fragments: str) -> str:
        """``sql`` with its ``{schema}.`` table prefixes naming this store's schema
        (dropped when none is configured), for statements that also run on a caller's
        connection, whose search_path is the caller's own; any other fragment tokens
        filled from ``fragments`` (see ``fill``)."""
        return fill(sql, schema=identifier(self.schema) if self.schema else "", **fragments)

    @contextlib.contextmanager
    def read(self) -> Iterator[Cursor]:
        """A cursor for reads (autocommit: each statement is its own snapshot)."""
        with (
            self._mapped(),
            self._provider.connection() as conn,
            self._answered(conn),
            conn.cursor() as cur,
        ):
            yield cur

    def _answered(self, conn: Connection) -> contextlib.AbstractContextManager[None]:
        """A failure of ``conn`` the session watch caused is ``errors.NoAnswer``; after
        ``interrupt`` nothing more is sent."""
        if self._interrupted:
            raise errors.Unavailable("the store was interrupted: nothing more is sent")
        return self._watch.answered(conn)  # type: ignore[arg-type]

    def interrupt(self) -> None:
        """From another thread: cancel the statements in flight on the server (giving
        their connections up when the server cannot confirm within a second) and send
        no more; for a front-end that quits while its worker threads wait on the
        database. ``close`` still follows."""
        self._interrupted = True
        self._watch.interrupt()

    def _side_connection(self) -> Connection:
        """The session watch's own connection: short limits, never read-only-sensitive."""
        return side_connection(self.dsn, self.config.application_name)

    def _check_writable(self) -> None:
        if self.config.read_only:
            raise errors.ReadOnly("the store is read-only; the write was refused")

    # --- wakes (pg_notify as in azync's driver/azyncpgx/store_jobs.go) --------------

    def notify_in_tx(self, cur: Cursor, source: str, kinds: list[str] | set[str]) -> None:
        """pg_notify inside the caller's transaction: delivered on commit."""
        for kind in sorted(set(kinds)):
            cur.execute("SELECT pg_notify(%s, %s)", (self.config.channel, f"{source}:{kind}"))

    def notify_after_commit(self, source: str, kinds: list[str] | set[str]) -> None:
        """Best-effort wake after a commit; a failure is logged, never raised."""
        if not kinds:
            return
        try:
            with self._provider.connection() as conn:
                for kind in sorted(set(kinds)):
                    conn.execute(
                        "SELECT pg_notify(%s, %s)", (self.config.channel, f"{source}:{kind}")
                    )
        except Exception as exc:
            self.config.logger.warning("wake notify failed: %s", redact(str(exc)))

    # --- daily stats, sharded over slots (driver/azyncpgx/azyncpgx.go) ---------------

    def random_slot(self) -> int:
        """The random stats shard a fused statement bumps."""
        return random.randrange(self.config.stats_slots)

    def bump_stat(self, cur: Cursor, source: str, kind: str, column: str, n: int = 1) -> None:
        """Add ``n`` to today's ``column`` counter of (source, kind) on a random slot; the
        day is the session's CURRENT_DATE, as azync's."""
        if n > 0:
            args = {"source": source, "kind": kind, "slot": self.random_slot(), "n": n}
            cur.execute(stats_bump_sql("%({})s", "CURRENT_DATE", column), args)

    # --- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_listeners()
        self._watch.close()
        self._provider.close()

    def _close_listeners(self) -> None:
        """Overridden by the listener mixins to stop their threads."""
