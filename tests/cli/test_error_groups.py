"""Error-first triage: ``jobs errors`` lists one row per error fingerprint (values
folded: ``qctl.core.triage``) with its count, largest first, on both backends;
``ops.views.error_groups`` is the one read the dashboard's ``g`` shows too."""

from __future__ import annotations

from typing import Any

from qctl.systems.azync.ops.views import error_groups
from qctl_store.types import JobSearch, JobState
from tests.cli.conftest import Run, make_dead, out_json


def test_dead_jobs_grouped_by_error_largest_first(run: Run, st: Any, kind: str) -> None:
    other = kind + "_b"
    make_dead(st, kind, 3, "smtp 421 try later")
    make_dead(st, other, 2, "smtp  421\ntry later")  # the same text, other whitespace
    make_dead(st, kind, 1, "bad address")
    newest = make_dead(st, other, 1, "bad address")[0]
    rows = out_json(run("jobs", "errors", "--kind", kind, "-o", "json"))
    assert [(r["count"], r["error"], r["kinds"], r["sample"]) for r in rows] == [
        (3, "smtp <n> try later", {kind: 3}, "smtp 421 try later"),
        (1, "bad address", {kind: 1}, "bad address"),
    ]
    both = out_json(run("jobs", "errors", "--state", "dead", "--error", "421", "-o", "json"))
    mine = [r for r in both if kind in r["kinds"]]
    assert mine == [
        {
            "count": 5,
            "error": "smtp <n> try later",
            "kinds": {kind: 3, other: 2},
            "first_failed": mine[0]["first_failed"],
            "last_failed": mine[0]["last_failed"],
            "newest": mine[0]["newest"],
            "sample": mine[0]["sample"],
        }
    ]
    assert mine[0]["first_failed"] <= mine[0]["last_failed"]
    assert mine[0]["sample"] in ("smtp 421 try later", "smtp  421\ntry later")
    table = run("jobs", "errors", "--kind", other)
    assert table.exit_code == 0, table.stderr
    assert table.stdout.split()[:6] == [
        "COUNT", "ERROR", "KINDS", "FIRST_FAILED", "LAST_FAILED", "NEWEST"
    ]  # fmt: skip
    assert "2 distinct error(s) over 3 job(s)" in table.stderr
    # the newest of a group is the job that failed last, a sample to open
    groups = error_groups(st, JobSearch(kind=other, state=JobState.DEAD))
    assert groups.complete and groups.scanned == 3
    assert [g.newest for g in groups.groups if g.fingerprint == "bad address"] == [newest]


def test_values_are_folded_into_one_group(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 2, "card declined for 480")
    make_dead(st, kind, 1, "card declined for 168")
    make_dead(st, kind, 1, "order 'A-1' not found")
    make_dead(st, kind, 1, 'order "B-22" not found')
    rows = out_json(run("jobs", "errors", "--kind", kind, "-o", "json"))
    assert [(r["count"], r["error"]) for r in rows] == [
        (3, "card declined for <n>"),
        (1, 'order "<str>" not found'),
        (1, "order '<str>' not found"),
    ]


def test_a_scan_cut_short_says_so(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 5, "boom")
    found = error_groups(st, JobSearch(kind=kind, state=JobState.DEAD), scan=3)
    assert (found.scanned, found.complete, found.groups[0].count) == (3, False, 3)
    exact = error_groups(st, JobSearch(kind=kind, state=JobState.DEAD), scan=5)
    assert (exact.scanned, exact.complete) == (5, True)


def test_bad_input_is_a_usage_error(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 1)
    for args in (["--state", "deadd"], ["--older-than", "soon"], ["--limit", "0"]):
        result = run("jobs", "errors", "--kind", kind, *args)
        assert result.exit_code == 2 and "Traceback" not in result.output, args
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
