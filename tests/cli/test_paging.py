"""One paging flag across every listing: ``events list``, ``dags list`` and ``workflows
list`` page with ``--after CURSOR`` as ``jobs list`` does, the cursor printed on stderr in
the same ``next page:`` line, on both backends; ``--offset`` is gone."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from qctl_store.types import DAGParams, PublishParams, WorkflowStartParams
from tests.cli.conftest import Run, out_json
from tests.conformance.helpers import wf_task


def _events(st: Any, name: str) -> list[str]:
    for i in range(3):
        st.publish(PublishParams(type=name, payload={"i": i}))
        time.sleep(0.002)
    return ["events", "list", "--type", name]


def _dags(st: Any, name: str) -> list[str]:
    for _ in range(3):
        st.create_dag(DAGParams(name=name, tasks=[wf_task("a", name + "_k")]))
        time.sleep(0.002)
    return ["dags", "list", "--name", name]


def _workflows(st: Any, name: str) -> list[str]:
    for _ in range(3):
        st.start_workflow(WorkflowStartParams(name=name))
        time.sleep(0.002)
    return ["workflows", "list", "--name", name]


LISTINGS: dict[str, Callable[[Any, str], list[str]]] = {
    "events": _events,
    "dags": _dags,
    "workflows": _workflows,
}
COUNTED = {"events": "list_events", "dags": "list_dags", "workflows": "list_workflow_executions"}
"""Each listing's store call that reads the total beside its page."""


def _next(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("next page: --after ")]
    assert len(lines) == 1, stderr
    return lines[0].removeprefix("next page: --after ")


@pytest.mark.parametrize("noun", LISTINGS)
def test_listing_pages_by_cursor(run: Run, st: Any, kind: str, noun: str) -> None:
    command = LISTINGS[noun](st, kind)
    every = [r["id"] for r in out_json(run(*command, "-o", "json"))]
    assert len(every) == 3

    first = run(*command, "--limit", "2", "-o", "json")
    rest = run(*command, "--limit", "2", "--after", _next(first.stderr), "-o", "json")
    assert [r["id"] for r in json.loads(first.stdout) + out_json(rest)] == every
    assert "next page" not in rest.stderr, "a short page is the last"

    table = run(*command, "--limit", "2")
    assert table.exit_code == 0 and "2 shown of 3 matching" in table.stderr
    assert _next(table.stderr) == _next(first.stderr), "one cursor whatever the format"


@pytest.mark.parametrize("noun", LISTINGS)
def test_bad_cursor_and_the_old_offset_are_usage_errors(run: Run, noun: str) -> None:
    bad = run(noun, "list", "--after", "not-a-cursor")
    assert bad.exit_code == 2
    assert "--after: 'not-a-cursor' is not a cursor printed by a qctl listing" in bad.stderr
    gone = run(noun, "list", "--offset", "2")
    assert gone.exit_code == 2 and "--offset" in gone.stderr


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
@pytest.mark.parametrize("noun", LISTINGS)
def test_listing_streams_in_fetches(
    run: Run, st: Any, kind: str, noun: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every listing goes through ``output.stream_listing``: fetched a page at a time
    (here 2 rows), it writes what one fetch writes, stdout and stderr alike; only a
    table's first fetch counts the matches (the others read their page alone)."""
    from qctl.cli import output

    command = [*LISTINGS[noun](st, kind), "-o", fmt]
    whole = run(*command)
    monkeypatch.setattr(output, "STREAM_PAGE", 2)
    fetched: list[int] = []
    real = output.stream_rows

    def counting(pages: Any, *a: Any, **kw: Any) -> int:
        return real((fetched.append(len(p)) or p for p in pages), *a, **kw)

    monkeypatch.setattr(output, "stream_rows", counting)
    totals: list[int] = []
    listing = getattr(type(st), COUNTED[noun])

    def counted(self: Any, *a: Any, **kw: Any) -> Any:
        totals.append(1)
        return listing(self, *a, **kw)

    monkeypatch.setattr(type(st), COUNTED[noun], counted)
    streamed = run(*command)
    assert streamed.exit_code == whole.exit_code == 0, streamed.stderr
    assert (streamed.stdout, streamed.stderr) == (whole.stdout, whole.stderr)
    assert fetched == [2, 1]
    assert len(totals) == (1 if fmt == "table" else 0)
