"""``jobs list`` writes its rows a fetch at a time (memory holds one fetch, whatever
--limit), the same bytes as one fetch gives, and caps --limit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qctl.cli import output
from tests.cli.conftest import Run, enqueue


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
def test_fetches_of_a_few_rows_write_what_one_fetch_writes(
    run: Run, st: Any, kind: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    enqueue(st, kind, 23)
    args = ["jobs", "list", "--kind", kind, "--state", "pending", "-n", "20", "-o", fmt]
    whole = run(*args)
    monkeypatch.setattr(output, "STREAM_PAGE", 6)
    fetched: list[int] = []
    search = st.search_jobs

    def counted(*a: Any, **kw: Any) -> Any:
        fetched.append(kw["limit"])
        return search(*a, **kw)

    monkeypatch.setattr(type(st), "search_jobs", lambda self, *a, **kw: counted(*a, **kw))
    streamed = run(*args)
    assert streamed.exit_code == whole.exit_code == 0, streamed.stderr
    assert (streamed.stdout, streamed.stderr) == (whole.stdout, whole.stderr)
    assert fetched == [6, 6, 6, 2]
    if fmt == "json":
        assert len(json.loads(streamed.stdout)) == 20


def test_an_empty_listing_is_an_empty_json_array(run: Run, kind: str) -> None:
    result = run("jobs", "list", "--kind", kind, "-o", "json")
    assert (result.exit_code, result.stdout) == (0, "[]\n")


@pytest.mark.parametrize(
    ("fmt", "limit", "said"),
    [
        ("table", "10001", "--limit: at most 10000 rows in a table"),
        ("jsonl", "1000001", "--limit: at most 1000000 rows"),
    ],
)
def test_limit_is_capped(run: Run, fmt: str, limit: str, said: str) -> None:
    result = run("jobs", "list", "-n", limit, "-o", fmt)
    assert result.exit_code == 2
    assert said in result.stderr
