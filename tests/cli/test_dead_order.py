"""Dead jobs list in the order they failed (``failed_at``, then id), newest first, and
page by cursor exactly across equal failure times and jobs without one, on both
backends (before: in enqueue order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import Run, dead_out_of_order, out_json


def _next(stderr: str) -> str | None:
    for line in stderr.splitlines():
        if line.startswith("next page: --after "):
            return line.removeprefix("next page: --after ")
    return None


def test_dead_jobs_list_newest_failure_first_and_page_exactly(
    run: Run, st: Any, module_db: tuple[str, str, Path], kind: str
) -> None:
    expected = [str(i) for i in dead_out_of_order(st, module_db, kind)]
    listing = ["jobs", "list", "--kind", kind, "--state", "dead"]
    assert [r["id"] for r in out_json(run(*listing, "-o", "json"))] == expected

    walked: list[str] = []
    after: list[str] = []
    for _ in range(len(expected)):
        page = run(*listing, "--limit", "2", *after, "-o", "json")
        assert page.exit_code == 0, page.output
        walked.extend(r["id"] for r in json.loads(page.stdout))
        cursor = _next(page.stderr)
        if cursor is None:
            break
        after = ["--after", cursor]
    assert walked == expected  # no job twice, none missed


def test_oldest_first_puts_the_unknown_failure_times_last(
    run: Run, st: Any, module_db: tuple[str, str, Path], kind: str
) -> None:
    newest = [str(i) for i in dead_out_of_order(st, module_db, kind)]
    oldest = run(
        "jobs", "list", "--kind", kind, "--state", "dead", "--sort", "oldest", "-o", "json"
    )
    # Ties keep id ascending either way.
    assert [r["id"] for r in out_json(oldest)] == [
        newest[6],
        *newest[4:6],
        newest[3],
        newest[2],
        *newest[0:2],
    ]
