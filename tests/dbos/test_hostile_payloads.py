"""Hostile payloads stored in a DBOS system database: ``workflows show`` stays bounded in
time and output, exits 0, and prints standard JSON."""

from __future__ import annotations

import base64
import json
import math
import pickle
import sqlite3
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


def show(path: Path, wf_id: str, *options: str) -> str:
    """``workflows show``'s stdout (exit 0 asserted). A payload that defeats the decoder's
    budgets hangs here, and the test's timeout (well above a loaded machine's seconds) fails
    it: a wall-clock assert would fail on load instead."""
    result = CliRunner().invoke(
        qctl_app, ["--dsn", f"sqlite:///{path}", "workflows", "show", wf_id, *options]
    )
    assert result.exit_code == 0, (result.exit_code, result.output[-2000:])
    return result.stdout


def strict_json(text: str) -> Any:
    """JSON as a strict parser reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not standard JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.timeout(60)
def test_huge_integers_render_bounded(system_db: Path) -> None:
    store(system_db, "bigint", pickled(10**5000), pickled(ValueError(7**6000)), "py_pickle")
    table = show(system_db, "bigint")
    assert len(table) < 20_000
    assert "(5001 digits)" in table and "(5071 digits)" in table
    value = strict_json(show(system_db, "bigint", "-o", "json"))
    assert value["output"]["value"] == {"$int": "10000000000000000000... (5001 digits)"}
    assert value["error"]["value"]["args"] == [{"$int": "38747178686649664520... (5071 digits)"}]


def test_nan_and_infinity_print_standard_json(system_db: Path) -> None:
    store(system_db, "nan", pickled([math.nan, math.inf, -math.inf, 1.5]), None, "py_pickle")
    store(system_db, "nan-json", "[NaN, Infinity, -Infinity, 1.5]", None, "portable_json")
    for wf_id in ("nan", "nan-json"):
        for output in ("json", "jsonl"):
            value = strict_json(show(system_db, wf_id, "-o", output))
            assert value["output"]["value"] == ["NaN", "Infinity", "-Infinity", 1.5]


def shared_lists(levels: int = 40) -> bytes:
    """``a = [a, a]`` nested ``levels`` times: 2**levels paths through a few hundred
    bytes (the pickle memoises each list once)."""
    value: list[Any] = []
    for _ in range(levels):
        value = [value, value]
    return pickle.dumps(value)


def tuple_dag_key(levels: int = 40) -> bytes:
    """A dict keyed by ``t = (t, t)`` nested ``levels`` times: ``hash`` of it walks every
    path. Built as opcodes (building the dict here would hash it)."""
    key: tuple[Any, ...] = ()
    for _ in range(levels):
        key = (key, key)
    body = pickle.dumps(key, protocol=2)[2:-1]  # no PROTO, no STOP; memo from 0
    return b"\x80\x02}" + body + b"K\x01s."  # EMPTY_DICT, key, BININT1 1, SETITEM


DEEP = 500_000


def deep_tuple() -> bytes:
    return b")" + b"\x85" * DEEP  # EMPTY_TUPLE, then TUPLE1 wraps it DEEP times


HOSTILE_PICKLES = {
    "shared lists": shared_lists(),
    "tuple DAG as a dict key": tuple_dag_key(),
    "deep tuple as a dict key": b"\x80\x02}" + deep_tuple() + b"K\x01s.",
    "deep tuple in a frozenset": b"\x80\x04(" + deep_tuple() + b"\x91.",  # MARK .. FROZENSET
    "deep tuple in a set": b"\x80\x04\x8f(" + deep_tuple() + b"\x90.",  # EMPTY_SET ADDITEMS
    "100,000-deep lists": b"\x80\x02" + b"]" * 100_000 + b"a" * 99_999 + b".",
    "a 100 KB string 300,000 times": pickle.dumps(["x" * 100_000] * 300_000),
}
HOSTILE_JSON = {"100,000-deep portable JSON": "[" * 100_000 + "]" * 100_000}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", [*HOSTILE_PICKLES, *HOSTILE_JSON])
def test_hostile_payloads_render_bounded(system_db: Path, case: str) -> None:
    """Each finishes in seconds with a bounded output, in a table and in JSON, as a
    workflow's output and as its error."""
    if case in HOSTILE_PICKLES:
        stored, serialization = base64.b64encode(HOSTILE_PICKLES[case]).decode(), "py_pickle"
    else:
        stored, serialization = HOSTILE_JSON[case], "portable_json"
    wf_id = case.replace(" ", "-")
    store(system_db, wf_id, stored, stored, serialization)
    table = show(system_db, wf_id)
    assert len(table) < 100_000, len(table)
    assert "undecodable" not in table
    text = show(system_db, wf_id, "-o", "json")
    assert len(text) < 12 * 1024 * 1024, len(text)
    strict_json(text)


def test_the_dashboard_opens_hostile_details(system_db: Path) -> None:
    """The overview (its latest errors) and each workflow's detail draw promptly."""
    from types import SimpleNamespace

    from textual.widgets import DataTable

    from tests.dbos.test_top import cells, dashboard, tab, text
    from tests.tui.helpers import until

    cases = {"dash-bigint": pickled(ValueError(7**6000))}
    for case in ("shared lists", "tuple DAG as a dict key", "deep tuple as a dict key"):
        cases["dash-" + case.replace(" ", "-")] = base64.b64encode(HOSTILE_PICKLES[case]).decode()
    for wf_id, stored in cases.items():
        store(system_db, wf_id, stored, stored, "py_pickle")

    async def scenario(app: Any, pilot: Any) -> None:
        await tab(app, pilot, "2")
        await until(pilot, lambda: set(cases) <= set(cells(app, "dbos-workflows")), 15)
        for wf_id in cases:
            table = app.screen.query_one("#dbos-workflows", DataTable)
            table.focus()
            table.move_cursor(row=list(cells(app, "dbos-workflows")).index(wf_id))
            await pilot.press("enter")
            await until(pilot, lambda w=wf_id: w in text(app, "dbos-wf-text"), 10)
            if wf_id == "dash-bigint":
                assert "(5071 digits)" in text(app, "dbos-wf-text")
            await pilot.press("escape")

    dashboard(SimpleNamespace(url=f"sqlite:///{system_db}"), scenario)  # type: ignore[arg-type]
