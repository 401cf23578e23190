"""A connection to a dispatch database (PostgreSQL), gated on the migration versions
dispatch's migrator recorded. dispatch v0.1.0's SQLite store cannot run a job
(``SQLITE_REFUSAL``): a SQLite file holding its tables is refused.

dispatch migrates through grove: one ``grove_migrations`` row per applied version, group
``dispatch`` (``store/postgres/migrations.go``). qctl knows the seven versions of dispatch
v0.1.0, which are also every version of dispatch's main branch at commit 6f7dda7 (tag
v1.5.3). A database that lacks one of them is refused (exit 5): its tables may not be
what qctl reads. A database with versions qctl does not know (a newer dispatch) is read,
since every column qctl reads is still there, but never written (exit 5, both lists
named): a newer dispatch may have changed what a write must look like, e.g. a lease epoch
a cancel must fence. qctl never migrates it and never takes grove's migration lock.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from qctl.core.sqldb import SqlDatabase
from qctl_kit.dsn import is_postgres
from qctl_kit.errors import SchemaTooNew

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
SUPPORTED = (
    "dispatch v0.1.0 to v1.5.3 (main at 6f7dda7; grove group dispatch,"
    " 20240101120000..20240101120006)"
)

ZERO_WORKER_ID = "wkr_" + "0" * 26
"""What dispatch v0.1.0 writes as ``worker_id`` for a job no worker holds:
store/postgres/models.go writes ``WorkerID.String()``, the zero TypeID's text there. On
main at 6f7dda7 the same line writes '' (id/id.go: ``String`` of the nil ID)."""

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


SQLITE_REFUSAL = (
    "dispatch on SQLite is not supported: dispatch v0.1.0's own SQLite store cannot run a"
    " job (store/sqlite DequeueJobs marks the jobs running, then fails to read them back,"
    " its TEXT time columns not scanning into Go times, so no worker ever gets one), and no"
    " process can lead its cron scheduler (AcquireLeadership fails); qctl operates dispatch"
    " on PostgreSQL (--dsn postgresql://...)"
)
"""Why a dispatch database in a SQLite file is refused (exit 5), as found by running
dispatch v0.1.0's store/sqlite (tests/go/test_dispatch_runtime.py)."""


@dataclass(frozen=True)
class SchemaState:
    """What ``grove_migrations`` and the catalog say about the dispatch schema."""

    applied: tuple[str, ...]
    unknown: tuple[str, ...]
    missing: tuple[str, ...]
    columns: frozenset[tuple[str, str]]

    @property
    def supported(self) -> bool:
        """Every version known and applied: qctl reads and writes."""
        return not self.unknown and not self.missing

    @property
    def readable(self) -> bool:
        """Every known version applied (unknown newer ones too, maybe): qctl reads."""
        return not self.missing

    def refusal(self, writing: bool = False) -> str:
        found = ", ".join(self.applied) or "none"
        known = ", ".join(KNOWN_VERSIONS)
        why = (
            f"versions qctl does not know: {', '.join(self.unknown)} (a newer dispatch)"
            if self.unknown
            else f"versions not applied: {', '.join(self.missing)}"
        )
        refused = "qctl reads it but never writes to it" if writing else "refused"
        return (
            f"dispatch schema at migration versions {found}: {why}; qctl knows {known}"
            f" ({SUPPORTED}); {refused}, and never migrates a dispatch database"
        )

    def has(self, capability: str) -> bool:
        table, column, _ = CAPABILITIES[capability]
        return (table, column) in self.columns


class Database(SqlDatabase):
    """A dispatch database (PostgreSQL), its migration versions gated on opening unless
    ``gate`` is False (``db status`` reports what it finds instead): refused when a
    known version is missing; a write calls ``writable`` first."""

    label = "dispatch"
    marker = "dispatch_jobs"
    unsupported = UnsupportedSchema
    channels = {"dispatch_jobs_wake": "jobs"}
    """``store/postgres/wake.go``'s, sent on enqueue from v1.5.3 (empty payload, not per
    schema); a state change sends nothing, so the rest is polled."""

    def __init__(self, dsn: str, schema: str = "", gate: bool = True, **session: Any) -> None:
        """``session``: ``SqlDatabase``'s (``read_only``, the timeouts)."""
        if not is_postgres(dsn):
            raise UnsupportedSchema(SQLITE_REFUSAL)
        super().__init__(dsn, schema, **session)
        # As hopper's session: JIT compiles for longer than qctl's reads run (90 ms of
        # queues throughput's 200 ms over 300,000 jobs, for nothing).
        self.all("SELECT set_config('jit', 'off', false)")
        self.state = self._read_state()
        if gate and not self.state.readable:
            self.refuse(UnsupportedSchema(self.state.refusal()))

    @functools.cached_property
    def unheld_worker_id(self) -> str:
        """The ``worker_id`` this deployment's dispatch writes on a job no worker holds,
        for the jobs qctl enqueues: v0.1.0's zero TypeID text or 6f7dda7's ''. Their
        schemas are the same, so the newest jobs tell (a job still waiting carries its
        producer's value); with none, the current dispatch's ''. Both versions read
        either."""
        row = self.one(
            "SELECT worker_id FROM (SELECT worker_id, started_at FROM {t}dispatch_jobs"
            " ORDER BY id DESC LIMIT 1000) AS newest"
            " WHERE started_at IS NULL AND worker_id IN ('', %s) LIMIT 1",
            [ZERO_WORKER_ID],
        )
        return str(row["worker_id"]) if row else ""

    def writable(self) -> None:
        """Refuse (exit 5) to write to a schema at a version qctl does not know."""
        if not self.state.supported:
            raise UnsupportedSchema(self.state.refusal(writing=True))

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
