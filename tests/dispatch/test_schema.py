"""dispatch's schema reproduced from its public repository (``schema_6f7dda7.sql``: main
at 6f7dda7, tag v1.5.3) equals what dispatch v0.1.0's own migrator creates for the
versions both have (all seven), and qctl operates a database made either way; a newer
dispatch's versions are read but never written (exit 5)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from tests.conftest import PG_DSN, raw_pg
from tests.go.harness import Harness
from tests.postgres.catalog import catalog_diff, read_catalog

SCHEMA_SQL = Path(__file__).parents[2] / "qctl" / "systems" / "dispatch" / "schema_6f7dda7.sql"


def reproduce(schema: str) -> None:
    """Create ``schema`` as dispatch's migrations at 6f7dda7 leave it."""
    with raw_pg("public") as c:
        c.execute(f'CREATE SCHEMA "{schema}"')
    with raw_pg(schema) as c:
        c.execute(SCHEMA_SQL.read_text())


@pytest.fixture(scope="module")
def reproduced(pg_schema: str) -> Iterator[str]:
    reproduce(pg_schema + "_r")
    yield pg_schema + "_r"
    with raw_pg("public") as c:
        c.execute(f'DROP SCHEMA "{pg_schema}_r" CASCADE')


def versions(schema: str) -> list[tuple[str, str, str]]:
    with raw_pg(schema) as c:
        return [
            tuple(r)
            for r in c.execute(
                'SELECT version, name, "group" FROM grove_migrations ORDER BY version'
            )
        ]


def test_the_reproduction_equals_dispatchs_own_migrator(
    dispatch: Harness, pg_schema: str, reproduced: str
) -> None:
    with raw_pg("public") as c:
        own, ours = read_catalog(c, pg_schema), read_catalog(c, reproduced)
    assert catalog_diff(ours, own) == []
    assert own["indexes"]["idx_dispatch_jobs_dequeue"].startswith("CREATE INDEX")
    assert versions(reproduced) == versions(pg_schema)
    assert len(versions(pg_schema)) == 7


def cli(schema: str, *args: str) -> object:
    return CliRunner().invoke(app, ["--dsn", PG_DSN, "--schema", schema, *args])


def test_qctl_operates_the_reproduced_schema(reproduced: str) -> None:
    status = cli(reproduced, "db", "status", "-o", "json")
    assert status.exit_code == 0, status.output  # type: ignore[attr-defined]
    report = json.loads(status.stdout)  # type: ignore[attr-defined]
    assert report["supported"] is True and "6f7dda7" in report["supported_versions"]
    with raw_pg(reproduced) as c:
        c.execute(
            "INSERT INTO dispatch_jobs (id, name, payload) VALUES"
            " ('job_01aaaaaaaaaaaaaaaaaaaaaaaa', 'r', '{}')"
        )
    cancelled = cli(reproduced, "jobs", "cancel", "job_01aaa", "--yes", "-o", "json")
    assert cancelled.exit_code == 0, cancelled.output  # type: ignore[attr-defined]
    with raw_pg(reproduced) as c:
        state = c.execute("SELECT state FROM dispatch_jobs").fetchone()
    assert state == ("cancelled",)


LEASE = "20260812120000"
"""A newer dispatch's version (add_job_lease_columns, on dispatch's main after 6f7dda7):
qctl knows neither it nor what a write must fence with it."""


@pytest.fixture
def newer(fresh_pg_schema: str) -> str:
    reproduce(fresh_pg_schema)
    with raw_pg(fresh_pg_schema) as c:
        c.execute(
            "ALTER TABLE dispatch_jobs ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0,"
            " ADD COLUMN lease_expires_at TIMESTAMPTZ"
        )
        c.execute(
            'INSERT INTO grove_migrations (version, name, "group") VALUES (%s, %s, %s)',
            (LEASE, "add_job_lease_columns", "dispatch"),
        )
        c.execute(
            "INSERT INTO dispatch_jobs (id, name, payload) VALUES"
            " ('job_01bbbbbbbbbbbbbbbbbbbbbbbb', 'n', '{}')"
        )
    return fresh_pg_schema


