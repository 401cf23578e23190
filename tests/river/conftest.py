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


def check_contains_filters(h: Harness, qctl: Run, postgres: bool) -> None:
    """``--args`` and ``--metadata`` select the jobs whose columns contain the object
    given, on ``jobs list`` and a bulk verb's selection alike; PostgreSQL's @> also
    contains a nested value in part, SQLite compares a nested value whole."""
    meta = {"tenant": "acme", "n": 3, "deep": {"x": [1, 2]}}
    [acme] = h.call("insert", queue="contained", note="acme-1", metadata=meta)["ids"]
    [other] = h.call("insert", queue="contained", note="other", metadata={"tenant": "o", "n": 3})[
        "ids"
    ]
    [plain] = h.call("insert", queue="contained", note="acme-1")["ids"]

    def ids(*args: str) -> list[int]:
        rows = data(qctl("jobs", "list", "--queue", "contained", *args, "-o", "json"))
        return sorted(j["id"] for j in rows)

    assert ids("--args", '{"note": "acme-1"}') == sorted([acme, plain])
    assert ids("--args", "note=acme-1", "--metadata", '{"tenant": "acme"}') == [acme]
    assert ids("--metadata", '{"n": 3}') == sorted([acme, other])
    assert ids("--metadata", '{"n": 3.0, "tenant": "o"}') == [other]
    assert ids("--metadata", '{"n": "3"}') == []  # a string is not the number
    assert ids("--metadata", '{"deep": {"x": [1, 2]}}') == [acme]
    assert ids("--metadata", '{"deep": {"x": [1]}}') == ([acme] if postgres else [])
    assert ids("--metadata", '{"missing": null}') == []
    plan = data(
        qctl("jobs", "cancel", "--queue", "contained", "--args", '{"note": "acme-1"}',
             "--metadata", "tenant=acme", "--dry-run", "-o", "json")
    )  # fmt: skip
    assert [int(i) for i in plan["ids"]] == [acme], plan
    assert job(h, acme)["state"] == "available"  # a dry run
    for bad in (["--args", "[1]"], ["--metadata", "{nope"], ["--args", "x"]):
        result = qctl("jobs", "list", *bad)
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, bad
        result = qctl("jobs", "delete", *bad, "--dry-run")
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, bad


def check_finalized_order(h: Harness, qctl: Run) -> None:
    """Finalized states alone list newest finalized first, as River UI lists them, paged
    on (finalized_at, id), a page's cursor or a job id alike; other listings by id."""
    first, second, third = h.call("insert", queue="finalized", n=3)["ids"]
    for id_ in (third, first, second):
        h.call("cancel", id=id_)
    [live] = h.call("insert", queue="finalized")["ids"]

    def ids(*args: str) -> list[int]:
        rows = data(qctl("jobs", "list", "--queue", "finalized", *args, "-o", "json"))
        return [j["id"] for j in rows]

    assert ids("--state", "cancelled") == [second, first, third]
    assert ids("--state", "cancelled", "--state", "completed") == [second, first, third]
    assert ids() == [live, third, second, first]
    assert ids("--state", "cancelled", "--state", "available") == [live, third, second, first]
    page = qctl("jobs", "list", "--queue", "finalized", "--state", "cancelled", "-n", "1")
    cursor = page.stderr.split("--after ")[1].split()[0]
    assert ids("--state", "cancelled", "--after", cursor) == [first, third]
    assert ids("--state", "cancelled", "--after", str(first)) == [third]
    for bad in ("x,1", "2026-01-01T00:00:00,1", str(live)):
        result = qctl(
            "jobs", "list", "--queue", "finalized", "--state", "cancelled", "--after", bad
        )
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, bad
