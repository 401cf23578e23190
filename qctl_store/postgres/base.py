"""Connections, transactions, error mapping and wake notifies for the PostgreSQL backend.

Every capability module (jobs, events, admin, maintenance, dags, workflows, changes,
leader, migrate) is a mixin over ``PgBase``: it runs its SQL through ``tx()`` (one
transaction on a pooled connection) or ``read()`` and never touches psycopg's error
classes itself, because ``mapped_errors`` translates them into qctl_store's.
"""

from __future__ import annotations

import contextlib
import random
import re
import select
import threading
import time
import weakref
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import errors as pgerr
from psycopg.adapt import AdaptersMap
from psycopg.rows import dict_row

from qctl_store import decode, errors, validate
from qctl_store.backend import StoreBase
from qctl_store.config import Config
from qctl_store.dsn import (
    connect_timeout,
    own_options,
    postgres_params,
    redact,
    session_options,
    timeout_settings,
)
from qctl_store.listing import stats_bump_sql
from qctl_store.postgres.watch import SessionWatch, WatchedConnection, side_connection
from qctl_store.sqlfile import Queries, fill, identifier, load

if TYPE_CHECKING:
    from collections.abc import Callable

    from psycopg_pool import ConnectionPool

Row = dict[str, Any]
Cursor = psycopg.Cursor[Row]
Connection = psycopg.Connection[Row]


def queries(filename: str) -> Queries:
    return load("qctl_store.postgres.queries", filename)


def seconds(value: timedelta, what: str) -> float:
    """A validated non-negative duration as float seconds (for make_interval)."""
    return validate.duration(value, what).total_seconds()


def timeout_error(
    exc: psycopg.Error, statement: timedelta | None = None, lock: timedelta | None = None
) -> errors.Timeout | None:
    """``errors.Timeout`` for a statement PostgreSQL cancelled at the session's
    ``lock_timeout`` (55P03) or ``statement_timeout`` (57014), naming the limit when it is
    known (``statement``, ``lock``: the ones qctl set); None for any other failure (a
    cancel asked by a user or an administrator is no timeout)."""
    if isinstance(exc, pgerr.LockNotAvailable):
        return errors.Timeout("lock_timeout", lock)
    if isinstance(exc, pgerr.QueryCanceled) and "statement timeout" in str(exc):
        return errors.Timeout("statement_timeout", statement)
    return None


@contextlib.contextmanager
def mapped_errors(dsn: str, config: Config | None = None) -> Iterator[None]:
    """Translate psycopg failures into qctl_store errors, never leaking the DSN."""
    try:
        yield
    except (pgerr.LockNotAvailable, pgerr.QueryCanceled) as exc:
        limits = (config.statement_timeout, config.lock_timeout) if config else (None, None)
        raise timeout_error(exc, *limits) or _unavailable(dsn, exc) from None
    except UnicodeEncodeError as exc:
        # A text argument the checks at the API edge do not cover: the driver refused it
        # before the statement reached the database.
        raise validate.not_unicode(exc) from None
    except pgerr.UndefinedTable as exc:
        raise errors.SchemaNotMigrated(
            f"azync tables are missing ({exc.diag.message_primary}); run `qctl db migrate`"
        ) from None
    except pgerr.UniqueViolation as exc:
        raise errors.UniqueViolation(str(exc.diag.message_primary or exc)) from None
    except pgerr.ReadOnlySqlTransaction:
        raise errors.ReadOnly("the store is read-only") from None
    except (pgerr.SerializationFailure, pgerr.DeadlockDetected) as exc:
        raise errors.Conflict(str(exc.diag.message_primary or exc)) from None
    except (psycopg.DataError, pgerr.ProgramLimitExceeded) as exc:
        # A value PostgreSQL cannot hold (a NUL in text or JSON, a number or instant out
        # of range, a too deep document): bad input, and the statement wrote nothing.
        text = _first_line(str(exc.diag.message_primary or exc))
        detail = exc.diag.message_detail
        raise errors.InvalidInput(f"{text} ({_first_line(detail)})" if detail else text) from None
    except pgerr.DiskFull as exc:
        raise errors.StorageFull(
            f"PostgreSQL at {redact(dsn)}: {_first_line(str(exc.diag.message_primary or exc))}"
            "; the statement was rolled back: free space on the server's disk, then run it again"
        ) from None
    except psycopg.OperationalError as exc:
        reason = _first_line(redact(str(exc)))
        bad = _BAD_PARAMETER.search(reason)
        if bad:  # libpq refused a value of the DSN itself
            raise errors.InvalidInput(f"malformed PostgreSQL DSN {redact(dsn)}: {bad[0]}") from None
        raise _unavailable(dsn, exc) from None


SCHEMA_ACCESS = (
    "SELECT has_schema_privilege(oid, 'USAGE') AS usable, current_user AS role"
    " FROM pg_namespace WHERE nspname = %s"
)
"""Whether this session's role may use a schema (no row: there is no such schema)."""


SCHEMAS_HOLDING = (
    "SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE c.relname = %s AND c.relkind IN ('r', 'p') ORDER BY 1"
)
"""The schemas that hold a table of this name (a system's marker table)."""

SCHEMAS_SHOWN = 8


