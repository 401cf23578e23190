"""A connection to a system's own SQL database, for the systems qctl reads with its own
SQL (DBOS, dispatch, ...) over the toolkit (``qctl_kit``).

After dbos-transact-py's ``SystemDatabase``: one class holds what every system's database
needs (the session qctl opens, read-only and timeouts included; driver errors as qctl's
errors and exit codes; one statement at a time across the dashboard's threads;
placeholders per dialect), and a system's subclass adds its tables' names and its
schema-version gate. PostgreSQL through psycopg, SQLite through sqlite3 where the system
has SQLite databases (``sqlite``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from datetime import timedelta
from typing import Any, ClassVar, NoReturn, Self, TypeVar

from qctl.core.changes import RESET, Hint
from qctl_kit.decode import SQLITE_TEXT
from qctl_kit.dsn import is_postgres, redact, sqlite_path
from qctl_kit.errors import InvalidInput, ReadOnly, SchemaTooNew, Timeout, Unavailable
from qctl_kit.streams import Subscription

Params = Sequence[Any] | dict[str, Any]


def row_record(row: Any) -> dict[str, Any]:
    """A row dataclass as its columns: each field under its column's name (a trailing
    ``_`` dropped: ``await_`` is ``await``), values as they are. Not
    ``dataclasses.asdict``: it deep-copies a JSON value, recursing as deep as it nests."""
    return {f.name.rstrip("_"): getattr(row, f.name) for f in fields(row)}


T = TypeVar("T")

SCHEMA_EXISTS = "SELECT 1 FROM pg_namespace WHERE nspname = %s"

LISTENING = ""
"""``notifications``' channel of its mark that every channel is listened to."""
POLL_SECONDS = 0.25
"""How often ``notifications`` wakes to notice Ctrl-C and its timeout."""
HINT_BUFFER = 256
"""Hints one dashboard may fall behind by; past it, a ``RESET`` (it re-reads anyway)."""
WATCH_BUFFER = 65536
"""Notifications ``watch`` may fall behind by (a pipe that stalls): past it, a gap mark."""


