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

from typing import Any

from qctl.core.changes import Hint
from qctl.core.sqldb import SqlDatabase
from qctl_kit.dsn import sqlite_path
from qctl_kit.errors import SchemaTooNew
from qctl_kit.sqlfile import Queries, Vocabulary, fill, load

DEFAULT_SCHEMA = "dbos"
MIN_VERSION = 114
"""``dbos_migrations.version`` that DBOS 3.0.0 writes (PostgreSQL and SQLite alike: from
version 100 on every SDK numbers migrations the same)."""
MAX_VERSION = 125
"""``dbos_migrations.version`` that DBOS 3.4.0 writes."""


LIST_PAYLOAD = 16_384
"""Characters of a workflow's output and error a listing reads: a larger one is decoded
from that prefix and shown cut (``payload.decode``'s ``length``)."""
LISTS = frozenset({"ids", "executor_ids", "statuses", "values"})
PER_CALL = LISTS | {"column", "bucket_ms", "lock"}
POSTGRES_SQL = Vocabulary(
    columns=(
        ("now_ms", "CAST(EXTRACT(epoch FROM now()) * 1000 AS BIGINT)"),
        ("list_payload", str(LIST_PAYLOAD)),
    ),
    fragments=PER_CALL,
)
SQLITE_SQL = Vocabulary(
    columns=(
        ("now_ms", "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"),
        ("list_payload", str(LIST_PAYLOAD)),
    ),
    fragments=PER_CALL,
)
"""The tokens of ``queries/*.sql`` besides every system's, filled when a file is loaded:
``{now_ms}``, the database's clock in epoch milliseconds as
``SystemDatabase._now_ms_sql`` (``dbos/_sys_db.py``) takes it (on SQLite from
``julianday``, which every SQLite version has); ``{list_payload}``, ``LIST_PAYLOAD``
written in (an expression of the select list that a GROUP BY repeats). Filled per
call (``PER_CALL``): the lists of ``LISTS``, one ``%s`` per value (``marks``);
``{column}``, a column from the caller's fixed set; ``{bucket_ms}``, a validated int
written in (an expression a GROUP BY repeats); ``{lock}``, a row-locking clause or
nothing."""


def marks(n: int) -> str:
    """The placeholders of an ``IN`` list of ``n`` values."""
    return ", ".join(["%s"] * n)


class UnsupportedSchema(SchemaTooNew):
    """The DBOS system database is at a migration version qctl does not know (older or
    newer); exit 5, like a too-new azync schema. qctl never migrates it."""


class Database(SqlDatabase):
    """A DBOS system database, its migration version checked on opening."""

    label = "DBOS"
    marker = "workflow_status"
    default_schema = DEFAULT_SCHEMA
    sqlite = True
    unsupported = UnsupportedSchema
    channels = {
        "dbos_notifications_channel": "messages",
        "dbos_workflow_events_channel": "events",
        "dbos_streams_channel": "streams",
    }
    """``dbos/_sys_db.py``'s, sent on PostgreSQL only with ``<workflow id>::<topic or
    key>``: a message sent, an event or a stream value written. A workflow's status
    changes notify nothing, so they are polled; on SQLite nothing is sent at all."""

    def __init__(self, dsn: str, schema: str = "", **session: Any) -> None:
        """``session``: ``SqlDatabase``'s (``read_only``, the timeouts)."""
        self.dbos_client: Any = None
        """The ``DBOSClient`` a verb's batches share (``actions.shared_client``)."""
        super().__init__(dsn, schema, **session)
        self.version = self._check_version()

    def queries(self, filename: str) -> Queries:
        """The named statements of ``queries/<filename>``, in this backend's dialect: one
        text for both where they agree (``%s`` placeholders, ``{schema}.`` before each
        table: ``sql`` fills it per backend), a ``_postgres`` and a ``_sqlite`` statement
        where they do not."""
        return load(
            "qctl.systems.dbos.queries", filename, POSTGRES_SQL if self.postgres else SQLITE_SQL
        )

    def statement(self, filename: str, name: str) -> str:
        """Statement ``name`` of ``queries/<filename>``: this backend's own
        (``<name>_postgres`` or ``<name>_sqlite``) where the file has one."""
        queries = self.queries(filename)
        return queries.get(f"{name}_{self.backend}") or queries[name]

    def fill(self, text: str, **fragments: str) -> str:
        """``qctl_kit.sqlfile.fill``: ``text``'s per-call fragments, its schema too."""
        return fill(text, schema=self._prefix.removesuffix("."), **fragments)

    def sql(self, text: str) -> str:
        """``SqlDatabase.sql``, and ``{schema}.`` (the sqlfile token) the schema prefix."""
        return super().sql(text.replace("{schema}.", self._prefix))

    def hint(self, channel: str, payload: str) -> Hint:
        workflow, _, _ = payload.partition("::")
        return Hint(self.channels[channel], ids=(workflow,) if workflow else ())

    def close(self) -> None:
        if self.dbos_client is not None:
            self.dbos_client.destroy()
            self.dbos_client = None
        super().close()

    def _connect_sqlite(self) -> Any:
        conn = super()._connect_sqlite()
        conn.execute(self.queries("database.sql").foreign_keys_sqlite)
        return conn

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
        options = self.options()
        if options:
            query.append(("options", options))
        return url._replace(query=urlencode(query)).geturl()

    def _check_version(self) -> int:
        row = self.one(self.queries("database.sql").version)
        version = int(row["version"]) if row and row["version"] is not None else 0
        if not MIN_VERSION <= version <= MAX_VERSION:
            relation = "older" if version < MIN_VERSION else "newer"
            self.refuse(
                UnsupportedSchema(
                    f"DBOS system database at migration version {version} is {relation} than "
                    f"this qctl supports ({MIN_VERSION} to {MAX_VERSION}, DBOS 3.0 to 3.4); "
                    "qctl never migrates a DBOS database"
                )
            )
        return version
