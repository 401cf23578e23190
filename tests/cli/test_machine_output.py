"""Machine formats return every row: ``jobs list -o json | jq length`` counts them all
(the page cut used to go unseen, its cursor on stderr); ``--limit N`` asks for a page,
and a table keeps its page of 50."""

from __future__ import annotations

import json

from tests.cli.conftest import Run, enqueue


def test_json_jsonl_and_csv_list_every_row_unless_limited(run: Run, st: object, kind: str) -> None:
    enqueue(st, kind, 60)
    every = run("jobs", "list", "--kind", kind, "-o", "json")
    assert len(json.loads(every.stdout)) == 60 and every.stderr == ""
    lines = run("jobs", "list", "--kind", kind, "-o", "jsonl")
    assert len(lines.stdout.splitlines()) == 60 and lines.stderr == ""
    rows = run("jobs", "list", "--kind", kind, "-o", "csv")
    assert len(rows.stdout.splitlines()) == 1 + 60
    page = run("jobs", "list", "--kind", kind, "-o", "jsonl", "-n", "5")
    assert len(page.stdout.splitlines()) == 5
    assert page.stderr.startswith("next page: --after ")
    table = run("jobs", "list", "--kind", kind)
    assert "50 shown of 60 matching" in table.stderr
