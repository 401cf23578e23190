"""``qctl demo --system oban``: oban-py's own nodes work the demo's jobs where there is a
Python 3.12 (oban-py's environment: the partner's, ``tests/oban/obanpy_env.py``), else
labelled stand-in nodes do, and answer Oban's signals as oban-py's producers do."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import Result
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems.oban import obanpy
from qctl.systems.oban.demo import QUEUES, REFRESH, Workload
from tests.conftest import PG_DSN, require_pg
from tests.oban import ddl, obanpy_env
from tests.oban.harness import require_obanpy
from tests.oban.test_obanpy_env import fake_python


@pytest.fixture
def schema(isolated_home: None) -> Iterator[str]:
    require_pg()
    name = f"qt_demo_oban_{uuid.uuid4().hex[:8]}"
    yield name
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def no_obanpy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Python 3.12 for oban-py on this machine, as far as the demo can tell."""
    monkeypatch.setenv("QCTL_OBANPY_PYTHON", fake_python(tmp_path, "3.11"))


@pytest.fixture
def obanpy_env_built(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo runs oban-py's environment the partner's tests use (built if missing;
    skips, or fails under ``QCTL_REQUIRE_OBAN=1``, without a Python 3.12)."""
    python = require_obanpy()
    monkeypatch.setattr(obanpy, "demo_venv", lambda: obanpy_env.VENV)
    return python


def invoke(schema: str, *args: str) -> Result:
    result = CliRunner().invoke(app, ["--dsn", PG_DSN, "--schema", schema, *args])
    assert result.exit_code == 0, result.output
    return result


def qctl(schema: str, *args: str) -> Any:
    return json.loads(invoke(schema, *args).stdout)


DEMO = ("demo", "--system", "oban", "--no-tui", "--speed", "4", "--seed", "1", "--yes")


def test_headless_demo_works_jobs_with_stand_ins(schema: str, no_obanpy: None) -> None:
    result = invoke(schema, *DEMO, "--duration", "4s")
    counts = json.loads(result.stdout)
    assert counts.get("completed", 0) > 0 and "executing" not in counts
    assert f"stand-in Oban nodes: {obanpy.MISSING}" in result.stderr
    assert "stand-in nodes running oban-py's SQL" in result.stderr


def test_headless_demo_runs_obanpy_nodes(schema: str, obanpy_env_built: Path) -> None:
    result = invoke(schema, *DEMO, "--duration", "6s")
    assert json.loads(result.stdout).get("completed", 0) > 0
    assert "stand-in" not in result.stderr
    nodes = set(Workload(PG_DSN, schema, python=obanpy_env_built).node_names)
    completed = qctl(schema, "jobs", "list", "--state", "completed", "-o", "json")
    assert completed
    assert {job["attempted_by"][0] for job in completed} <= nodes


def test_obanpy_nodes_show_as_oban_nodes(schema: str, obanpy_env_built: Path) -> None:
    """oban-py's own producers and leader, as qctl reads them."""
    qctl(schema, *DEMO, "--duration", "1s")  # the demo's schema, made by the demo
    workload = Workload(PG_DSN, schema, python=obanpy_env_built, logs=obanpy_env.VENV, lead=True)
    workload.start()
    try:
        expected = {(node, queue) for node in workload.node_names for queue in QUEUES}
        deadline = time.monotonic() + 20
        while True:
            nodes = qctl(schema, "nodes", "list", "-o", "json")
            seen = {(n["node"], n["queue"]) for n in nodes}
            if seen == expected and any(n["leader"] for n in nodes):
                break
            assert time.monotonic() < deadline, nodes
            time.sleep(0.2)
    finally:
        workload.stop()
    assert workload.errors == []


def test_stand_in_nodes_answer_signals(schema: str, no_obanpy: None) -> None:
    qctl(schema, "demo", "--system", "oban", "--no-tui", "--duration", "1s", "--yes")
    workload = Workload(PG_DSN, schema, speed=4, seed=2)
    workload.start()
    try:
        deadline = time.monotonic() + 10
        while len(qctl(schema, "nodes", "list", "-o", "json")) < 6:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        qctl(
            schema,
            "queues",
            "pause",
            "media",
            "--node",
            "qctl-demo-stand-in-2",
            "--yes",
            "-o",
            "json",
        )
        qctl(schema, "queues", "scale", "mailers", "--limit", "1", "--yes", "-o", "json")
        while True:
            nodes = qctl(schema, "nodes", "list", "-o", "json")
            seen = {(n["node"], n["queue"]): n for n in nodes}
            if seen[("qctl-demo-stand-in-2", "media")]["paused"] and all(
                seen[(f"qctl-demo-stand-in-{i}", "mailers")]["local_limit"] == 1 for i in (1, 2)
            ):
                break
            assert time.monotonic() < deadline, nodes
            time.sleep(0.1)
        assert seen[("qctl-demo-stand-in-1", "media")]["paused"] is False
        # each node refreshes its producers as oban-py's refresher does: updated_at moves
        deadline = time.monotonic() + 2 * REFRESH / 4
        while not all(n["updated_at"] > n["started_at"] for n in nodes):
            assert time.monotonic() < deadline, nodes
            time.sleep(0.2)
            nodes = qctl(schema, "nodes", "list", "-o", "json")
    finally:
        workload.stop()
    assert workload.errors == []


def test_a_later_run_works_every_job_of_its_own_schema(schema: str, no_obanpy: None) -> None:
    """On the schema it created the demo's nodes work every job, whoever inserted it:
    what an earlier run left available and an operator's job alike."""
    demo = ["demo", "--system", "oban", "--no-tui", "--duration", "3s", "--speed", "4"]
    qctl(schema, *demo)
    with psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={schema}") as c:
        [job] = ddl.insert(c, "default")
        left = [r[0] for r in c.execute("SELECT id FROM oban_jobs WHERE state = 'available'")]
    qctl(schema, *demo)
    with psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={schema}") as c:
        worked = c.execute("SELECT attempt FROM oban_jobs WHERE id = %s", [job]).fetchone()
        assert worked is not None and worked[0] >= 1
        still = c.execute(
            "SELECT count(*) FROM oban_jobs WHERE id = ANY(%s) AND attempt = 0", [left]
        )
        assert still.fetchone() == (0,)
