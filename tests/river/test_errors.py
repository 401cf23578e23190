"""``qctl jobs errors`` and the dashboard's ``g`` on a River database: jobs River's own
worker failed, grouped by the fingerprint of their last error (``qctl.core.triage``), and
one job's attempt history (River's ``errors``: attempt, at, error, trace)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from textual.widgets import Static

from qctl.systems.river import reads
from qctl.systems.river.database import Database
from qctl.systems.river.tui import RIVER
from qctl.systems.river.tui.panes import JobDetailScreen
from qctl.tui.app import QctlTop
from qctl.tui.triage import ErrorGroupsScreen
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.go.harness import Harness
from tests.river.conftest import Run, data, job, until
from tests.tui.helpers import until as until_ui

pytestmark = pytest.mark.timeout(180)

HOSTILE = "bad input \x1b]52;c;aGk=\x07 here"


@pytest.fixture(scope="module")
def failed(river: Harness) -> Iterator[dict[str, int]]:
    """Jobs River's worker discarded (one attempt each), one at a time so that their
    failures are in insertion order; and one job still available (no error)."""
    river.call("start", queues=["err-q", "err-other"])
    jobs = {}
    for name, queue, error in [
        ("a", "err-q", "card declined for 480"),
        ("b", "err-other", "card declined for 168"),
        ("c", "err-q", "smtp timeout"),
        ("d", "err-q", "card declined for 7"),
        ("e", "err-q", HOSTILE),
    ]:
        [id_] = river.call("insert", queue=queue, mode="fail", note=error, max_attempts=1)["ids"]
        until(lambda i=id_: job(river, i)["state"] == "discarded")
        jobs[name] = id_
    river.call("stop")
    [live] = river.call("insert", queue="err-idle")["ids"]
    yield {**jobs, "live": live}


def test_jobs_errors_groups_failed_jobs_by_fingerprint(failed: dict[str, int], qctl: Run) -> None:
    rows = data(qctl("jobs", "errors", "-o", "json"))
    assert [(r["count"], r["error"], r["kinds"]) for r in rows] == [
        (3, "card declined for <n>", {"qctl_test": 3}),
        (1, "bad input \x1b]<n>;c;aGk=\x07 here", {"qctl_test": 1}),
        (1, "smtp timeout", {"qctl_test": 1}),
    ]
    top = rows[0]
    assert (top["newest"], top["sample"]) == (failed["d"], "card declined for 7")
    assert top["first_failed"] < top["last_failed"]
    assert rows[1]["sample"] == HOSTILE  # JSON exact
    other = data(qctl("jobs", "errors", "--queue", "err-other", "-o", "json"))
    assert [(r["count"], r["newest"]) for r in other] == [(1, failed["b"])]
    assert data(qctl("jobs", "errors", "--kind", "elsewhere", "-o", "json")) == []
    assert data(qctl("jobs", "errors", "--state", "retryable", "-o", "json")) == []
    live = data(qctl("jobs", "errors", "--state", "available", "-o", "json"))
    assert [(r["count"], r["error"], r["newest"]) for r in live] == [(1, "", failed["live"])]


def test_one_jobs_attempt_history(failed: dict[str, int], qctl: Run, river: Harness) -> None:
    rows = data(qctl("jobs", "errors", str(failed["e"]), "-o", "json"))
    assert [(r["attempt"], r["error"]) for r in rows] == [(1, HOSTILE)]
    assert set(rows[0]) == {"attempt", "at", "error", "trace"} and rows[0]["at"]
    assert len(rows) == job(river, failed["e"])["errors"]
    table = qctl("jobs", "errors", str(failed["e"]))
    assert table.exit_code == 0 and table.stdout.split()[:3] == ["ATTEMPT", "AT", "ERROR"]
    assert "\x1b" not in table.stdout and "\\x1b" in table.stdout
    none = qctl("jobs", "errors", str(failed["live"]), "-o", "json")
    assert data(none) == []
    missing = qctl("jobs", "errors", "999999")
    assert missing.exit_code == 3 and "no job '999999'" in missing.stderr


def test_table_says_what_it_read(failed: dict[str, int], qctl: Run) -> None:
    table = qctl("jobs", "errors")
    assert table.exit_code == 0, table.output
    assert table.stdout.split()[:6] == [
        "COUNT", "ERROR", "KINDS", "FIRST_FAILED", "LAST_FAILED", "NEWEST"
    ]  # fmt: skip
    assert "\x1b" not in table.stdout and "\\x1b" in table.stdout
    assert "3 distinct error(s) over 5 job(s)" in table.stderr
    assert "1 of 3 distinct error(s)" in qctl("jobs", "errors", "--limit", "1").stderr


def test_a_scan_cut_short_says_so(failed: dict[str, int], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        found = reads.error_groups(db, scan=2)
        assert (found.scanned, found.complete, found.groups[0].count) == (2, False, 1)
        assert reads.error_groups(db, scan=5).complete
    finally:
        db.close()


def test_bad_input_is_one_line(failed: dict[str, int], qctl: Run) -> None:
    both = [str(failed["a"]), "--state", "discarded"]
    for args in (["--state", "dead"], ["--limit", "0"], ["x"], both):
        result = qctl("jobs", "errors", *args)
        assert result.exit_code == 2 and "Traceback" not in result.output, args
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_g_on_the_jobs_tab_shows_the_groups(failed: dict[str, int], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)

    async def main() -> None:
        app = QctlTop(db, system=RIVER, location="test", poll_interval=0.5)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("2")
            await until_ui(pilot, lambda: str(failed["a"]) in cells(app, "river-jobs"), 10)
            app.screen.query_one("#river-jobs").focus()
            await pilot.press("g")
            await until_ui(pilot, lambda: isinstance(app.screen, ErrorGroupsScreen), 10)
            await until_ui(pilot, lambda: len(cells(app, "error-groups")) == 3, 10)
            rows = list(cells(app, "error-groups").values())
            assert [r[:3] for r in rows] == [
                ["3", "card declined for <n>", "qctl_test 3"],
                ["1", "bad input \\x1b]<n>;c;aGk=\\x07 here", "qctl_test 1"],
                ["1", "smtp timeout", "qctl_test 1"],
            ]
            summary = app.screen.query_one("#error-groups-summary")
            assert "3 errors over 5 jobs" in str(summary.render())
            app.screen.query_one("#error-groups").focus()
            await pilot.press("enter")  # the largest group's newest job
            await until_ui(pilot, lambda: isinstance(app.screen, JobDetailScreen), 10)
            assert app.screen.record_id == failed["d"]
            # a list as the command line writes it (JSON), never Python's repr
            detail = app.screen.query_one("#river-job-text", Static)
            await until_ui(pilot, lambda: 'attempted_by: ["' in str(detail.render()), 10)
            await pilot.press("escape", "escape")
            await until_ui(pilot, lambda: not isinstance(app.screen, ErrorGroupsScreen), 10)

    try:
        asyncio.run(main())
    finally:
        db.close()
