"""Fixtures for the command-line tests: the module's database as root options, and a
runner that invokes ``qctl`` in-process through Typer's CliRunner."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl_store.sqlite.rows import DIALECT as SQLITE
from qctl_store.types import DequeueParams, EnqueueParams, Job, Source
from tests.conftest import PG_DSN, StoreFactory, raw_pg, raw_sqlite

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


def dead_out_of_order(st: Any, module_db: tuple[str, str, Path], kind: str) -> list[uuid.UUID]:
    """Seven dead jobs of ``kind`` that failed in an order other than their enqueue
    order, two at one instant and two without a failure time (as azync's
    ``resolveUncertain`` leaves them); their ids newest failure first, NULLs (after
    every time) leading and ties by id ascending: ``jobs list --state dead``'s order."""
    e = make_dead(st, kind, 7)  # e[0] enqueued first
    base = datetime.now(UTC) - timedelta(hours=1)
    t = [base + timedelta(minutes=m) for m in range(5)]
    failed = {e[3]: t[0], e[5]: t[2], e[1]: t[2], e[6]: t[3], e[2]: t[4], e[0]: None, e[4]: None}
    backend, schema, path = module_db
    if backend == "postgres":
        with raw_pg(schema) as c:
            for id, at in failed.items():
                c.execute("UPDATE azync_jobs SET failed_at = %s WHERE id = %s", (at, id))
    else:
        with raw_sqlite(str(path)) as c:
            for id, at in failed.items():
                args = (SQLITE.instant(at), SQLITE.arg_id(id, "id"))
                c.execute("UPDATE azync_jobs SET failed_at = ? WHERE id = ?", args)
    return [*sorted([e[0], e[4]]), e[2], e[6], *sorted([e[1], e[5]]), e[3]]
