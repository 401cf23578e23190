"""Fixtures of the hopper tests. The Go module proxy refuses github.com/parallelworks/
hopper, so no hopper Go process runs here: each module's schema is written by
``qctl.systems.hopper.standin.install`` (hoppermigrate's migrations 001..008, reproduced
in the package's ``schema_5fd71c6.sql``), and rows are made by ``worker.Worker``, the
package's stand-in that runs hopper's own SQL (its ``hopper_insert`` producer function,
and its claim, finalize, client and workflow statements transcribed from
``driver/internal/pgsql``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app as qctl_app
from qctl.systems.hopper import standin
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.worker import Worker

Run = Callable[..., Result]

TABLES = {
    "hopper_jobs": "id",
    "hopper_job_history": "id",
    "hopper_queues": "name",
    "hopper_clients": "id",
    "hopper_batches": "id",
    "hopper_job_deps": "job_id, depends_on",
    "hopper_schema": "version",
}


def install(schema: str, upto: int = 8) -> None:
    """hopper's schema at version ``upto`` in ``schema``."""
    with raw_pg(schema) as conn:
        standin.install(conn, schema, upto)


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: None) -> None:
    """Every test here runs in ``isolated_home`` (tests/conftest.py)."""


@pytest.fixture(scope="module")
def hopper(pg_schema: str) -> Iterator[Worker]:
    """hopper's schema (version 8) in this module's schema, and the stand-in client."""
    install(pg_schema)
    worker = Worker(pg_schema)
    yield worker
    worker.close()


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
    """Every row of hopper's tables: what a refused or dry-run command must leave."""
    with raw_pg(schema) as c:
        return {
            t: [tuple(r) for r in c.execute(f"SELECT * FROM {t} ORDER BY {key}").fetchall()]
            for t, key in TABLES.items()
        }


def job_row(schema: str, job_id: Any) -> tuple[str, dict[str, Any]] | None:
    """``("live" | "history", row)`` of a job, or None."""
    with raw_pg(schema) as c:
        for where, table in (("live", "hopper_jobs"), ("history", "hopper_job_history")):
            cur = c.execute(f"SELECT * FROM {table} WHERE id = %s", (str(job_id),))
            values = cur.fetchone()
            if values is not None:
                return where, {
                    d.name: v for d, v in zip(cur.description or [], values, strict=True)
                }
    return None
