"""A connection to a hopper database (PostgreSQL), its ``search_path`` set to hopper's
schema, gated on the version hopper's migrator recorded in ``hopper_schema``.

hoppermigrate applies numbered migrations and records one ``hopper_schema`` row per
applied version (``hoppermigrate/hoppermigrate.go``, ``driver/internal/pgsql``
``MigrationApply``). qctl's writes are transcriptions of hopper's code at schema version
8 (``hoppermigrate/migrations/001`` to ``008``): on any other version they are refused
(exit 5, both versions named), since an older schema lacks what they write and a newer
hopper may write differently. Reads go ahead on any version (a missing table or column
is exit 5 too). qctl never migrates a hopper database and never takes hopper's
migration advisory lock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from qctl_store.dsn import redact
from qctl_store.errors import InvalidInput, ReadOnly, SchemaTooNew
from qctl_store.sqlfile import identifier

KNOWN_VERSIONS: dict[int, str] = {
    1: "schema",
    2: "messaging",
    3: "flow_control",
    4: "workflows",
    5: "streams",
    6: "autovacuum",
    7: "vacuum_truncate",
    8: "function_schema",
}
"""hoppermigrate's migrations qctl knows (``hoppermigrate/migrations/00N_<name>``)."""
WRITES_AT = 8
"""The schema version of the hopper code qctl's writes are transcribed from."""
SUPPORTED = (
    "hopper schema version 8 (hoppermigrate 001_schema..008_function_schema) for writes;"
    " reads of versions 1..8"
)


class UnsupportedSchema(SchemaTooNew):
    """The hopper schema is at a version qctl does not write to; exit 5."""


@dataclass(frozen=True)
class SchemaState:
    """What ``hopper_schema`` says: the applied versions, in order."""

    applied: tuple[int, ...]

    @property
    def version(self) -> int:
        return max(self.applied, default=0)

    @property
    def unknown(self) -> tuple[int, ...]:
        return tuple(v for v in self.applied if v not in KNOWN_VERSIONS)

    @property
    def writable(self) -> bool:
        return self.applied == tuple(range(1, WRITES_AT + 1))

    def refusal(self) -> str:
        found = ", ".join(map(str, self.applied)) or "none"
        why = (
            f"version {self.version} is newer than qctl knows (a newer hopper)"
            if self.unknown
            else f"version {self.version}, not {WRITES_AT}"
        )
        return (
            f"hopper schema at version {self.version} (applied: {found}): {why}; qctl writes"
            f" to hopper schema version {WRITES_AT} only and never migrates a hopper database"
        )


class Database:
    """One autocommit connection (``transaction()`` for a write), its ``search_path``
    the hopper schema (``--schema``, else ``hopper``, as hopper's ``Config.Schema``)."""

    def __init__(self, dsn: str, schema: str = "", read_only: bool = False) -> None:
        self.dsn = dsn
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: Any = self._connect(schema or "hopper")
        self.schema: str = self.one("SELECT current_schema() AS s")["s"]  # type: ignore[index]
        self.state = self._read_state()

    @property
    def location(self) -> str:
        return redact(self.dsn)

    def _connect(self, schema: str) -> Any:
        import psycopg
        from psycopg.rows import dict_row

        if "\x00" in schema:
            raise InvalidInput("--schema: NUL in the schema name")
        # The session refuses writes itself when qctl is read-only.
        # JIT compiles for longer than any of qctl's reads runs (tens of milliseconds on
        # the dashboard's aggregate over a large history, for nothing).
        options = "-c jit=off" + (" -c default_transaction_read_only=on" if self.read_only else "")
        with self._errors():
            conn = psycopg.connect(
                self.dsn,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=10,
                application_name="qctl",
                options=options,
            )
            conn.execute("SELECT set_config('search_path', %s, false)", [identifier(schema)])
        return conn

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        from psycopg import errors as pgerr

        from qctl_store.postgres.base import mapped_errors

        with mapped_errors(self.dsn):
            try:
                yield
            except (pgerr.UndefinedTable, pgerr.UndefinedColumn) as exc:
                state = getattr(self, "state", None)
                at = f"schema version {state.version}; " if state else ""
                raise UnsupportedSchema(
                    f"hopper schema lacks what qctl reads: {exc.diag.message_primary}"
                    f" ({at}{SUPPORTED})"
                ) from None

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        with self._lock, self._errors():
            return list(self._conn.execute(sql, params).fetchall())

    def run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> None:
        """A statement that returns no rows."""
        with self._lock, self._errors():
            self._conn.execute(sql, params)

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> dict[str, Any] | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def require_writable(self) -> None:
        """Refuse a write (before any dry run reads) on a schema version qctl does not
        write to."""
        if not self.state.writable:
            raise UnsupportedSchema(self.state.refusal())

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write's transaction, which reads the schema version again first (a hopper
        upgrade may have migrated since qctl connected): nothing is written to a version
        qctl does not know."""
        if self.read_only:
            raise ReadOnly("qctl is read-only; the write was refused")
        with self._lock, self._errors(), self._conn.transaction():
            self.state = self._read_state()
            self.require_writable()
            yield

    def _read_state(self) -> SchemaState:
        rows = self.all("SELECT version FROM hopper_schema ORDER BY version")
        return SchemaState(tuple(int(r["version"]) for r in rows))

    def notifications(
        self, channels: Sequence[str], timeout: float | None = None
    ) -> Iterator[tuple[str, str]]:
        """``(channel, payload)`` of each notification on ``channels``, on a connection
        of its own, until ``timeout`` seconds pass without one (None: forever)."""
        import psycopg
        from psycopg import sql

        with self._errors():
            conn = psycopg.connect(self.dsn, autocommit=True, application_name="qctl")
        try:
            for channel in channels:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            for n in conn.notifies(timeout=timeout):
                yield n.channel, n.payload
        finally:
            conn.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()