def no_such_schema(schema: str, holders: list[str], system: str) -> str:
    """``schema "X" does not exist``, with the schemas ``holders`` that hold the
    ``system``'s tables, the closest to a typo of ``X`` first, so that a mistyped
    ``--schema`` is not taken for a new one."""
    import difflib

    text = f'schema "{schema}" does not exist'
    if not holders:
        return f"{text} (no schema of this database holds {system}'s tables)"
    close = difflib.get_close_matches(schema, holders, n=3)
    listed = close + [h for h in holders if h not in close]
    more = len(listed) - SCHEMAS_SHOWN
    shown = ", ".join(f'"{h}"' for h in listed[:SCHEMAS_SHOWN]) + (
        f" and {more} more" if more > 0 else ""
    )
    return (
        text
        + (f'; did you mean "{close[0]}"?' if close else ";")
        + f" {system}'s tables are in {shown}"
    )


def usage_refused(schema: str, role: str) -> errors.Unavailable:
    """A schema whose tables this role cannot see: not missing, not unmigrated."""
    return errors.Unavailable(
        f'role "{role}" may not use schema "{schema}" (no USAGE privilege); '
        f'ask for GRANT USAGE ON SCHEMA "{schema}" TO "{role}"'
    )


def _unavailable(dsn: str, exc: psycopg.Error) -> errors.Unavailable:
    reason = _first_line(redact(str(exc)))
    return errors.Unavailable(f"PostgreSQL at {redact(dsn)} is unavailable: {reason}")


# libpq's wording for a DSN parameter it cannot use ("invalid sslmode value: "bogus"",
# "invalid port number: "99999"", a service no service file defines): the DSN is wrong,
# the server was never asked.
_BAD_PARAMETER = re.compile(
    r"invalid [\w ]+ (?:value|number|specification)[^\n]*"
    r'|definition of service "[^"\n]*" not found|service file "[^"\n]*" not found'
)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "connection failed"


ADAPTERS = AdaptersMap(psycopg.adapters)
"""psycopg's adapters with json, jsonb and the timestamps decoded by ``decode`` (any
depth, no integer too long, instants out of ``datetime``'s range kept as text)."""
decode.register_postgres(ADAPTERS)


KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
"""TCP keepalives unless the DSN sets its own: a peer gone without a word (a host down, a
network cut) fails a waiting statement within about 25 s instead of the system's two
hours. A paused server still answers them (its kernel does): ``unanswered_after``."""


def connect_kwargs(dsn: str, config: Config) -> dict[str, Any]:
    """Session settings every connection of a store on ``dsn`` uses, the dedicated
    listener and leader connections included: the schema's search_path, the
    application name, the timeouts configured and, when read-only, a read-only session;
    and ``ADAPTERS``."""
    params = postgres_params(dsn)
    settings = timeout_settings(config.statement_timeout, config.lock_timeout)
    if config.schema:
        settings["search_path"] = config.schema
    if config.read_only:
        settings["default_transaction_read_only"] = "on"
    kw: dict[str, Any] = {
        "application_name": config.application_name,
        "context": ADAPTERS,
        **connect_timeout(params),
        **{k: v for k, v in KEEPALIVES.items() if k not in params},
    }
    options = session_options(own_options(params), settings)
    if options:
        kw["options"] = options  # replaces the DSN's and PGOPTIONS, so it carries those first
    return kw


def open_connection(dsn: str, config: Config) -> Connection:
    """A connection as an unpooled store opens it, for a caller that reads before the
    store exists and then hands it over (``Config.connection``): the console's system
    detection, so that a one-shot command opens one connection, not two."""
    with mapped_errors(dsn, config):
        return WatchedConnection.connect(
            dsn, autocommit=True, row_factory=dict_row, **connect_kwargs(dsn, config)
        )


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
        )
        watched = self._watch.add
        self._provider: ConnectionPool[Connection] | _SingleConnection
        kwargs = {"autocommit": True, "row_factory": dict_row, **self.connect_kwargs()}
        with mapped_errors(dsn, self.config):
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
        """``mapped_errors``, naming a configured schema that does not exist (only
        ``migrate`` creates one) instead of reporting its tables missing."""
        try:
            with mapped_errors(self.dsn, self.config):
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
        with mapped_errors(self.dsn, self.config), self._provider.connection() as conn:
            return [r["schema"] for r in conn.execute(SCHEMAS_HOLDING, ("azync_jobs",))]

    def _schema_access(self) -> tuple[bool, bool, str]:
        """Whether the configured schema exists, whether this session's role may use
        it, and the role's name."""
        with mapped_errors(self.dsn, self.config), self._provider.connection() as conn:
            row = conn.execute(SCHEMA_ACCESS, (self.schema,)).fetchone()
        return (row is not None, bool(row and row["usable"]), row["role"] if row else "")

    # --- connections ----------------------------------------------------------------

    def connect_kwargs(self) -> dict[str, Any]:
        """``connect_kwargs`` of this store's DSN and configuration."""
        return connect_kwargs(self.dsn, self.config)

    def connect(self, **extra: Any) -> Connection:
        """A dedicated connection outside the pool (listeners, leadership locks)."""
        with mapped_errors(self.dsn, self.config):
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
