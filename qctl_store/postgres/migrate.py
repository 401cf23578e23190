"""Migrations for the PostgreSQL backend, sharing goose's bookkeeping with azync.

qctl's files in ``migrations/`` are numbered and named like azync's (00001 to 00011)
and leave exactly azync's schema behind. They are applied the way azync's goose v3
applies its own, so either tool sees a database migrated by the other as current:

- goose's version table (``Config.version_table``, default ``azync_migrations``) in the
  target schema, created together with its version-0 row;
- goose's session advisory lock (key 4097083626) around the whole run, so concurrent
  migrators (Go or Python) take turns;
- each file and its version row in one transaction, except files whose header says
  ``-- qctl: no-transaction`` (the ``CREATE INDEX CONCURRENTLY`` ones): their
  statements run one by one in autocommit, then the version row is written.

Files 5 to 11 are re-runnable, so deleting their version rows makes a drifted database
converge on the next run.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import psycopg

from qctl_kit import errors
from qctl_kit.dsn import redact
from qctl_kit.postgres import tune
from qctl_kit.postgres.connect import Connection, Cursor, usage_refused
from qctl_kit.postgres.watch import Blocker
from qctl_kit.sqlfile import fill, identifier
from qctl_store.backend import SchemaGate, check_version
from qctl_store.postgres.admin import console_indexes_of
from qctl_store.postgres.base import PgBase, azync_errors, queries
from qctl_store.postgres.rows import utc
from qctl_store.types import SchemaStatus

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

GOOSE_LOCK_KEY = 4097083626
"""goose's Postgres session-locker id; azync's Migrate takes the same lock."""

LOCK_RETRY_INTERVAL = 0.2
LOCK_WAIT_LIMIT = 300.0
"""goose waits 60 x 5 s for the lock; qctl polls faster for the same five minutes."""

# Strings, compiled by ``re`` on first use (and cached there): only migrating reads the
# migration files, so every other command skips compiling them.
_FILENAME = r"^(\d+)_[A-Za-z0-9_]+\.sql$"
_NO_TRANSACTION = r"(?m)^--\s*qctl:\s*no-transaction\s*$"
_DOLLAR_TAG = r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$"
_COMMENT_LINE = r"(?m)^\s*--.*$"
_CONCURRENT_INDEX = r"(?i)^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+(\w+)"


@dataclass(frozen=True)
class Migration:
    version: int
    filename: str
    statements: tuple[str, ...]
    no_transaction: bool


def split_statements(text: str) -> list[str]:
    """Split SQL on top-level semicolons, respecting comments, quoted strings and
    identifiers, and dollar-quoted bodies. Comment-only fragments are dropped."""
    parts: list[str] = []
    start = i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch in "'\"":
            i += 1
            while i < n:
                if text[i] == ch:
                    if text.startswith(ch * 2, i):  # doubled quote: an escaped quote
                        i += 2
                        continue
                    break
                i += 1
            i += 1
        elif ch == "$" and (tag := re.compile(_DOLLAR_TAG).match(text, i)):
            end = text.find(tag.group(0), tag.end())
            i = n if end < 0 else end + len(tag.group(0))
        elif ch == ";":
            parts.append(text[start:i])
            i += 1
            start = i
        else:
            i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if re.sub(_COMMENT_LINE, "", p).strip()]


@cache
def _migration_files() -> tuple[tuple[int, Traversable], ...]:
    """The packaged migration files by version, ascending, numbered 1..n."""
    found: list[tuple[int, Traversable]] = []
    for entry in resources.files("qctl_store.postgres").joinpath("migrations").iterdir():
        match = re.match(_FILENAME, entry.name)
        if match:
            found.append((int(match.group(1)), entry))
    found.sort(key=lambda f: f[0])
    versions = [v for v, _ in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"qctl_store.postgres migrations are not numbered 1..n: {versions}")
    return tuple(found)


@cache
def load_migrations() -> tuple[Migration, ...]:
    """The packaged migration files, in version order."""
    found: list[Migration] = []
    for version, entry in _migration_files():
        text = entry.read_text(encoding="utf-8")
        found.append(
            Migration(
                version=version,
                filename=entry.name,
                statements=tuple(split_statements(text)),
                no_transaction=bool(re.search(_NO_TRANSACTION, text)),
            )
        )
    return tuple(found)


@cache
def concurrent_indexes() -> dict[str, tuple[Migration, str]]:
    """The indexes the migrations build with CREATE INDEX CONCURRENTLY (the only builds
    that can leave an index invalid), by name: the migration and its statement."""
    found: dict[str, tuple[Migration, str]] = {}
    for migration in load_migrations():
        for statement in migration.statements:
            match = re.match(_CONCURRENT_INDEX, statement)
            if match:
                found[match.group(1)] = (migration, statement)
    return found


def latest_version() -> int:
    """From the file names alone: every command checks the schema against it, and
    reading and splitting the files cost a one-shot command some 15 ms."""
    return _migration_files()[-1][0]


class MigrateMixin(SchemaGate, PgBase):
    def migrate(self) -> list[int]:
        """Apply the pending migrations on a dedicated connection, under goose's lock.

        Returns the versions applied by this call (empty when already current).
        Raises ``SchemaTooNew`` without touching anything when the database is past
        this release."""
        self._check_writable()
        migrations = load_migrations()
        conn = self.connect()
        try:
            with azync_errors(self.dsn, self.config), self._answered(conn):
                self._take_migration_lock(conn)
                try:
                    return self._migrate_locked(conn, migrations)
                finally:
                    self._release_migration_lock(conn)
        finally:
            conn.close()

    def rebuild_indexes(self, names: list[str]) -> list[str]:
        """Rebuild those of ``names`` (invalid indexes, ``schema_status``) that azync's
        migrations build concurrently, as their migration defines them: DROP INDEX
        CONCURRENTLY, then the migration's CREATE INDEX CONCURRENTLY, under goose's lock
        (so no migrator builds them meanwhile). Returns the ones rebuilt."""
        self._check_writable()
        known = concurrent_indexes()
        chosen = [n for n in names if n in known]
        if not chosen:
            return []
        conn = self.connect()
        try:
            with azync_errors(self.dsn, self.config), self._answered(conn):
                self._take_migration_lock(conn)
                try:
                    for name in chosen:
                        for statement in tune.build(name, known[name][1]):
                            conn.execute(statement)
                finally:
                    self._release_migration_lock(conn)
        finally:
            conn.close()
        return chosen

    def schema_status(self) -> SchemaStatus:
        """Works read-only and on a database that was never migrated (version 0); a
        schema this role may not use is said so (its tables are not missing)."""
        if self.schema:
            exists, usable, role = self._schema_access()
            if exists and not usable:
                raise usage_refused(self.schema, role)
        q = queries("migrate.sql")
        expected = latest_version()
        with self.read() as cur:
            cur.execute(q.current_schema)
            row = cur.fetchone()
            current = (row or {}).get("schema") or ""
            applied = self._applied_versions(cur) or set()
            cur.execute(q.change_triggers)
            row = cur.fetchone()
            triggers = int((row or {}).get("present") or 0)
            tuned = sorted(console_indexes_of(cur))
            cur.execute(tune.INVALID, {"schema": self.schema})
            invalid = [r["name"] for r in cur.fetchall()]
            cur.execute(q.jobs_upkeep)
            upkeep = cur.fetchone() or {}
        applied.discard(0)
        return SchemaStatus(
            backend=self.backend,
            schema=self.schema or current,
            applied_version=max(applied, default=0),
            expected_version=expected,
            pending_versions=[v for v in range(1, expected + 1) if v not in applied],
            change_triggers=triggers == 5,
            push=not self.config.poll_only,
            location=redact(self.dsn),
            channel=self.config.channel,
            console_indexes=tuned,
            invalid_indexes=invalid,
            autovacuum=upkeep.get("autovacuum"),
            jobs_dead_rows=upkeep.get("dead_rows"),
            jobs_vacuumed_at=utc(upkeep.get("vacuumed_at")),
        )

    def check_schema(self) -> SchemaStatus:
        """The schema status, or ``SchemaNotMigrated``/``SchemaTooNew`` when this release
        cannot work on the database as it is."""
        status = self.schema_status()
        check_version(
            self._where(status.schema),
            status.applied_version,
            status.expected_version,
            status.pending_versions,
        )
        return status

    def _schema_versions(self) -> tuple[str, int, int, list[int]]:
        expected = latest_version()
        with self.read() as cur:
            applied = self._applied_versions(cur) or set()
        applied.discard(0)
        pending = [v for v in range(1, expected + 1) if v not in applied]
        return self._where(self.schema), max(applied, default=0), expected, pending

    def _where(self, schema: str) -> str:
        return f'schema "{schema}"' if schema else "the database"

    # --- internals ------------------------------------------------------------------

    def _sql(self, text: str) -> str:
        """A version-table statement with the configured table name filled in."""
        return fill(text, table=identifier(self.config.version_table))

    def _applied_versions(self, cur: Cursor) -> set[int] | None:
        """The applied versions (0 included), or None when there is no version table."""
        q = queries("migrate.sql")
        cur.execute(q.version_table_exists, {"table": self.config.version_table})
        row = cur.fetchone()
        if not row or not row["present"]:
            return None
        cur.execute(self._sql(q.applied_versions))
        return {int(r["version_id"]) for r in cur.fetchall()}

    def _take_migration_lock(self, conn: Connection) -> None:
        """goose's lock, polled (as goose does) up to ``LOCK_WAIT_LIMIT``; the session
        holding it is named to ``on_lock_wait`` once (another migrator, Go or Python)."""
        q = queries("migrate.sql")
        deadline = time.monotonic() + LOCK_WAIT_LIMIT
        told = False
        while True:
            row = conn.execute(q.try_lock, {"key": GOOSE_LOCK_KEY}).fetchone()
            if row and row["acquired"]:
                return
            if not told and self.config.on_lock_wait is not None:
                told = True
                for holder in conn.execute(q.lock_holders, {"key": GOOSE_LOCK_KEY}).fetchall():
                    self.config.on_lock_wait(Blocker(**holder))
            if time.monotonic() >= deadline:
                raise errors.Conflict(
                    f"another migration has held the migration lock for {LOCK_WAIT_LIMIT:.0f}s"
                )
            time.sleep(LOCK_RETRY_INTERVAL)

    def _release_migration_lock(self, conn: Connection) -> None:
        if conn.broken or conn.closed:
            return  # the session is gone, and its lock with it
        conn.execute(queries("migrate.sql").unlock, {"key": GOOSE_LOCK_KEY})

    def _migrate_locked(self, conn: Connection, migrations: tuple[Migration, ...]) -> list[int]:
        q = queries("migrate.sql")
        latest = migrations[-1].version
        with conn.cursor() as cur:
            applied = self._applied_versions(cur)
        if applied and max(applied) > latest:
            raise errors.SchemaTooNew(
                f"the database is at azync schema version {max(applied)}, newer than this "
                f"release knows ({latest}); upgrade qctl"
            )
        if self.schema:
            conn.execute(fill(q.create_schema, schema=identifier(self.schema)))
        if applied is None:
            with conn.transaction():
                conn.execute(self._sql(q.create_version_table))
                conn.execute(self._sql(q.insert_version), {"version": 0})
            applied = {0}
        done: list[int] = []
        for migration in migrations:
            if migration.version in applied:
                continue
            self._apply(conn, migration)
            done.append(migration.version)
        return done

    def _apply(self, conn: Connection, migration: Migration) -> None:
        insert = self._sql(queries("migrate.sql").insert_version)
        try:
            if migration.no_transaction:
                for statement in migration.statements:
                    conn.execute(statement)
                conn.execute(insert, {"version": migration.version})
            else:
                with conn.transaction():
                    for statement in migration.statements:
                        conn.execute(statement)
                    conn.execute(insert, {"version": migration.version})
        except psycopg.OperationalError:
            raise  # connection trouble: mapped to Unavailable by the caller
        except psycopg.Error as exc:
            detail = (exc.diag.message_primary or str(exc)).strip()
            raise errors.StoreError(f"migration {migration.filename} failed: {detail}") from exc
