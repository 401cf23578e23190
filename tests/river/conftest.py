"""Fixtures of the River tests: River's own Go code (``tests/go`` harness ``riverd``,
River v0.51.2 on riverpgxv5) migrates a schema per module, inserts jobs and, once a test
starts its working client, fetches and works them; qctl reads and operates them
in-process."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app as qctl_app
from tests.conftest import PG_DSN
from tests.go.harness import Harness, pgx_dsn

Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: None) -> None:
    """Every test here runs in ``isolated_home`` (tests/conftest.py)."""


@pytest.fixture(scope="module")
def river(pg_schema: str) -> Iterator[Harness]:
    """A River application on this module's schema, which River's migrator created."""
    h = Harness("riverd", pgx_dsn(pg_schema))
    h.call("migrate")
    yield h
    h.close()


@pytest.fixture
def qctl(pg_schema: str) -> Run:
    """``qctl("jobs", "list", "-o", "json")`` on this module's schema."""

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(qctl_app, ["--dsn", PG_DSN, "--schema", pg_schema, *args])

    return invoke


def data(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.output)
    return json.loads(result.stdout)


def until(check: Callable[[], bool], seconds: float = 15) -> None:
    """Wait for River's clients to get somewhere ``check`` sees."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "River did not get there in time"
        time.sleep(0.05)


def job(h: Harness, id_: int | str) -> dict[str, Any]:
    """The job as River's client reads it (``JobGet``)."""
    row: dict[str, Any] = h.call("get", id=int(id_))["job"]
    return row


def runs(h: Harness) -> dict[int, int]:
    """Attempts River's worker started, per job id."""
    return {int(k): v for k, v in h.call("runs")["runs"].items()}
