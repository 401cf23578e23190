"""Fixtures of the Oban tests: an Oban schema per module in each flavour (``schemas``:
oban-py's own install, Elixir's migrations), rows written by the tests' Oban-shaped
statements (``ddl``) or a real oban-py node (``harness``), qctl run in-process."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app as qctl_app
from tests.conftest import PG_DSN
from tests.oban import schemas

Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: None) -> None:
    """Every test here runs in ``isolated_home`` (tests/conftest.py)."""


@pytest.fixture(scope="module", params=["oban-py", "elixir"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def oban(pg_schema: str, flavour: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection in this module's schema, Oban's tables made in it by
    oban-py's own install or Elixir's migrations (``tests/oban/schemas.py``)."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{pg_schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
        install(PG_DSN, pg_schema, flavour)
        conn.execute(f'SET search_path TO "{pg_schema}"')
        yield conn


def install(dsn: str, schema: str, flavour: str, version: int = schemas.ELIXIR_LATEST) -> None:
    if flavour == "oban-py":
        schemas.install_obanpy(dsn, schema)
    else:
        schemas.install_elixir(dsn, schema, version)


@pytest.fixture
def qctl(pg_schema: str) -> Run:
    """``qctl("jobs", "list", "-o", "json")`` on this module's schema."""

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(qctl_app, ["--dsn", PG_DSN, "--schema", pg_schema, *args])

    return invoke


def data(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.output)
    return json.loads(result.stdout)
