"""Payloads larger than the decoder reads (``payload.MAX_PAYLOAD``, 4 MiB) written by a
real DBOS application, on PostgreSQL and SQLite: ``workflows show`` shows a cut prefix
with the stored size, and ``--raw`` hands the stored text over byte for byte."""

from __future__ import annotations

import base64
import json
import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest

from qctl.systems.dbos import payload
from qctl.systems.dbos.cli import workflows as workflows_cli
from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App
from tests.dbos.test_live import finished, rows

ORDER = "o" * (5 * 1024 * 1024)  # pickled, well over MAX_PAYLOAD


@pytest.fixture(scope="module")
def big(dbos_app: App) -> str:
    """A checkout whose input, output, third step and event all hold ``ORDER``."""
    return dbos_app.enqueue("checkout", ORDER, 3)


def test_show_cuts_what_it_cannot_read_whole(run: Run, big: str) -> None:
    wf = finished(run, big)
    for field in ("input", "output"):
        value = wf[field]["value"]
        assert value["$class"] == "cut", (field, str(value)[:200])
        stored, decoded = value["kwargs"]["stored_bytes"], value["kwargs"]["decoded_bytes"]
        assert stored > len(ORDER) and decoded == payload.MAX_PAYLOAD
        # the prefix decoded as data: the order string, up to where the cut splits it
        assert "o" * 100_000 in json.dumps(value["kwargs"]["value"])
    assert wf["output"]["value"]["kwargs"]["value"]["order"].startswith("ooooo")
    assert wf["steps"][2]["output"]["value"]["$class"] == "cut"
    assert wf["events"][0]["value"]["value"]["$class"] == "cut"
    table = run("workflows", "show", big)
    assert table.exit_code == 0, table.output[-500:]
    assert "undecodable" not in table.stdout
    assert table.stdout.count("cut(stored_bytes=") >= 3  # input, output, the ship step


def test_raw_writes_the_stored_text_exactly(
    run: Run, dbos_app: App, big: str, tmp_path: Path
) -> None:
    finished(run, big)
    stored = rows(
        dbos_app,
        "SELECT coalesce(wo.output, ws.output) AS v FROM {t}workflow_status ws"
        " LEFT JOIN {t}workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid"
        " WHERE ws.workflow_uuid = %s",
        big,
    )[0]["v"]
    target = tmp_path / "output.b64"
    wrote = data(
        run("workflows", "show", big, "--raw", "output", "--raw-to", str(target), "-o", "json")
    )
    assert wrote == {
        "workflow_id": big,
        "field": "output",
        "path": str(target),
        "bytes": len(stored),
    }
    assert target.read_bytes() == stored.encode()
    # the test's own value, read back the way DBOS reads it
    assert pickle.loads(base64.b64decode(target.read_bytes()))["order"] == ORDER
    piped = run("workflows", "show", big, "--raw", "input")
    assert piped.exit_code == 0
    assert pickle.loads(base64.b64decode(piped.stdout_bytes))["args"][0] == ORDER
    step = run("workflows", "show", big, "--raw", "step:3:output")
    assert pickle.loads(base64.b64decode(step.stdout_bytes)) == f"shipped {ORDER}"
    event = run("workflows", "show", big, "--raw", "event:progress")
    assert pickle.loads(base64.b64decode(event.stdout_bytes))["order"] == ORDER


def test_raw_refusals(run: Run, big: str, monkeypatch: pytest.MonkeyPatch) -> None:
    finished(run, big)
    for args, code, words in [
        (["--raw", "outputs"], 2, "is not a stored payload"),
        (["--raw", "step:x:output"], 2, "'x' is not a number"),
        (["--raw", "step:99:output"], 3, "has no step:99:output"),
        (["--raw", "event:nope"], 3, "has no event:nope"),
        (["--raw", "error"], 3, "error is NULL"),
        (["--raw-to", "x.bin"], 2, "give --raw FIELD too"),
    ]:
        result = run("workflows", "show", big, *args)
        assert result.exit_code == code, (args, result.output)
        assert words in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1
    terminal = SimpleNamespace(stdout=SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr(workflows_cli, "sys", terminal)
    result = run("workflows", "show", big, "--raw", "output")
    assert result.exit_code == 2 and "not written to a terminal" in result.output
    assert not result.stdout_bytes.startswith(b"gAS")  # nothing of the value written


def test_list_reads_a_prefix_of_each_output(run: Run, big: str) -> None:
    shown = finished(run, big)["output"]["value"]["kwargs"]
    [listed] = data(run("workflows", "list", "--prefix", big, "-o", "json"))
    cut = listed["output"]["value"]
    assert cut["$class"] == "cut" and cut["kwargs"]["decoded_bytes"] < 16_384
    # the size from the stored length: base64 padding unseen, up to 2 over
    assert 0 <= cut["kwargs"]["stored_bytes"] - shown["stored_bytes"] <= 2
    assert cut["kwargs"]["value"]["order"].startswith("o" * 10_000)
