"""Hostile payloads stored in a DBOS system database: ``workflows show`` stays bounded in
time and output, exits 0, and prints standard JSON."""

from __future__ import annotations

import base64
import json
import math
import pickle
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qctl.cli.main import app as qctl_app
from tests.dbos.fixtures import make_sqlite_system_db


@pytest.fixture(scope="module")
def system_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sqlite_system_db(tmp_path_factory.mktemp("hostile") / "dbos.sqlite")


def store(
    path: Path, wf_id: str, output: str | None, error: str | None, serialization: str
) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO workflow_status (workflow_uuid, status, name, output, error,"
            " serialization) VALUES (?, ?, 'hostile', ?, ?, ?)",
            (wf_id, "ERROR" if error else "SUCCESS", output, error, serialization),
        )


def pickled(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode()


def show(path: Path, wf_id: str, *options: str) -> tuple[str, float]:
    """``workflows show`` (exit 0 asserted), its stdout and its seconds."""
    start = time.monotonic()
    result = CliRunner().invoke(
        qctl_app, ["--dsn", f"sqlite:///{path}", "workflows", "show", wf_id, *options]
    )
    took = time.monotonic() - start
    assert result.exit_code == 0, (result.exit_code, result.output[-2000:])
    return result.stdout, took


def strict_json(text: str) -> Any:
    """JSON as a strict parser reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not standard JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_huge_integers_render_bounded(system_db: Path) -> None:
    store(system_db, "bigint", pickled(10**5000), pickled(ValueError(7**6000)), "py_pickle")
    table, took = show(system_db, "bigint")
    assert took < 5 and len(table) < 20_000
    assert "(5001 digits)" in table and "(5071 digits)" in table
    value = strict_json(show(system_db, "bigint", "-o", "json")[0])
    assert value["output"]["value"] == {"$int": "10000000000000000000... (5001 digits)"}
    assert value["error"]["value"]["args"] == [{"$int": "38747178686649664520... (5071 digits)"}]


def test_nan_and_infinity_print_standard_json(system_db: Path) -> None:
    store(system_db, "nan", pickled([math.nan, math.inf, -math.inf, 1.5]), None, "py_pickle")
    store(system_db, "nan-json", "[NaN, Infinity, -Infinity, 1.5]", None, "portable_json")
    for wf_id in ("nan", "nan-json"):
        for output in ("json", "jsonl"):
            value = strict_json(show(system_db, wf_id, "-o", output)[0])
            assert value["output"]["value"] == ["NaN", "Infinity", "-Infinity", 1.5]
