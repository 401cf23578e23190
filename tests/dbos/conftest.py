"""Fixtures of the DBOS tests: a real DBOS application (``app.py``) per backend and
module, on its own PostgreSQL database or SQLite file, and qctl invoked in-process."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app as qctl_app
from tests.conftest import require_pg
from tests.dbos.fixtures import App, pg_database

Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: None) -> None:
    """Every test here runs in ``isolated_home`` (tests/conftest.py)."""


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def dbos_app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[App]:
    """The test application, launched once per module and backend."""
    if request.param == "postgres":
        require_pg()
        with pg_database() as url:
            application = App(url)
            try:
                yield application
            finally:
                application.stop()
    else:
        path = tmp_path_factory.mktemp("dbos") / "system.sqlite"
        application = App(f"sqlite:///{path}")
        try:
            yield application
        finally:
            application.stop()


@pytest.fixture
def run(dbos_app: App) -> Run:
    """``run("workflows", "list", root=[...])``: qctl on the application's database."""

    def invoke(*args: str, input: str | None = None, root: list[str] | None = None) -> Result:
        return CliRunner().invoke(
            qctl_app, ["--dsn", dbos_app.url, *(root or []), *args], input=input
        )

    return invoke


def data(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.output)
    return json.loads(result.stdout)