class SqlDatabase:
    """One autocommit connection (``transaction()`` for several statements).

    SQL is written once for both dialects: ``%s`` placeholders (SQLite's ``?`` is put in)
    and ``{t}`` before each table name (the schema, quoted, on PostgreSQL; nothing on
    SQLite). On PostgreSQL the session's ``search_path`` is the schema too."""

    label: ClassVar[str] = "this system's"
    """How messages name the system ("DBOS", "dispatch")."""
    default_schema: ClassVar[str] = ""
    """The PostgreSQL schema when ``--schema`` names none (empty: the session's own)."""
    sqlite: ClassVar[bool] = False
    """Whether the system keeps databases in SQLite files."""
    unsupported: ClassVar[type[SchemaTooNew]] = SchemaTooNew
    """What a missing table or an unknown schema version raises (exit 5)."""
    marker: ClassVar[str] = ""
    """A table every schema of the system holds: a schema that does not exist is named
    with the schemas that hold it."""
    channels: ClassVar[dict[str, str]] = {}
    """The channels the system's own software NOTIFYs on (PostgreSQL), each with the kind
    of row a notice on it says changed: ``changes`` listens to them."""
    partial: ClassVar[bool] = True
    """No system read through this class notifies every change it makes (a job's or a
    workflow's state change is silent): the dashboard polls behind the hints."""

    @classmethod
    def open(
        cls, context: Any, pooled: bool = False, on_lock_wait: Callable[[Any], None] | None = None
    ) -> Self:
        """``System.database``'s opener: the ``CliContext``'s connection of this class
        (``context.database``), one for the invocation; ``pooled`` changes nothing (the
        dashboard's threads share the one connection, a statement at a time)."""
        database: Self = context.database(cls, on_lock_wait=on_lock_wait)
        return database

    def __init__(
        self,
        dsn: str,
        schema: str = "",
        read_only: bool = False,
        statement_timeout: timedelta | None = None,
        lock_timeout: timedelta | None = None,
        on_lock_wait: Callable[[Any], None] | None = None,
        unanswered_after: timedelta | None = None,
    ) -> None:
        """``statement_timeout``/``lock_timeout``: PostgreSQL's session limits, a
        statement past one raises ``Timeout``; ``on_lock_wait`` and ``unanswered_after``:
        the session watch's (``qctl_kit.config.Session``, ``qctl_kit.postgres.watch``)."""
        self.dsn = dsn
        self.read_only = read_only
        self.statement_timeout = statement_timeout
        self.lock_timeout = lock_timeout
        self.postgres = is_postgres(dsn)
        if not self.postgres and not self.sqlite:
            raise InvalidInput(f"a {self.label} database needs --dsn postgresql://...")
        # One connection shared by the dashboard's worker threads, one statement at a time.
        self._lock = threading.RLock()
        self._interrupted = False
        self._watch: Any = None
        self.unwritable = ""
        """Why this process cannot write the SQLite file ("": it can, or PostgreSQL):
        then it is read read-only and a write is refused before it starts."""
        if self.postgres:
            from qctl_kit.config import Session
            from qctl_kit.postgres.watch import SessionWatch, side_connection

            self._config = Session(
                schema=schema or self.default_schema,
                read_only=read_only,  # the session itself refuses writes
                statement_timeout=statement_timeout,
                lock_timeout=lock_timeout,
                unanswered_after=unanswered_after,
            )
            self._conn: Any = self._connect_postgres()
            self._watch = SessionWatch(
                lambda: side_connection(dsn, self._config.application_name),
                on_lock_wait,
                unanswered_after.total_seconds() if unanswered_after else None,
                lock_timeout.total_seconds() if lock_timeout else None,
            )
            self._watch.add(self._conn)
            self._prefix = ""  # the session's own search_path, until the schema is known
            self.schema: str = self._config.schema or self._current_schema()
            self._prefix = f'"{self.schema}".' if self.schema else ""
        else:
            self.schema = self._prefix = ""
            self._conn = self._connect_sqlite()

    # --- the session ----------------------------------------------------------------

    def options(self) -> str:
        """The libpq ``options`` of this session (the DSN's own or PGOPTIONS first), for
        a client library that opens its own connection on the same terms."""
        from qctl_kit.postgres.connect import connect_kwargs

        return str(connect_kwargs(self.dsn, self._config).get("options", ""))

    def _connect_postgres(self) -> Any:
        from qctl_kit.postgres.connect import open_connection

        with self._errors():
            return open_connection(self.dsn, self._config)

    def _current_schema(self) -> str:
        row = self.one("SELECT current_schema() AS s")
        return str(row["s"]) if row and row["s"] else ""

    def _connect_sqlite(self) -> Any:
        import os
        import sqlite3
        from urllib.parse import quote

        from qctl_kit.sqlite.connect import read_only_uri, unwritable

        path = sqlite_path(self.dsn)
        if not os.path.exists(path):
            raise Unavailable(f"no {self.label} database at {path}")
        self.unwritable = unwritable(path)
        read_only = self.read_only or self.unwritable
        with self._errors():
            conn = sqlite3.connect(
                read_only_uri(path, self.unwritable)
                if read_only
                else f"file:{quote(path)}?mode=rw",  # never create a file
                uri=True,
                isolation_level=None,
                timeout=10,
                check_same_thread=False,
            )
        conn.row_factory = sqlite3.Row
        conn.text_factory = SQLITE_TEXT
        return conn

    @property
    def backend(self) -> str:
        """Named as azync's ``db status`` names its backends (``ConsoleStore.backend``)."""
        return "postgres" if self.postgres else "sqlite"

    @property
    def location(self) -> str:
        return redact(self.dsn)

    def invalid_indexes(self) -> list[str]:
        """The schema's invalid indexes (``qctl_kit.postgres.tune.INVALID``); none on
        SQLite, which builds no index concurrently."""
        if not self.postgres:
            return []
        from qctl_kit.postgres.tune import INVALID

        return [str(r["name"]) for r in self.all(INVALID, {"schema": self.schema})]

    # --- errors ---------------------------------------------------------------------

    def missing(self, detail: str) -> SchemaTooNew:
        """A table the system's schema should have is not there."""
        where = f" in schema {self.schema!r}" if self.schema else ""
        return self.unsupported(f"{self.label} table missing{where}: {detail}")

    def _unusable(self) -> Unavailable | None:
        """The GRANT this session's role needs when the schema exists but the role may
        not use it (its tables then look missing, or a qualified name is refused)."""
        from qctl_kit.postgres.connect import SCHEMA_ACCESS, usage_refused

        schema = getattr(self, "schema", "") or self._config.schema
        row = self.one(SCHEMA_ACCESS, (schema,)) if schema else None
        return usage_refused(schema, row["role"]) if row and not row["usable"] else None

    def _no_such_schema(self) -> SchemaTooNew | None:
        """The schema does not exist: named with the ones that hold the system's tables."""
        from qctl_kit.postgres.connect import SCHEMAS_HOLDING, no_such_schema

        schema = getattr(self, "schema", "") or self._config.schema
        if not schema or not self.marker or self.one(SCHEMA_EXISTS, (schema,)):
            return None
        holders = [str(r["schema"]) for r in self.all(SCHEMAS_HOLDING, (self.marker,))]
        return self.unsupported(no_such_schema(schema, holders, self.label))

    def refuse(self, exc: Exception) -> NoReturn:
        """Close the connection and raise ``exc`` (a gate refusing the schema)."""
        self.close()
        raise exc

    def timeout(self, exc: BaseException) -> Timeout | None:
        """``Timeout`` when ``exc`` (or the driver error a client library wrapped in it)
        is a statement PostgreSQL cancelled at a timeout; None otherwise."""
        if not self.postgres:
            return None
        import psycopg

        from qctl_kit.postgres.connect import timeout_error

        cause = getattr(exc, "orig", exc)
        if not isinstance(cause, psycopg.Error):
            return None
        return timeout_error(cause, self.statement_timeout, self.lock_timeout)

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Driver failures as qctl_store errors (exit codes), never with a password."""
        if self.postgres:
            from psycopg import errors as pgerr

            from qctl_kit.postgres.connect import mapped_errors

            with mapped_errors(self.dsn, self._config):
                try:
                    yield
                except pgerr.UndefinedTable as exc:
                    raise (
                        self._unusable()
                        or self._no_such_schema()
                        or self.missing(str(exc.diag.message_primary))
                    ) from None
                except pgerr.InsufficientPrivilege:
                    refused = self._unusable()
                    if refused is None:
                        raise
                    raise refused from None
        else:
            import sqlite3

            from qctl_kit.sqlite.connect import full_or_unavailable

            try:
                yield
            except sqlite3.OperationalError as exc:
                text = str(exc)
                if "readonly" in text:
                    raise ReadOnly("the database is read-only") from None
                if "no such table" in text:
                    raise self.missing(text) from None
                raise full_or_unavailable(exc, f"SQLite at {self.dsn}") from None

    @contextlib.contextmanager
    def _answered(self) -> Iterator[None]:
        """Around a statement: nothing more is sent after ``interrupt``; a failure the
        session watch caused (it gave up a silent server) is ``NoAnswer``."""
        if self._interrupted:
            raise Unavailable(f"the {self.label} database was interrupted: nothing more is sent")
        if self._watch is None:
            yield
            return
        with self._watch.answered(self._conn):
            yield

    def interrupt(self) -> None:
        """From another thread: cancel the statement in flight (a front-end quitting
        while its worker threads wait on the database) and send no more; ``close``
        still follows."""
        self._interrupted = True
        if self._watch is not None:
            self._watch.interrupt()
        else:
            with contextlib.suppress(Exception):
                self._conn.interrupt()  # sqlite3: the running statement stops

    # --- statements -----------------------------------------------------------------

    def sql(self, text: str) -> str:
        """``text`` for this backend: ``{t}`` becomes the schema prefix, ``%s`` SQLite's
        ``?``."""
        text = text.replace("{t}", self._prefix)
        return text if self.postgres else text.replace("%s", "?")

    def all(self, text: str, params: Params = ()) -> list[dict[str, Any]]:
        with self._lock, self._errors(), self._answered():
            cur = self._conn.execute(self.sql(text), params)
            return [dict(row) for row in cur.fetchall()]

    def one(self, text: str, params: Params = ()) -> dict[str, Any] | None:
        rows = self.all(text, params)
        return rows[0] if rows else None

    def execute(self, text: str, params: Params = ()) -> int:
        """One write statement; its row count."""
        self._check_writable()
        with self._lock, self._errors(), self._answered():
            return int(self._conn.execute(self.sql(text), params).rowcount)

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnly("qctl is read-only; the write was refused")
        if self.unwritable:
            raise ReadOnly(f"SQLite {self.dsn}: {self.unwritable}; the write was refused")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        self._check_writable()
        with self._lock, self._errors(), self._answered():
            if self.postgres:
                with self._conn.transaction():
                    yield
            else:
                # IMMEDIATE: take the write lock now, not at the first write, so a
                # read-then-write transaction never fails half-way on a busy file.
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")

    # --- notifications ----------------------------------------------------------------

    @property
    def watch_name(self) -> str:
        """The application_name of the listening connections: this process's."""
        return f"qctl {self.label} watch {os.getpid()}"

    def listened(self) -> dict[str, str]:
        """The channels ``changes`` listens to, each with the kind of row a notice on it
        says changed: ``channels``, unless the system's names depend on the schema."""
        return self.channels

    def hint(self, channel: str, payload: str) -> Hint:
        """What a notice on one of ``listened`` says changed; unless a system reads its
        payload, rows of the channel's kind."""
        return Hint(self.listened()[channel], bulk=True)

    def changes(self) -> Subscription[Hint] | None:
        """Hints from the system's own notices (``hint``), opening with ``RESET`` and
        another after each lost connection came back; None where the system sends none
        (SQLite, no ``listened`` channel): poll."""
        channels = self.listened()
        if not self.postgres or not channels:
            return None
        return self._listen(list(channels), self.hint, RESET, HINT_BUFFER)

    def notifications(
        self, channels: Sequence[str], timeout: float | None = None
    ) -> Iterator[tuple[str, str]]:
        """``(channel, payload)`` of each notification on ``channels``, until ``timeout``
        seconds pass without one (None: forever); ``(LISTENING, "")`` once every channel
        is listened to, first and again after a lost connection came back (what was sent
        meanwhile is lost: re-read what you track)."""
        sub = self._listen(channels, lambda c, p: (c, p), (LISTENING, ""), WATCH_BUFFER)
        waited = 0.0
        try:
            while timeout is None or waited < timeout:
                item = sub.get(timeout=POLL_SECONDS)  # in slices, so Ctrl-C is noticed
                if item is None:
                    waited += POLL_SECONDS
                    continue
                waited = 0.0
                yield item
        finally:
            sub.close()

    def _listen(
        self, channels: Sequence[str], item: Callable[[str, str], T], live: T, buffer: int
    ) -> Subscription[T]:
        """Each notice on ``channels`` as ``item(channel, payload)``; ``live`` once every
        channel is listened to, again after a lost connection came back, and in place of
        what overflowed ``buffer``. Each channel on a reconnecting connection of its own
        (``qctl_kit.postgres.listener``: backoff from 0.5 s to 30 s); closing the
        subscription ends them. An unreachable database at the start is an error, as for
        every command."""
        from functools import partial

        import psycopg

        from qctl_kit.postgres.listener import Listener

        def connect() -> Any:
            return psycopg.connect(self.dsn, autocommit=True, application_name=self.watch_name)

        with self._errors():
            connect().close()
        down = set(channels)  # not listened to (yet, or since a lost connection)
        lock = threading.Lock()
        listeners: list[Listener] = []

        def stop(_: Subscription[T]) -> None:
            for listener in listeners:  # all told first: they stop together
                listener.close(timeout=0)
            for listener in listeners:
                listener.close()

        sub: Subscription[T] = Subscription(buffer, lambda: live, stop)

        def up(channel: str) -> None:
            with lock:
                down.discard(channel)
                if not down:
                    sub.offer(live)

        def lost(channel: str) -> None:
            with lock:
                down.add(channel)

        listeners += [
            Listener(
                connect,
                c,
                partial(lambda c, payload: sub.offer(item(c, payload)), c),
                on_live=partial(up, c),
                on_down=partial(lost, c),
                name=f"qctl-{self.label}-{c}",
            )
            for c in channels
        ]
        for listener in listeners:
            listener.start()
        return sub

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
        with contextlib.suppress(Exception):
            self._conn.close()
