"""A connection to a dispatch database (PostgreSQL; dispatch v0.1.0 has no other SQL
store qctl reads), gated on the migration versions dispatch's migrator recorded.

dispatch migrates through grove: one ``grove_migrations`` row per applied version, group
``dispatch`` (``store/postgres/migrations.go``). qctl knows exactly the versions of
dispatch v0.1.0 and refuses a database with any other (exit 5, both lists named): a newer
dispatch may have changed what a write must look like. qctl never migrates it and never
takes grove's migration lock.
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

KNOWN_VERSIONS: dict[str, str] = {
    "20240101120000": "create_jobs_table",
    "20240101120001": "create_workflows_tables",
    "20240101120002": "create_cron_entries_table",
    "20240101120003": "create_dlq_table",
    "20240101120004": "create_events_table",
    "20240101120005": "create_workers_table",
    "20240101120006": "schema_additions",
}
"""The group ``dispatch`` of ``store/postgres/migrations.go`` at dispatch v0.1.0."""
SUPPORTED = "dispatch v0.1.0 (grove group dispatch, 20240101120000..20240101120006)"

CAPABILITIES: dict[str, tuple[str, str, str]] = {
    "fenced_cancel": (
        "dispatch_jobs",
        "lease_epoch",
        "cancel of a running job through the leased-update predicate",
    ),
    "dlq_claim": (
        "dispatch_dlq",
        "replayed_job_id",
        "DLQ replay that claims the entry with the new job's id",
    ),
}
"""Capabilities a newer dispatch schema enables, each by the column it needs."""


class UnsupportedSchema(SchemaTooNew):
    """The dispatch schema is at versions qctl does not know; exit 5."""


@dataclass(frozen=True)
class SchemaState:
    """What ``grove_migrations`` and the catalog say about the dispatch schema."""

    applied: tuple[str, ...]
    unknown: tuple[str, ...]
    missing: tuple[str, ...]
    columns: frozenset[tuple[str, str]]

    @property
    def supported(self) -> bool:
        return not self.unknown and not self.missing

    def refusal(self) -> str:
        found = ", ".join(self.applied) or "none"
        known = ", ".join(KNOWN_VERSIONS)
        why = (
            f"versions qctl does not know: {', '.join(self.unknown)} (a newer dispatch)"
            if self.unknown
            else f"versions not applied: {', '.join(self.missing)}"
        )
        return (
            f"dispatch schema at migration versions {found}: {why}; qctl knows {known}"
            f" ({SUPPORTED}) and never migrates a dispatch database"
        )

    def has(self, capability: str) -> bool:
        table, column, _ = CAPABILITIES[capability]
        return (table, column) in self.columns


class Database:
    """One autocommit connection (``transaction()`` for several statements), its
    ``search_path`` set to ``--schema`` when one is given."""

    def __init__(
        self, dsn: str, schema: str = "", read_only: bool = False, gate: bool = True
    ) -> None:
        self.dsn = dsn
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: Any = self._connect(schema)
        self.schema: str = self.one("SELECT current_schema() AS s")["s"]  # type: ignore[index]
        self.state = self._read_state()
        if gate and not self.state.supported:
            self.close()
            raise UnsupportedSchema(self.state.refusal())

    @property
    def location(self) -> str:
        return redact(self.dsn)

    def _connect(self, schema: str) -> Any:
        import psycopg
        from psycopg.rows import dict_row

        # The session refuses writes itself when qctl is read-only.
        options = "-c default_transaction_read_only=on" if self.read_only else None
        with self._errors():
            conn = psycopg.connect(
                self.dsn,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=10,
                application_name="qctl",
                options=options,
            )
            if schema:
                if "\x00" in schema:
                    raise InvalidInput("--schema: NUL in the schema name")
                conn.execute("SELECT set_config('search_path', %s, false)", [identifier(schema)])
        return conn

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        from psycopg import errors as pgerr

        from qctl_store.postgres.base import mapped_errors

        with mapped_errors(self.dsn):
            try:
                yield
            except pgerr.UndefinedTable as exc:
                raise UnsupportedSchema(
                    f"dispatch table missing: {exc.diag.message_primary}"
                ) from None

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        with self._lock, self._errors():
            return list(self._conn.execute(sql, params).fetchall())

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> dict[str, Any] | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self.read_only:
            raise ReadOnly("qctl is read-only; the write was refused")
        with self._lock, self._errors(), self._conn.transaction():
            yield

    def _read_state(self) -> SchemaState:
        rows = self.all(
            'SELECT version FROM grove_migrations WHERE "group" = %s ORDER BY version',
            ["dispatch"],
        )
        applied = tuple(str(r["version"]) for r in rows)
        columns = self.all(
            "SELECT table_name AS t, column_name AS c FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name LIKE %s",
            ["dispatch\\_%"],
        )
        return SchemaState(
            applied=applied,
            unknown=tuple(v for v in applied if v not in KNOWN_VERSIONS),
            missing=tuple(v for v in KNOWN_VERSIONS if v not in applied),
            columns=frozenset((r["t"], r["c"]) for r in columns),
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()
