"""The schema-version gate: on an azync schema newer or older than this release knows,
every command that touches the database exits 5 naming both versions, and writes
nothing; ``db status`` still reports (its own exit 5) and ``db migrate`` still runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl_store.postgres.migrate import latest_version as pg_latest
from qctl_store.sqlite.migrate import latest_version as sqlite_latest
from tests.conftest import PG_DSN, raw_pg, raw_sqlite

# Reads and writes alike: a read over a schema qctl does not know could misstate rows.
COMMANDS = [
    ["jobs", "list"],
    ["queues", "list"],
    ["jobs", "enqueue", "gate_kind"],
    ["jobs", "retry", "--all-dead", "--yes"],
    ["maintain", "--once"],
    ["vacuum", "all", "--older-than", "1d", "--yes"],
    ["nuke", "--source", "queue", "--yes"],
    ["top"],
]


@pytest.fixture
def database(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> tuple[list[str], Callable[[str], Any], int]:
    """A freshly migrated database: (root options, a raw statement runner, version)."""
    if backend == "postgres":
        schema = request.getfixturevalue("fresh_pg_schema")
        root = ["--dsn", PG_DSN, "--schema", schema]

        def sql(stmt: str) -> Any:
            with raw_pg(schema) as conn:
                cur = conn.execute(stmt)
                return cur.fetchall() if cur.description else None

        latest = pg_latest()
    else:
        path = str(tmp_path / "gate.db")
        root = ["--dsn", f"sqlite:///{path}"]

        def sql(stmt: str) -> Any:
            with raw_sqlite(path) as conn:
                return conn.execute(stmt).fetchall()

        latest = sqlite_latest()
    assert invoke(root, "db", "migrate").exit_code == 0
    return root, sql, latest


def invoke(root: list[str], *args: str) -> Result:
    return CliRunner().invoke(app, [*root, *args])


def assert_gated(root: list[str], sql: Callable[[str], Any], found: int, known: int) -> None:
    for command in COMMANDS:
        res = invoke(root, *command)
        assert res.exit_code == 5, (command, res.stdout, res.stderr)
        assert f"azync schema version {found}" in res.stderr, (command, res.stderr)
        assert f"this release's {known}" in res.stderr, (command, res.stderr)
        assert res.stderr.count("\n") == 1, res.stderr
    assert sql("SELECT COUNT(*) FROM azync_jobs") == [(0,)], "nothing was written"
    assert invoke(root, "db", "status").exit_code == 5


def test_a_newer_schema_is_refused(database: tuple[list[str], Any, int]) -> None:
    root, sql, latest = database
    sql(f"INSERT INTO azync_migrations (version_id, is_applied) VALUES ({latest + 1}, true)")
    assert_gated(root, sql, latest + 1, latest)
    assert invoke(root, "db", "migrate").exit_code == 5


def test_an_older_schema_is_refused(database: tuple[list[str], Any, int]) -> None:
    root, sql, latest = database
    sql(f"DELETE FROM azync_migrations WHERE version_id = {latest}")
    assert_gated(root, sql, latest - 1, latest)
    sql(f"INSERT INTO azync_migrations (version_id, is_applied) VALUES ({latest}, true)")
    assert invoke(root, "jobs", "list").exit_code == 0


def test_a_role_without_usage_on_the_schema_is_told_so(pg_schema: str) -> None:
    """Its tables are invisible to the role, not missing: no "run qctl db migrate" (the
    operator would migrate a database that is current), but the GRANT it needs."""
    import psycopg

    from qctl_store import Config
    from qctl_store.postgres import PostgresStore

    store = PostgresStore(PG_DSN, Config(schema=pg_schema))
    store.migrate()
    store.close()
    role = "qctl_test_no_usage"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}')"
            f" THEN CREATE ROLE {role} LOGIN; END IF; END $$"
        )
    dsn = PG_DSN.replace("postgres@", f"{role}@", 1)
    result = invoke(["--dsn", dsn, "--schema", pg_schema], "jobs", "list")
    assert result.exit_code == 6
    assert result.stderr.splitlines() == [
        f'qctl: error: role "{role}" may not use schema "{pg_schema}" (no USAGE privilege); '
        f'ask for GRANT USAGE ON SCHEMA "{pg_schema}" TO "{role}"'
    ]
