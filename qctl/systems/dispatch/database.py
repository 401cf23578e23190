"""A connection to a dispatch database (PostgreSQL; dispatch v0.1.0 has no other SQL
store qctl reads), gated on the migration versions dispatch's migrator recorded.

dispatch migrates through grove: one ``grove_migrations`` row per applied version, group
``dispatch`` (``store/postgres/migrations.go``). qctl knows exactly the versions of
dispatch v0.1.0 and refuses a database with any other (exit 5, both lists named): a newer
dispatch may have changed what a write must look like. qctl never migrates it and never
takes grove's migration lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qctl.core.sqldb import SqlDatabase
from qctl_store.errors import SchemaTooNew

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


class Database(SqlDatabase):
    """A dispatch database (PostgreSQL), its migration versions gated on opening unless
    ``gate`` is False (``db status`` reports what it finds instead)."""

    label = "dispatch"
    unsupported = UnsupportedSchema

    def __init__(self, dsn: str, schema: str = "", gate: bool = True, **session: Any) -> None:
        """``session``: ``SqlDatabase``'s (``read_only``, the timeouts)."""
        super().__init__(dsn, schema, **session)
        self.state = self._read_state()
        if gate and not self.state.supported:
            self.refuse(UnsupportedSchema(self.state.refusal()))

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
