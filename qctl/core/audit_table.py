"""The audit trail kept in the database qctl writes to, so that every operator of that
database sees one trail (``qctl audit list``), whichever machine each works from.

The table is qctl's own, in its own namespace, and never part of any system's schema
or migrations: on PostgreSQL ``qctl.qctl_audit`` (schema ``qctl``, whatever ``--schema``
the system's tables are in), on SQLite ``qctl_audit`` in the database file. Only ``qctl
audit init`` creates it, never in read-only mode; a context keeps its trail there with
``audit = "database"`` (``qctl.core.audit.keep_in``), else in the local file.

A row holds the entry as the local file's line holds it (``entry``: the same JSON, its
key order kept), and the two columns a listing selects on: ``time`` (when the write
started) and ``verb``. Each entry is inserted in its own short transaction once its
write has ended (its exit status is part of it), on a connection of its own.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from qctl.core import audit
from qctl.core.audit import Missing

# PostgreSQL: the schema first (qctl's own), then the table and its index; each
# statement is a no-op where its object exists.
POSTGRES_CREATE = (
    "CREATE SCHEMA IF NOT EXISTS qctl",
    "CREATE TABLE IF NOT EXISTS qctl.qctl_audit ("
    " id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " time timestamptz NOT NULL,"
    " verb text NOT NULL,"
    " entry json NOT NULL)",
    "CREATE INDEX IF NOT EXISTS qctl_audit_time ON qctl.qctl_audit (time)",
)
SQLITE_CREATE = (
    "CREATE TABLE IF NOT EXISTS qctl_audit ("
    " id INTEGER PRIMARY KEY,"
    " time TEXT NOT NULL,"  # audit.stamp's form: RFC 3339 UTC, which sorts as text
    " verb TEXT NOT NULL,"
    " entry TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS qctl_audit_time ON qctl_audit (time)",
)

POSTGRES_EXISTS = "SELECT to_regclass('qctl.qctl_audit') IS NOT NULL AS found"
SQLITE_EXISTS = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'qctl_audit'"

POSTGRES_INSERT = (
    "INSERT INTO qctl.qctl_audit (time, verb, entry) VALUES (%(time)s::timestamptz, %(verb)s,"
    " %(entry)s::json)"
)
SQLITE_INSERT = "INSERT INTO qctl_audit (time, verb, entry) VALUES (:time, :verb, :entry)"

# Newest first by when each write started; a verb, or every verb of a noun ("jobs").
POSTGRES_LIST = (
    "SELECT entry::text AS entry FROM qctl.qctl_audit"
    " WHERE (%(since)s::timestamptz IS NULL OR time >= %(since)s::timestamptz)"
    " AND (%(verb)s::text IS NULL OR verb = %(verb)s OR starts_with(verb, %(verb)s || ' '))"
    " ORDER BY time DESC, id DESC LIMIT %(limit)s"
)
SQLITE_LIST = (
    "SELECT entry FROM qctl_audit"
    " WHERE (:since IS NULL OR time >= :since)"
    " AND (:verb IS NULL OR verb = :verb OR substr(verb, 1, length(:verb) + 1) = :verb || ' ')"
    " ORDER BY time DESC, id DESC LIMIT :limit"
)


class AuditTable(audit.Table):
    """The audit table of one database: ``connect`` opens a DB-API connection to it in
    autocommit mode (psycopg's, or sqlite3's), ``postgres`` says which."""

    def __init__(self, connect: Callable[[], Any], postgres: bool, database: str) -> None:
        self.connect = connect
        self.postgres = postgres
        name = "qctl.qctl_audit" if postgres else "qctl_audit"
        self.name = name
        self.database = database
        self.where = f"audit table {name} of {database}"

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        conn = self.connect()
        try:
            yield conn
        finally:
            conn.close()

    def _exists(self, conn: Any) -> bool:
        row = conn.execute(POSTGRES_EXISTS if self.postgres else SQLITE_EXISTS).fetchone()
        value = row["found"] if isinstance(row, Mapping) else row[0]
        return bool(value)

    def statements(self) -> tuple[str, ...]:
        """What ``create`` runs."""
        return POSTGRES_CREATE if self.postgres else SQLITE_CREATE

    def create(self) -> bool:
        """Create the table (and on PostgreSQL its schema) in one transaction; False
        where it existed already (nothing is changed then)."""
        with self._connection() as conn:
            if self._exists(conn):
                return False
            with _transaction(conn, self.postgres):
                for statement in self.statements():
                    conn.execute(statement)
            return True

    def exists(self) -> bool:
        with self._connection() as conn:
            return self._exists(conn)

    def insert(self, record: Mapping[str, Any]) -> None:
        """One entry, refused (``Missing``) where ``qctl audit init`` made no table."""
        params = {
            "time": record["time"],
            "verb": record["verb"],
            "entry": json.dumps(record, ensure_ascii=True, separators=(",", ":")),
        }
        with self._connection() as conn:
            if not self._exists(conn):
                raise Missing(f"no {self.name} here yet (`qctl audit init` creates it)")
            conn.execute(POSTGRES_INSERT if self.postgres else SQLITE_INSERT, params)

    def read(self, since: datetime | None, verb: str | None, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` entries started at or after ``since``, of ``verb`` (or
        of the noun's verbs); an entry that is not a JSON object is left out."""
        params = {
            "since": audit.stamp(since) if since else None,
            "verb": verb or None,
            "limit": limit,
        }
        with self._connection() as conn:
            if not self._exists(conn):
                raise Missing(f"no {self.name} here yet (`qctl audit init` creates it)")
            rows = conn.execute(POSTGRES_LIST if self.postgres else SQLITE_LIST, params)
            texts = [r["entry"] if isinstance(r, Mapping) else r[0] for r in rows.fetchall()]
        entries = []
        for text in texts:
            with contextlib.suppress(ValueError, TypeError):
                value = json.loads(text)
                if isinstance(value, dict):
                    entries.append(value)
        return entries


@contextlib.contextmanager
def _transaction(conn: Any, postgres: bool) -> Iterator[None]:
    if postgres:
        with conn.transaction():
            yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
