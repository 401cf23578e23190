"""dispatch's listings stream through ``output.stream_listing``: fetched a page at a
time, they write what one fetch writes, and the cursor is the same."""

from __future__ import annotations

from typing import Any

import pytest

from qctl.cli import output
from tests.dispatch.conftest import Run
from tests.go.harness import Harness


@pytest.fixture(scope="module")
def rows(dispatch: Harness) -> None:
    """Five jobs in one queue, three of them failed into the DLQ."""
    for n in range(5):
        dispatch.call("enqueue", name="s.job", queue="s-q", payload={"n": n}, max_retries=0)
    for job in dispatch.call("dequeue", queues=["s-q"], limit=3)["jobs"]:
        assert dispatch.call("run", id=job["id"], error="boom")["job"]["state"] == "failed"


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
@pytest.mark.parametrize(
    ("command", "fetches"),
    [
        (["jobs", "list", "--queue", "s-q", "-n", "4"], [2, 2]),
        (["dlq", "list", "--queue", "s-q"], [2, 1]),
    ],
)
def test_fetches_write_what_one_fetch_writes(
    rows: None,
    qctl: Run,
    command: list[str],
    fetches: list[int],
    fmt: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole = qctl(*command, "-o", fmt)
    monkeypatch.setattr(output, "STREAM_PAGE", 2)
    fetched: list[int] = []
    real = output.stream_rows

    def counting(pages: Any, *a: Any, **kw: Any) -> int:
        return real((fetched.append(len(p)) or p for p in pages), *a, **kw)

    monkeypatch.setattr(output, "stream_rows", counting)
    streamed = qctl(*command, "-o", fmt)
    assert streamed.exit_code == whole.exit_code == 0, streamed.output
    assert (streamed.stdout, streamed.stderr) == (whole.stdout, whole.stderr)
    assert fetched == fetches
    if command[0] == "jobs":
        assert "next page: --after" in streamed.stderr  # 4 of 5: a full page
