"""A dispatch schema at a migration version qctl does not know (a newer dispatch): every
writing command refuses with exit 5, naming what qctl knows and what it found, and writes
nothing, while the reads still work; ``db status`` reports it (and exits 5)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from tests.conftest import PG_DSN, raw_pg
from tests.dispatch.conftest import Run, snapshot
from tests.go.harness import Harness, pgx_dsn

NEWER = "20250301090000"


@pytest.fixture(scope="module")
def newer(dispatch: Harness, pg_schema: str) -> dict[str, str]:
    """dispatch's rows, then a grove row of a version dispatch v0.1.0 does not have."""
    job = dispatch.call("enqueue", name="g", queue="gate-q", max_retries=0)["id"]
    dispatch.call("dequeue", queues=["gate-q"], limit=1)
    dispatch.call("run", id=job, error="x")
    pending = dispatch.call("enqueue", name="g", queue="gate-q")["id"]
    with raw_pg(pg_schema) as c:
        entry = c.execute("SELECT id FROM dispatch_dlq").fetchone()[0]
        c.execute(
            'INSERT INTO grove_migrations (version, name, "group") VALUES (%s, %s, %s)',
            (NEWER, "add_lease_columns", "dispatch"),
        )
    return {"failed": job, "pending": pending, "entry": entry}


def test_every_write_refuses_an_unknown_version(
    newer: dict[str, str], pg_schema: str, qctl: Run
) -> None:
    before = snapshot(pg_schema)
    for args in (
        ("jobs", "cancel", newer["pending"], "--yes"),
        ("jobs", "cancel", newer["pending"], "--dry-run"),
        ("jobs", "retry", newer["failed"], "--yes"),
        ("dlq", "replay", newer["entry"], "--yes"),
        ("dlq", "replay", "--all", "--yes"),
        ("dlq", "purge", "--older-than", "1s", "--yes"),
        ("cron", "disable", "anything", "--yes"),
        ("cron", "trigger", "anything", "--yes"),
        ("vacuum", "all", "--older-than", "1s", "--yes"),
    ):
        refused = qctl(*args)
        assert refused.exit_code == 5, (args, refused.output)
        assert f"versions qctl does not know: {NEWER}" in refused.output, args
        assert "20240101120000, 20240101120001" in refused.output, args
    assert snapshot(pg_schema) == before


def test_reads_work_on_an_unknown_version(newer: dict[str, str], qctl: Run) -> None:
    for args in (
        ("jobs", "list"),
        ("jobs", "show", newer["pending"]),
        ("queues", "list"),
        ("dlq", "list"),
        ("dlq", "show", newer["entry"]),
        ("cron", "list"),
        ("workers", "list"),
        ("workflows", "list"),
        ("stats",),
    ):
        read = qctl(*args)
        assert read.exit_code == 0, (args, read.output)


def test_db_status_reports_the_unknown_version(newer: dict[str, str], qctl: Run) -> None:
    status = qctl("db", "status", "-o", "json")
    assert status.exit_code == 5
    report = json.loads(status.stdout)
    assert report["supported"] is False and report["unknown_versions"] == [NEWER]
    assert report["migration_versions"][-1] == NEWER and report["missing_versions"] == []
    assert "dispatch v0.1.0" in report["supported_versions"]
    assert f"versions qctl does not know: {NEWER}" in status.stderr


def test_a_partly_migrated_schema_is_refused(fresh_pg_schema: str) -> None:
    """Versions dispatch v0.1.0 has but the database lacks (an older dispatch, or one
    migrating now) are refused too: the tables may not be what qctl writes."""
    with raw_pg("public") as c:
        c.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
    h = Harness("dispatchd", pgx_dsn(fresh_pg_schema))
    try:
        h.call("migrate")
    finally:
        h.close()
    with raw_pg(fresh_pg_schema) as c:
        c.execute("DELETE FROM grove_migrations WHERE version = '20240101120006'")
    refused = CliRunner().invoke(
        app, ["--dsn", PG_DSN, "--schema", fresh_pg_schema, "jobs", "list"]
    )
    assert refused.exit_code == 5
    assert "versions not applied: 20240101120006" in refused.output
