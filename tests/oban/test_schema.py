"""qctl's reading of Oban's schema: the flavour (oban-py's tables, or Elixir's migration
version in the comment on ``oban_jobs``) named by ``db status``; a version or job state
qctl does not know is read but never written (exit 5); an Elixir schema older than v11
is refused; qctl never migrates Oban's schema."""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import PG_DSN
from tests.oban import ddl
from tests.oban.conftest import Run, data, install


@pytest.fixture
def made(pg_schema: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{pg_schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
        conn.execute(f'SET search_path TO "{pg_schema}"')
        yield conn


@pytest.mark.parametrize(
    ("flavour", "version", "named"),
    [
        ("oban-py", 14, "oban-py"),
        ("elixir", 11, "Elixir Oban v11"),
        ("elixir", 14, "Elixir Oban v14"),
    ],
)
def test_status_names_the_flavour(
    made: psycopg.Connection,
    qctl: Run,
    pg_schema: str,
    flavour: str,
    version: int,
    named: str,
) -> None:
    install(PG_DSN, pg_schema, flavour, version)
    status = data(qctl("db", "status", "-o", "json"))
    assert status["system"] == "oban" and status["supported"] is True
    assert status["flavour"].startswith(named)
    assert status["signal_channel"].startswith(f"{pg_schema}.oban_signal")
    assert ("suspended" in status["job_states"]) == (version >= 14)


def test_an_unknown_version_is_read_but_never_written(
    made: psycopg.Connection,
    qctl: Run,
    pg_schema: str,
) -> None:
    install(PG_DSN, pg_schema, "elixir", 14)
    [id_] = ddl.insert(made, "gated")
    made.execute("COMMENT ON TABLE oban_jobs IS '16'")
    assert [j["id"] for j in data(qctl("jobs", "list", "-o", "json"))] == [id_]
    for flags in (["--yes"], ["--dry-run"]):
        refused = qctl("jobs", "cancel", str(id_), *flags)
        assert refused.exit_code == 5, refused.output
        assert "Elixir Oban v16 is newer" in refused.stderr and "never writes" in refused.stderr
    status = qctl("db", "status", "-o", "json")
    assert status.exit_code == 5 and json.loads(status.stdout)["elixir_version"] == 16
    [(state,)] = made.execute("SELECT state::text FROM oban_jobs").fetchall()
    assert state == "available"


def test_an_unknown_state_is_read_but_never_written(
    made: psycopg.Connection,
    qctl: Run,
    pg_schema: str,
) -> None:
    install(PG_DSN, pg_schema, "oban-py")
    [id_] = ddl.insert(made, "gated")
    made.execute("ALTER TYPE oban_job_state ADD VALUE 'paused'")
    assert data(qctl("jobs", "show", str(id_), "-o", "json"))["state"] == "available"
    refused = qctl("queues", "pause", "gated", "--yes")
    assert refused.exit_code == 5 and "job states qctl does not know: paused" in refused.stderr


def test_older_than_v11_is_refused(
    made: psycopg.Connection,
    qctl: Run,
    pg_schema: str,
) -> None:
    install(PG_DSN, pg_schema, "elixir", 11)
    made.execute("DROP TABLE oban_peers")
    made.execute("COMMENT ON TABLE oban_jobs IS '10'")
    refused = qctl("jobs", "list")
    assert refused.exit_code == 5 and "Elixir Oban v10 is older than v11" in refused.stderr


def test_never_migrated(made: psycopg.Connection, qctl: Run, pg_schema: str) -> None:
    install(PG_DSN, pg_schema, "oban-py")
    for flags in ([], ["--dry-run"]):
        refused = qctl("db", "migrate", *flags)
        assert refused.exit_code == 2 and "never migrates an Oban database" in refused.stderr
