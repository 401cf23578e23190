"""A connection to a DBOS system database, PostgreSQL (psycopg) or SQLite (sqlite3).

qctl reads DBOS's tables with its own SQL (the keyset pages and counts must stay fast on
millions of rows, and DBOS's own reads decode payloads with pickle) and writes through
``dbos.DBOSClient`` (``qctl.systems.dbos.actions``), except where DBOS has no function.

The schema is DBOS's: ``dbos`` on PostgreSQL unless ``--schema`` names another (DBOS's
``dbos_system_schema``), the main database of a SQLite file. Its version is the single row
of ``dbos_migrations`` (``dbos/_migration.py``); qctl reads the versions DBOS 3.x writes
and refuses others, and never migrates: that is the application's job.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

from qctl_store.dsn import (
    is_postgres,
    own_options,
    postgres_params,
    redact,
    session_options,
    sqlite_path,
    timeout_settings,
)
from qctl_store.errors import InvalidInput, ReadOnly, SchemaTooNew, Timeout, Unavailable

DEFAULT_SCHEMA = "dbos"
MIN_VERSION = 114
"""``dbos_migrations.version`` that DBOS 3.0.0 writes (PostgreSQL and SQLite alike: from
version 100 on every SDK numbers migrations the same)."""
MAX_VERSION = 125
"""``dbos_migrations.version`` that DBOS 3.4.0 writes."""


class UnsupportedSchema(SchemaTooNew):
    """The DBOS system database is at a migration version qctl does not know (older or
    newer); exit 5, like a too-new azync schema. qctl never migrates it."""


def _identifier(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name):
        raise InvalidInput(f"--schema: {name!r} is not a plain SQL identifier")
    return f'"{name}"'


class Database:
    """One connection (autocommit; ``transaction()`` for several statements). SQL is
    written once with ``%s`` placeholders and ``{t}`` table prefixes (``sql()``)."""

    def __init__(
        self,
        dsn: str,
        schema: str = "",
        read_only: bool = False,
        statement_timeout: timedelta | None = None,
        lock_timeout: timedelta | None = None,
    ) -> None:
        """``statement_timeout``/``lock_timeout``: PostgreSQL's session limits (see
        ``qctl_store.Config``); a statement past one raises ``Timeout``."""
        self.dsn = dsn
        self.read_only = read_only
        self.statement_timeout = statement_timeout
        self.lock_timeout = lock_timeout
        self.postgres = is_postgres(dsn)
        self.schema = (schema or DEFAULT_SCHEMA) if self.postgres else ""
        self._prefix = f"{_identifier(self.schema)}." if self.postgres else ""
        # One connection shared by the dashboard's worker threads, one statement at a time.
        self._lock = threading.RLock()
        self._conn: Any = self._connect()
        self.version = self._check_version()

    @property
    def backend(self) -> str:
        """Named as azync's ``db status`` names its backends (``ConsoleStore.backend``)."""
        return "postgres" if self.postgres else "sqlite"

    @property
    def location(self) -> str:
        return redact(self.dsn)

    @property
    def client_url(self) -> str:
        """The URL ``DBOSClient`` opens (SQLAlchemy's form for SQLite files); a
        PostgreSQL URL carries this session's options, so the client's writes have the
        same timeouts as qctl's own statements."""
        if not self.postgres:
            return f"sqlite:///{sqlite_path(self.dsn)}"
        if not self.dsn.startswith(("postgresql://", "postgres://")):
            return self.dsn
        from urllib.parse import parse_qsl, urlencode, urlsplit

        url = urlsplit(self.dsn)
        query = [(k, v) for k, v in parse_qsl(url.query, keep_blank_values=True) if k != "options"]
        options = self._options()
        if options:
            query.append(("options", options))
        return url._replace(query=urlencode(query)).geturl()

    def _options(self) -> str:
        """libpq ``options``: the DSN's own (or PGOPTIONS) first, then qctl's settings."""
        settings = timeout_settings(self.statement_timeout, self.lock_timeout)
        if self.read_only:
            settings["default_transaction_read_only"] = "on"
        return session_options(own_options(postgres_params(self.dsn)), settings)

    def timeout(self, exc: BaseException) -> Timeout | None:
        """``Timeout`` when ``exc`` (or the driver error SQLAlchemy wrapped in it) is a
        statement PostgreSQL cancelled at a timeout; None otherwise."""
        if not self.postgres:
            return None
        import psycopg

        from qctl_store.postgres.base import timeout_error

        cause = getattr(exc, "orig", exc)
        if not isinstance(cause, psycopg.Error):
            return None
        return timeout_error(cause, self.statement_timeout, self.lock_timeout)

    def _connect(self) -> Any:
        if self.postgres:
            import psycopg
            from psycopg.rows import dict_row

            with self._errors():
                options = self._options()
                return psycopg.connect(
                    self.dsn,
                    autocommit=True,
                    row_factory=dict_row,
                    connect_timeout=10,
                    application_name="qctl",
                    options=options or None,
                )
        import os
        import sqlite3
        from urllib.parse import quote

        path = sqlite_path(self.dsn)
        if not os.path.exists(path):
            raise Unavailable(f"no DBOS system database at {path}")
        mode = "ro" if self.read_only else "rw"  # never create a file
        with self._errors():
            conn = sqlite3.connect(
                f"file:{quote(path)}?mode={mode}",
                uri=True,
                isolation_level=None,
                timeout=10,
                check_same_thread=False,
            )
        conn.row_factory = sqlite3.Row
        # DBOS declares ON DELETE CASCADE from its event, message and stream tables to
        # workflow_status; SQLite enforces it only with foreign keys on (as DBOS sets).
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Driver failures as qctl_store errors (exit codes), never with a password."""
        if self.postgres:
            import psycopg
            from psycopg import errors as pgerr

            try:
                yield
            except (pgerr.LockNotAvailable, pgerr.QueryCanceled) as exc:
                raise self.timeout(exc) or self._unavailable(exc) from None
            except pgerr.ReadOnlySqlTransaction:
                raise ReadOnly("the database session is read-only") from None
            except pgerr.UndefinedTable as exc:
                raise UnsupportedSchema(
                    f"DBOS table missing in schema {self.schema!r}: {exc.diag.message_primary}"
                ) from None
            except psycopg.OperationalError as exc:
                raise self._unavailable(exc) from None
        else:
            import sqlite3

            try:
                yield
            except sqlite3.OperationalError as exc:
                text = str(exc)
                if "readonly" in text:
                    raise ReadOnly("the database is read-only") from None
                if "no such table" in text:
                    raise UnsupportedSchema(f"not a DBOS system database: {text}") from None
                raise Unavailable(f"SQLite at {self.dsn}: {text}") from None

    def _unavailable(self, exc: Exception) -> Unavailable:
        first = redact(str(exc)).strip().splitlines() or ["connection failed"]
        return Unavailable(f"PostgreSQL at {redact(self.dsn)} is unavailable: {first[0]}")

    def sql(self, text: str) -> str:
        """``text`` for this backend: ``{t}`` becomes the schema prefix, ``%s`` SQLite's
        ``?``."""
        text = text.replace("{t}", self._prefix)
        return text if self.postgres else text.replace("%s", "?")

    def all(self, text: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock, self._errors():
            cur = self._conn.execute(self.sql(text), tuple(params))
            return [dict(row) for row in cur.fetchall()]

    def one(self, text: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self.all(text, params)
        return rows[0] if rows else None

    def execute(self, text: str, params: Sequence[Any] = ()) -> int:
        """One write statement; its row count."""
        if self.read_only:
            raise ReadOnly("qctl is read-only; the write was refused")
        with self._lock, self._errors():
            return int(self._conn.execute(self.sql(text), tuple(params)).rowcount)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self.read_only:
            raise ReadOnly("qctl is read-only; the write was refused")
        with self._lock, self._errors():
            if self.postgres:
                with self._conn.transaction():
                    yield
            else:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")

    def _check_version(self) -> int:
        row = self.one("SELECT max(version) AS version FROM {t}dbos_migrations")
        version = int(row["version"]) if row and row["version"] is not None else 0
        if not MIN_VERSION <= version <= MAX_VERSION:
            relation = "older" if version < MIN_VERSION else "newer"
            raise UnsupportedSchema(
                f"DBOS system database at migration version {version} is {relation} than "
                f"this qctl supports ({MIN_VERSION} to {MAX_VERSION}, DBOS 3.0 to 3.4); "
                "qctl never migrates a DBOS database"
            )
        return version

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()
