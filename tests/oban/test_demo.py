"""``qctl demo --system oban``: its stand-in nodes work the demo's jobs on oban-py's
schema and answer Oban's signals as oban-py's producers do."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems.oban.demo import REFRESH, Workload
from tests.conftest import PG_DSN, require_pg


@pytest.fixture
def schema(isolated_home: None) -> Iterator[str]:
    require_pg()
    name = f"qt_demo_oban_{uuid.uuid4().hex[:8]}"
    yield name
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def qctl(schema: str, *args: str) -> Any:
    result = CliRunner().invoke(app, ["--dsn", PG_DSN, "--schema", schema, *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_headless_demo_works_jobs(schema: str) -> None:
    counts = qctl(schema, "demo", "--system", "oban", "--no-tui", "--duration", "4s",
                  "--speed", "4", "--seed", "1", "--yes")  # fmt: skip
    assert counts.get("completed", 0) > 0 and "executing" not in counts


def test_stand_in_nodes_answer_signals(schema: str) -> None:
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
