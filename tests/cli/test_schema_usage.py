"""A role without USAGE on a system's schema: ``db status`` (and a read) on every system
with a schema says the GRANT it needs, never "not migrated" or "table missing"."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from tests.conftest import PG_DSN, require_pg
from tests.dbos.fixtures import DBOS_CLI
from tests.hopper.conftest import install as hopper_install

ROLE = "qctl_test_no_usage"
ROOT = Path(__file__).parents[2]


def _azync(schema: str) -> None:
    store = PostgresStore(PG_DSN, Config(schema=schema))
    store.migrate()
    store.close()


def _dispatch(schema: str) -> None:
    sql = (ROOT / "qctl" / "systems" / "dispatch" / "schema_6f7dda7.sql").read_text()
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.execute(f'SET search_path = "{schema}"')
        conn.execute(sql)  # type: ignore[arg-type]  # a script, no parameters


def _dbos(schema: str) -> None:
    subprocess.run(
        [str(DBOS_CLI), "migrate", "--sys-db-url", PG_DSN, "--schema", schema],
        check=True,
        capture_output=True,
        timeout=120,
    )


INSTALL: dict[str, Callable[[str], None]] = {
    "azync": _azync,
    "dispatch": _dispatch,
    "hopper": hopper_install,
    "dbos": _dbos,
}


@pytest.fixture
def no_usage_role() -> Iterator[str]:
    require_pg()
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}')"
            f" THEN CREATE ROLE {ROLE} LOGIN; END IF; END $$"
        )
    yield PG_DSN.replace("postgres@", f"{ROLE}@", 1)


@pytest.mark.parametrize("system", sorted(INSTALL))
def test_db_status_names_the_grant(system: str, fresh_pg_schema: str, no_usage_role: str) -> None:
    INSTALL[system](fresh_pg_schema)
    root = ["--dsn", no_usage_role, "--schema", fresh_pg_schema, "--system", system]
    grant = (
        f'qctl: error: role "{ROLE}" may not use schema "{fresh_pg_schema}" (no USAGE privilege); '
        f'ask for GRANT USAGE ON SCHEMA "{fresh_pg_schema}" TO "{ROLE}"'
    )
    for command in (["db", "status"], ["db", "status", "-o", "json"]):
        result = CliRunner().invoke(app, [*root, *command])
        assert (result.exit_code, result.stderr.splitlines()) == (6, [grant]), result.output
        assert result.stdout == ""
    # The superuser sees the same schema as it is (the test's setup is sound).
    ok = CliRunner().invoke(app, ["--dsn", PG_DSN, *root[2:], "db", "status"])
    assert ok.exit_code == 0, ok.output
