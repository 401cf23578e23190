"""Fixtures of the dispatch tests: dispatch's own Go code (``tests/go`` harness
``dispatchd``, dispatch v0.1.0) migrates a schema per module and writes its rows; qctl
reads and operates them in-process."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app as qctl_app
from tests.conftest import PG_DSN, raw_pg
from tests.go.harness import Harness, pgx_dsn

Run = Callable[..., Result]

TABLES = (
    "dispatch_jobs",
    "dispatch_dlq",
    "dispatch_cron_entries",
    "dispatch_workers",
    "dispatch_workflow_runs",
    "dispatch_events",
    "grove_migrations",
)


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: None) -> None:
    """Every test here runs in ``isolated_home`` (tests/conftest.py)."""


@pytest.fixture(scope="module")
def dispatch(pg_schema: str) -> Iterator[Harness]:
    """A dispatch application (producer and worker) on this module's schema, which its
    own migrator created."""
    h = Harness("dispatchd", pgx_dsn(pg_schema))
    h.call("migrate")
    yield h
    h.close()


@pytest.fixture
def qctl(pg_schema: str) -> Run:
    """``qctl("jobs", "list", "-o", "json")`` on this module's schema."""

    def invoke(*args: str, input: str | None = None, root: tuple[str, ...] = ()) -> Result:
        return CliRunner().invoke(
            qctl_app, ["--dsn", PG_DSN, "--schema", pg_schema, *root, *args], input=input
        )

    return invoke


def data(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.output)
    return json.loads(result.stdout)


def snapshot(schema: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of dispatch's tables: what a refused or dry-run command must leave."""
    with raw_pg(schema) as c:
        return {
            t: [tuple(r) for r in c.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()]
            for t in TABLES
        }


def row(schema: str, table: str, id_: str) -> dict[str, Any]:
    with raw_pg(schema) as c:
        cur = c.execute(f"SELECT * FROM {table} WHERE id = %s", (id_,))
        values = cur.fetchone()
        assert values is not None, (table, id_)
        return {d.name: v for d, v in zip(cur.description or [], values, strict=True)}
