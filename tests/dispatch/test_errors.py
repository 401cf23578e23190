"""``qctl jobs errors`` and the dashboard's ``g`` on a dispatch database: failed jobs
(dispatch v0.1.0's own worker failed them) grouped by the fingerprint of their last
error (``qctl.core.triage``), as azync's."""

from __future__ import annotations

import asyncio
import time

import pytest

from qctl.systems.dispatch import reads
from qctl.systems.dispatch.database import Database
from qctl.systems.dispatch.tui import DISPATCH
from qctl.systems.dispatch.tui.panes import JobDetailScreen
from qctl.tui.app import QctlTop
from qctl.tui.triage import ErrorGroupsScreen
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.dispatch.conftest import Run, data
from tests.go.harness import Harness
from tests.tui.helpers import until

pytestmark = pytest.mark.timeout(120)


def _failed(dispatch: Harness, name: str, error: str) -> str:
    job_id = dispatch.call("enqueue", name=name, queue="err-q", max_retries=0)["id"]
    [claimed] = dispatch.call("dequeue", queues=["err-q"], limit=1)["jobs"]
    assert claimed["id"] == job_id
    assert dispatch.call("run", id=job_id, error=error)["job"]["state"] == "failed"
    return str(job_id)


@pytest.fixture(scope="module")
def failed(dispatch: Harness) -> dict[str, str]:
    jobs = {}
    for key, name, error in [
        ("a", "pay.charge", "charge ch_01h455vb4pex5vsknk084sn02q: card declined for 480"),
        ("b", "pay.refund", "charge ch_01h455vb4pex5vsknk084sn02r: card declined for 168"),
        ("c", "pay.charge", "lookup of 'acct-9' failed"),
    ]:
        time.sleep(0.005)  # TypeIDs of UUIDv7s: a millisecond apart keep their order
        jobs[key] = _failed(dispatch, name, error)
    return jobs


def test_jobs_errors_groups_failed_jobs_by_fingerprint(failed: dict[str, str], qctl: Run) -> None:
    rows = data(qctl("jobs", "errors", "-o", "json"))
    assert [(r["count"], r["error"], r["names"], r["newest"]) for r in rows] == [
        (2, "charge ch_<id>: card declined for <n>", {"pay.charge": 1, "pay.refund": 1},
         failed["b"]),
        (1, "lookup of '<str>' failed", {"pay.charge": 1}, failed["c"]),
    ]  # fmt: skip
    assert rows[0]["sample"].endswith("card declined for 168")
    assert rows[0]["first_failed"] <= rows[0]["last_failed"]
    by_name = data(qctl("jobs", "errors", "--name", "pay.refund", "-o", "json"))
    assert [(r["count"], r["newest"]) for r in by_name] == [(1, failed["b"])]
    assert data(qctl("jobs", "errors", "--queue", "elsewhere", "-o", "json")) == []
    table = qctl("jobs", "errors")
    header = ["COUNT", "ERROR", "NAMES", "FIRST_FAILED", "LAST_FAILED", "NEWEST"]
    assert table.stdout.split()[:6] == header
    assert "2 distinct error(s) over 3 job(s)" in table.stderr
    bad = qctl("jobs", "errors", "--state", "dead")
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_a_scan_cut_short_says_so(failed: dict[str, str], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        found = reads.error_groups(db, scan=2)
        assert (found.scanned, found.complete) == (2, False)
        assert reads.error_groups(db, scan=3).complete
    finally:
        db.close()


def test_g_on_the_jobs_tab_shows_the_groups(failed: dict[str, str], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)

    async def main() -> None:
        app = QctlTop(db, system=DISPATCH, location="test", poll_interval=0.5)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("2")
            await until(pilot, lambda: failed["a"] in cells(app, "dispatch-jobs"), 10)
            app.screen.query_one("#dispatch-jobs").focus()
            await pilot.press("g")
            await until(pilot, lambda: isinstance(app.screen, ErrorGroupsScreen), 10)
            await until(pilot, lambda: len(cells(app, "error-groups")) == 2, 10)
            rows = list(cells(app, "error-groups").values())
            assert [r[:3] for r in rows] == [
                ["2", "charge ch_<id>: card declined for <n>", "pay.charge 1, pay.refund 1"],
                ["1", "lookup of '<str>' failed", "pay.charge 1"],
            ]
            app.screen.query_one("#error-groups").focus()
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, JobDetailScreen), 10)
            assert app.screen.record_id == failed["b"]

    try:
        asyncio.run(main())
    finally:
        db.close()