def test_a_newer_version_is_read_and_never_written(newer: str) -> None:
    listed = cli(newer, "jobs", "list", "-o", "json")
    assert listed.exit_code == 0, listed.output  # type: ignore[attr-defined]
    assert [j["id"] for j in json.loads(listed.stdout)] == [  # type: ignore[attr-defined]
        "job_01bbbbbbbbbbbbbbbbbbbbbbbb"
    ]
    status = cli(newer, "db", "status", "-o", "json")
    report = json.loads(status.stdout)  # type: ignore[attr-defined]
    assert status.exit_code == 5 and report["unknown_versions"] == [LEASE]
    assert report["capability_fenced_cancel"].startswith("no")
    for args in (
        ("jobs", "cancel", "job_01bbb", "--yes"),
        ("jobs", "cancel", "job_01bbb", "--dry-run"),
        ("dlq", "purge", "--older-than", "1d", "--yes"),
    ):
        refused = cli(newer, *args)
        assert refused.exit_code == 5, (args, refused.output)  # type: ignore[attr-defined]
        assert f"versions qctl does not know: {LEASE}" in refused.output  # type: ignore[attr-defined]
        assert "never writes" in refused.output  # type: ignore[attr-defined]


def test_id_prefix_lookups_walk_the_primary_key(reproduced: str) -> None:
    """A prefix is a range of the primary key's index, never a scan of the table (the
    planner would scan for starts_with or LIKE in a non-C collation)."""
    from qctl.systems.dispatch import reads
    from qctl.systems.dispatch.reads import _TOP

    with raw_pg(reproduced) as c:
        c.execute(
            "INSERT INTO dispatch_jobs (id, name, payload)"
            " SELECT 'job_' || lpad(to_hex(g), 26, '0'), 'p', '' FROM generate_series(1, 20000) g"
        )
        c.execute("ANALYZE dispatch_jobs")
        q = reads.queries("reads.sql")
        for name in ("job_ids_with_prefix", "dlq_ids_with_prefix", "run_ids_with_prefix"):
            plan = "\n".join(
                r[0]
                for r in c.execute(
                    "EXPLAIN " + getattr(q, name),
                    {"prefix": "job_0000000000000000000000ab", "top": _TOP},
                )
            )
            assert "Index" in plan and "Seq Scan" not in plan, (name, plan)
        c.execute("DELETE FROM dispatch_jobs WHERE name = 'p'")
    listed = cli(reproduced, "jobs", "show", "0000000000000000000000ab", "-o", "json")
    assert listed.exit_code == 3  # no such job: 20000 rows are gone again


def test_without_schema_the_sessions_own_is_used(reproduced: str) -> None:
    """No --schema: the schema is the connection's current_schema() (dispatch names its
    tables unqualified), here from the DSN's search_path."""
    dsn = f"{PG_DSN}{'&' if '?' in PG_DSN else '?'}options=-csearch_path%3D{reproduced}"
    status = CliRunner().invoke(app, ["--dsn", dsn, "db", "status", "-o", "json"])
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["schema"] == reproduced


def test_watch_prints_each_new_job_once_late_commits_too(reproduced: str) -> None:
    from qctl.systems.dispatch import reads
    from qctl.systems.dispatch.database import Database

    def enqueue(*ids: str) -> None:
        with raw_pg(reproduced) as c:
            for i in ids:
                c.execute(
                    "INSERT INTO dispatch_jobs (id, name, payload) VALUES (%s, 'w', '')", (i,)
                )

    db = Database(PG_DSN, reproduced)
    try:
        marks = reads.watch_start(db)
        assert reads.changes_since(db, marks) == []
        enqueue("job_7w0000000000000000000002", "job_7w0000000000000000000004")
        first = [c["id"] for c in reads.changes_since(db, marks)]
        assert first == ["job_7w0000000000000000000002", "job_7w0000000000000000000004"]
        # an id made before the last one printed, committed after it was printed
        enqueue("job_7w0000000000000000000003", "job_7w0000000000000000000005")
        second = [c["id"] for c in reads.changes_since(db, marks)]
        assert second == ["job_7w0000000000000000000003", "job_7w0000000000000000000005"]
        assert reads.changes_since(db, marks) == []
        assert reads.changes_since(db, marks) == []
        enqueue("job_7w0000000000000000000006")
        assert [c["kind"] for c in reads.changes_since(db, marks)] == ["job"]
    finally:
        db.close()


def test_the_harness_waits_for_groves_database_wide_migration_lock(
    fresh_pg_schema: str,
) -> None:
    """grove refuses a migration at once while any process holds its advisory lock 1 on
    the database (other test processes migrating other schemas): the harness waits."""
    import threading

    from tests.go.harness import pgx_dsn

    with raw_pg("public") as c:
        c.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
    with psycopg.connect(PG_DSN, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(1)")
        threading.Timer(1.5, lambda: holder.execute("SELECT pg_advisory_unlock(1)")).start()
        h = Harness("dispatchd", pgx_dsn(fresh_pg_schema))
        try:
            h.call("migrate")
        finally:
            h.close()
    assert len(versions(fresh_pg_schema)) == 7
