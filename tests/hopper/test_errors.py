"""``qctl jobs errors`` and the dashboard's ``g`` on a hopper database: discarded jobs
grouped by the fingerprint of their last error (``qctl.core.triage``), as azync's."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from qctl.systems.hopper import reads
from qctl.systems.hopper.database import Database
from qctl.systems.hopper.tui import HOPPER
from qctl.systems.hopper.tui.panes import JobDetailScreen
from qctl.tui.app import QctlTop
from qctl.tui.triage import ErrorGroupsScreen
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.hopper.conftest import Run, data
from tests.hopper.worker import Worker
from tests.tui.helpers import until

pytestmark = pytest.mark.timeout(120)

HOSTILE = "bad input \x1b]52;c;aGk=\x07 here"


@pytest.fixture(scope="module")
def failed(hopper: Worker) -> dict[str, uuid.UUID]:
    client = hopper.register("err-host")
    jobs = {}
    for name, kind, error in [
        ("a", "pay.charge", "card declined for 480"),
        ("b", "pay.refund", "card declined for 168"),
        ("c", "pay.charge", "smtp timeout"),
        ("d", "pay.charge", "card declined for 7"),
        ("e", "pay.hostile", HOSTILE),
    ]:
        time.sleep(0.005)  # UUIDv7 ids: a millisecond apart keep their order
        jobs[name] = hopper.dead(kind, "err-q", client, error=error)
    live = hopper.insert("pay.charge", queue="err-q")  # no error: not read by default
    return {**jobs, "live": live}


def test_jobs_errors_groups_discarded_jobs_by_fingerprint(
    failed: dict[str, uuid.UUID], qctl: Run
) -> None:
    rows = data(qctl("jobs", "errors", "-o", "json"))
    assert [(r["count"], r["error"], r["kinds"]) for r in rows] == [
        (3, "card declined for <n>", {"pay.charge": 2, "pay.refund": 1}),
        (1, "bad input \x1b]<n>;c;aGk=\x07 here", {"pay.hostile": 1}),
        (1, "smtp timeout", {"pay.charge": 1}),
    ]
    top = rows[0]
    assert (top["newest"], top["sample"]) == (str(failed["d"]), "card declined for 7")
    assert top["first_failed"] < top["last_failed"]
    assert rows[1]["sample"] == HOSTILE  # JSON exact
    # filters: kind, queue, state
    refunds = data(qctl("jobs", "errors", "--kind", "pay.refund", "-o", "json"))
    assert [(r["count"], r["newest"]) for r in refunds] == [(1, str(failed["b"]))]
    assert data(qctl("jobs", "errors", "--queue", "elsewhere", "-o", "json")) == []
    assert data(qctl("jobs", "errors", "--state", "cancelled", "-o", "json")) == []
    live = data(qctl("jobs", "errors", "--state", "available", "-o", "json"))
    assert [(r["count"], r["error"], r["newest"]) for r in live] == [(1, "", str(failed["live"]))]


def test_table_is_sanitised_and_says_what_it_read(failed: dict[str, uuid.UUID], qctl: Run) -> None:
    table = qctl("jobs", "errors")
    assert table.exit_code == 0, table.output
    header = table.stdout.split()[:6]
    assert header == ["COUNT", "ERROR", "KINDS", "FIRST_FAILED", "LAST_FAILED", "NEWEST"]
    assert "\x1b" not in table.stdout and "\\x1b" in table.stdout
    assert "3 distinct error(s) over 5 job(s)" in table.stderr
    cut = qctl("jobs", "errors", "--limit", "1")
    assert "1 of 3 distinct error(s) over 5 job(s)" in cut.stderr


def test_a_scan_cut_short_says_so(failed: dict[str, uuid.UUID], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        found = reads.error_groups(db, scan=2)
        assert (found.scanned, found.complete, found.groups[0].count) == (2, False, 1)
        assert reads.error_groups(db, scan=5).complete
    finally:
        db.close()


def test_bad_input_is_one_line(qctl: Run) -> None:
    for args in (["--state", "dead"], ["--limit", "0"]):
        result = qctl("jobs", "errors", *args)
        assert result.exit_code == 2 and "Traceback" not in result.output, args
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_g_on_the_jobs_tab_shows_the_groups(failed: dict[str, uuid.UUID], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)

    async def main() -> None:
        app = QctlTop(db, system=HOPPER, location="test", poll_interval=0.5)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("2")
            await until(pilot, lambda: str(failed["a"]) in cells(app, "hopper-jobs"), 10)
            app.screen.query_one("#hopper-jobs").focus()
            await pilot.press("g")
            await until(pilot, lambda: isinstance(app.screen, ErrorGroupsScreen), 10)
            await until(pilot, lambda: len(cells(app, "error-groups")) == 3, 10)
            rows = list(cells(app, "error-groups").values())
            assert [r[:3] for r in rows] == [
                ["3", "card declined for <n>", "pay.charge 2, pay.refund 1"],
                ["1", "bad input \\x1b]<n>;c;aGk=\\x07 here", "pay.hostile 1"],
                ["1", "smtp timeout", "pay.charge 1"],
            ]
            summary = app.screen.query_one("#error-groups-summary")
            assert "3 errors over 5 jobs" in str(summary.render())
            app.screen.query_one("#error-groups").focus()
            await pilot.press("enter")  # the largest group's newest job
            await until(pilot, lambda: isinstance(app.screen, JobDetailScreen), 10)
            assert app.screen.record_id == failed["d"]
            await pilot.press("escape", "escape")
            await until(pilot, lambda: not isinstance(app.screen, ErrorGroupsScreen), 10)

    try:
        asyncio.run(main())
    finally:
        db.close()
