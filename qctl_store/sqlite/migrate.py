"""qctl's own numbered migrations for the embedded SQLite backend.

Files ``migrations/NNNN_name.sql`` of this package are discovered at run time, so a new
file is picked up without code changes. Applied versions are recorded in a goose-like
version table (``config.version_table``: id, version_id, is_applied, tstamp, with the
version-0 row). Each file and its version row commit together in one ``BEGIN IMMEDIATE``
transaction that first re-reads the applied version, so processes migrating one file at
the same time queue on the write lock and never apply a version twice.
"""

from __future__ import annotations

import re
import sqlite3
from functools import cache
from importlib import resources

from qctl_kit import errors
from qctl_kit.sqlfile import fill, identifier
from qctl_store.backend import SchemaGate, check_version
from qctl_store.sqlite.base import SqliteBase, Tx, queries
from qctl_store.types import SchemaStatus

Q = queries("migrate.sql")
_FILE = re.compile(r"^(\d{4})_[A-Za-z0-9_]+\.sql$")


@cache
def migrations() -> tuple[tuple[int, str], ...]:
    """(version, SQL text) of every migration shipped with this release, ascending."""
    found = []
    for entry in resources.files("qctl_store.sqlite").joinpath("migrations").iterdir():
        m = _FILE.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _ in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate SQLite migration versions: {versions}")
    return tuple(found)


def latest_version() -> int:
    return migrations()[-1][0] if migrations() else 0


def statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies keep their semicolons),
    so they can run inside an open transaction, which ``executescript`` cannot."""
    out: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip() and not _only_comments(pending):
                out.append(pending.strip())
            pending = ""
    if pending.strip() and not _only_comments(pending):
        raise ValueError(f"incomplete SQL statement at the end of a migration: {pending!r}")
    return out


def _only_comments(text: str) -> bool:
    return all(not ln.strip() or ln.strip().startswith("--") for ln in text.splitlines())


class MigrateMixin(SchemaGate, SqliteBase):
    def _sql(self, text: str) -> str:
        """A version-table statement with the configured table name filled in."""
        return fill(text, table=identifier(self.config.version_table))

    def _applied_version(self, t: Tx) -> int | None:
        """The highest applied version, or None when there is no version table."""
        if t.one(Q.version_table_exists, {"table": self.config.version_table}) is None:
            return None
        row = t.one(self._sql(Q.latest_version))
        return int(row["v"]) if row is not None and row["v"] is not None else 0

    def migrate(self) -> list[int]:
        known = latest_version()
        with self.tx() as t:
            t.execute(self._sql(Q.create_version_table))
            if t.one(self._sql(Q.any_version)) is None:
                t.execute(self._sql(Q.insert_version), {"version": 0})
        applied: list[int] = []
        for version, script in migrations():
            with self.tx() as t:
                current = self._applied_version(t) or 0
                if current > known:
                    raise errors.SchemaTooNew(
                        f"{self.path} is at schema version {current}; this release knows "
                        f"up to {known}: upgrade qctl"
                    )
                if version <= current:
                    continue  # applied earlier, or by a concurrent migrator
                for stmt in statements(script):
                    t.execute(stmt)
                t.execute(self._sql(Q.insert_version), {"version": version})
            applied.append(version)
        return applied

    def schema_status(self) -> SchemaStatus:
        expected = latest_version()
        with self.read() as t:
            applied = self._applied_version(t) or 0
            triggers = t.one(Q.change_triggers)
        return SchemaStatus(
            backend="sqlite",
            schema="",
            applied_version=applied,
            expected_version=expected,
            pending_versions=[v for v, _ in migrations() if v > applied],
            change_triggers=triggers is not None,
            push=self._change_push(),
            location=self.path,
        )

    def _change_push(self) -> bool:
        """Whether ``changes()`` pushes hints; the change-log capability overrides it."""
        return False

    def check_schema(self) -> SchemaStatus:
        """The schema status, or ``SchemaNotMigrated``/``SchemaTooNew`` when this release
        cannot work on the file as it is."""
        status = self.schema_status()
        check_version(
            self.path, status.applied_version, status.expected_version, status.pending_versions
        )
        return status

    def _schema_versions(self) -> tuple[str, int, int, list[int]]:
        with self.read() as t:
            applied = self._applied_version(t) or 0
        pending = [v for v, _ in migrations() if v > applied]
        return self.path, applied, latest_version(), pending
