"""Fixtures for the command-line tests: the module's database as root options, and a
runner that invokes ``qctl`` in-process through Typer's CliRunner."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl_store.types import DequeueParams, EnqueueParams, Job, Source
from tests.conftest import PG_DSN, StoreFactory

Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def _isolated_home(isolated_home: None) -> None:
    """Every test here runs in ``isolated_home`` (tests/conftest.py)."""


@pytest.fixture(scope="module")
def db_args(module_db: tuple[str, str, Path]) -> list[str]:
    """Root options pointing qctl at this module's database."""
    backend, schema, path = module_db
    if backend == "postgres":
        return ["--dsn", PG_DSN, "--schema", schema]
    return ["--dsn", f"sqlite:///{path}"]


@pytest.fixture
def run(db_args: list[str]) -> Run:
    """``run("jobs", "list", input=None, root=[...])``: invoke qctl on the module's DB."""

    def invoke(*args: str, input: str | None = None, root: list[str] | None = None) -> Result:
        return CliRunner().invoke(app, [*db_args, *(root or []), *args], input=input)

    return invoke


@pytest.fixture
def tty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend stdin is a terminal, so destructive verbs ask instead of refusing."""
    monkeypatch.setattr("qctl.cli.common.stdin_is_tty", lambda: True)


@pytest.fixture
def kind() -> str:
    """A kind no other test uses (tests share the module's database)."""
    return f"k_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def st(store_factory: StoreFactory) -> Iterator[Any]:
    """A store on the module's database, to arrange and check state."""
    yield store_factory()


def enqueue(st: Any, kind: str, n: int = 1, **kw: Any) -> list[uuid.UUID]:
    ids = []
    for _ in range(n):
        p = EnqueueParams(kind=kind, **kw)
        st.enqueue(p)
        ids.append(p.id)
    return ids


def make_dead(st: Any, kind: str, n: int = 1, error: str = "boom") -> list[uuid.UUID]:
    """Enqueue ``n`` jobs of ``kind`` and kill them with ``error``."""
    enqueue(st, kind, n)
    jobs: list[Job] = st.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=n))
    for job in jobs:
        st.dead(job.id, job.lease_token, error)
    return [j.id for j in jobs]


def out_json(result: Result) -> Any:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)
