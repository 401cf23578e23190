"""At 80x24 every system's queue table keeps the queue's name and every count on the
screen (short headers, the droppable columns hidden), whole ids are cut in their middle
where the table is narrow and shown whole where it is wide, and the status bar keeps to
one line, its target cut in the middle with both ends kept and no password shown."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qctl.systems.dbos import reads as dbos_reads
from qctl.systems.dbos.tui import DBOS
from qctl.systems.dbos.tui import queues as dbos_queues
from qctl.systems.hopper import reads as hopper_reads
from qctl.systems.hopper.tui import HOPPER
from qctl.systems.hopper.tui import panes as hopper_panes
from qctl.systems.oban import reads as oban_reads
from qctl.systems.oban.tui import OBAN
from qctl.systems.oban.tui import panes as oban_panes
from qctl.systems.river import reads as river_reads
from qctl.systems.river.tui import RIVER
from qctl.systems.river.tui import panes as river_panes
from qctl.tui.app import QctlTop
from qctl.tui.base import SystemScreens
from qctl.tui.jobtabs import JobView
from qctl.tui.widgets import StatusBar, Table
from tests.tui.helpers import screen_text, until

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
QUEUE = "payments-settlement"
SCREENS = os.environ.get("QCTL_SCREEN_DUMPS", "")
"""A directory to write each test's 80x24 screen to (text), for a reader."""


def dump(name: str, text: str) -> None:
    if SCREENS:
        with open(os.path.join(SCREENS, f"{name}.txt"), "w", encoding="utf-8") as f:
            f.write(text + "\n")


def river_queue() -> river_reads.Queue:
    return river_reads.Queue(
        queue=QUEUE,
        paused_at=NOW - timedelta(minutes=3),
        created_at=NOW - timedelta(days=9),
        updated_at=NOW - timedelta(seconds=4),
        available=10101,
        running=202,
        scheduled=30303,
        retryable=404,
        pending=50505,
        completed=None,
        cancelled=None,
        discarded=None,
        oldest_available_age=timedelta(minutes=4, seconds=12),
    )


def oban_queue() -> oban_reads.Queue:
    return oban_reads.Queue(
        queue=QUEUE,
        available=10101,
        executing=202,
        scheduled=30303,
        retryable=404,
        suspended=50505,
        oldest_available_age=timedelta(minutes=4, seconds=12),
        nodes=["web-1", "web-2"],
        limits=[10, 20],
        paused=False,
        capped=["scheduled"],
    )


def hopper_queue() -> hopper_panes.QueueRow:
    depth = hopper_reads.QueueDepth(
        queue=QUEUE,
        pending=50505,
        available=10101,
        scheduled=30303,
        retryable=404,
        running=202,
        oldest_available=timedelta(minutes=4, seconds=12),
        completed_last_minute=606,
        paused=False,
    )
    limits = hopper_reads.Queue(
        name=QUEUE,
        paused_at=None,
        updated_at=NOW,
        global_limit=100,
        rate_per_sec=2.5,
        rate_burst=None,
        partition_limit=4,
        aging_seconds=None,
        metadata=None,
    )
    return (depth, limits)


def dbos_queue() -> dbos_reads.QueueStats:
    return dbos_reads.QueueStats(
        queue_name=QUEUE,
        enqueued=10101,
        pending=202,
        delayed=30303,
        oldest_enqueued_at=int((NOW - timedelta(minutes=4)).timestamp() * 1000),
        concurrency=10,
        worker_concurrency=2,
        rate_limit_max=100,
        rate_limit_period_sec=60.0,
        partition_concurrency=None,
        polling_interval_sec=1.0,
    )


QUEUES = {
    "river": (
        RIVER,
        river_panes.QueuesPane,
        river_queue,
        ["10101", "202", "30303", "404", "50505"],
    ),
    "oban": (OBAN, oban_panes.QueuesPane, oban_queue, ["10101", "202", "30303+", "404", "50505"]),
    "dbos": (DBOS, dbos_queues.QueuesPane, dbos_queue, ["10101", "202", "30303"]),
    "hopper": (
        HOPPER,
        hopper_panes.QueuesPane,
        hopper_queue,
        ["10101", "30303", "404", "202", "50505"],
    ),
}
"""Each system's dashboard, its queues tab, a row of it and that row's counts as shown."""


def app_of(system: SystemScreens, location: str = "test", read_only: bool = False) -> QctlTop:
    # The panes' reads are replaced: no database behind (object()).
    return QctlTop(
        object(),
        system=system,
        live=False,
        location=location,
        read_only=read_only,
        clock=lambda: NOW,
    )


def lines(app: QctlTop) -> list[str]:
    return screen_text(app).splitlines()


def line_with(app: QctlTop, needle: str) -> str:
    return next(line for line in lines(app) if needle in line and "╭" not in line)


def counted(pane: Any) -> list[Any]:
    """The pane's count columns: those that have a short header and are never dropped."""
    return [c for c in pane.columns if c.short and not c.drop]


async def queues_tab(pilot: Any, app: QctlTop, needle: str) -> None:
    await pilot.press(str(1 + [t.name for t in app.system.tabs].index("queues")))
    await until(pilot, lambda: needle in screen_text(app))
    await pilot.pause()


@pytest.mark.parametrize("name", list(QUEUES))
async def test_at_80x24_the_queue_and_every_count_are_on_screen(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    system, pane, row, counts = QUEUES[name]
    monkeypatch.setattr(pane, "fetch", lambda self, db: [row()])
    app = app_of(system)
    async with app.run_test(size=(80, 24)) as pilot:
        await queues_tab(pilot, app, QUEUE[:8])
        text = screen_text(app)
        dump(f"{name}_queues_80x24", text)
        assert all(len(line) <= 80 for line in text.splitlines())
        table = app.screen.query_one(f"#{pane.table_id}", Table)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        shown = line_with(app, QUEUE[:8])
        assert QUEUE in shown  # the key column whole: the counts left it the room
        # Every count, in its column: under its header (short, at this width).
        header = line_with(app, "│ queue")
        assert len(counted(pane)) >= 3
        for column in counted(pane):
            assert column.short in header.split(), (column.short, header)
        cells = shown[shown.index(QUEUE) + len(QUEUE) :].split()
        for count in counts:
            assert count in cells, (count, shown)
        # The narrow form is said in the help, beside the full name.
        first = counted(pane)[0]
        said = f"{first.name}: {first.about} ({first.short} when narrow)"
        assert said in " ".join(system.help_text().split())


@pytest.mark.parametrize("name", list(QUEUES))
async def test_wide_the_queue_table_shows_every_column_by_its_name(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    system, pane, row, _ = QUEUES[name]
    monkeypatch.setattr(pane, "fetch", lambda self, db: [row()])
    app = app_of(system)
    async with app.run_test(size=(200, 40)) as pilot:
        await queues_tab(pilot, app, QUEUE)
        header = line_with(app, "│ queue")
        for column in pane.columns:
            assert column.name in header
        # Narrowed, the droppable columns go and the short headers come; widened, back.
        full, short = counted(pane)[0].name, counted(pane)[0].short
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: short in line_with(app, "│ queue").split())
        dropped = [
            c.name for c in pane.columns if c.drop and c.name not in line_with(app, "│ queue")
        ]
        assert dropped or name == "oban"
        await pilot.resize_terminal(200, 40)
        await until(pilot, lambda: full in line_with(app, "│ queue"))
        assert all(name in line_with(app, "│ queue") for name in dropped)


def hopper_job(id: uuid.UUID) -> hopper_reads.Job:
    return hopper_reads.Job(
        id=id,
        kind="email.send",
        queue="default",
        state="available",
        priority=1,
        attempt=0,
        max_attempts=25,
        scheduled_at=NOW,
        attempted_at=None,
        attempted_by=None,
        unique_key=None,
        ordering_key=None,
        partition_key=None,
        batch_id=None,
        expires_at=None,
        cancel_requested_at=None,
        await_=False,
        created_at=NOW - timedelta(minutes=1),
        finalized_at=None,
        args={},
        metadata={},
        errors=[],
        output=None,
    )


@pytest.mark.parametrize("size", [(80, 24), (200, 40)], ids=["80x24", "200x40"])
async def test_an_id_is_cut_in_its_middle_where_narrow_whole_where_wide(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [
        uuid.UUID("0193a1b2-7c4d-7e5f-8a9b-0c1d2e3f4a5b"),
        uuid.UUID("0193a1b2-7c4d-7e5f-8a9b-0c1d2e3f4a6c"),
    ]
    monkeypatch.setattr(
        hopper_panes.JobsPane, "fetch", lambda self, db: [hopper_job(i) for i in ids]
    )
    app = app_of(HOPPER)
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        await until(pilot, lambda: "0/25" in screen_text(app))
        await pilot.pause()
        text = screen_text(app)
        if size[0] == 80:
            dump("hopper_jobs_80x24", text)
        rows = [line_with(app, str(i)[-4:]) for i in ids]
        assert all(len(line) <= size[0] for line in text.splitlines())
        for i, row in zip(ids, rows, strict=True):
            if size[0] == 80:
                assert str(i) not in row
                start, end = row.split("…")[0].split()[-1], row.split("…")[1].split()[0]
                assert str(i).startswith(start) and str(i).endswith(end) and len(end) >= 5
            else:
                assert str(i) in row
        # Marked, the id keeps both its ends.
        await pilot.press("space")
        await until(pilot, lambda: "│ ●" in screen_text(app))
        assert str(ids[0])[-4:] in line_with(app, "│ ●")


@pytest.mark.parametrize("width", [80, 240])
async def test_the_status_bar_keeps_to_one_line(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(river_panes.QueuesPane, "fetch", lambda self, db: [river_queue()])
    location = (
        "postgresql://payments_app:hunter2@db-primary.eu-west-1.internal.example.com:5432/"
        "payments_production?sslmode=verify-full&application_name=qctl schema=river_payments"
        " [read-only]"
    )
    app = app_of(RIVER, location, read_only=True)
    async with app.run_test(size=(width, 24)) as pilot:
        await until(pilot, lambda: app.refresh_count > 0 and "updated" in screen_text(app))
        await pilot.pause()
        bar = app.screen.query_one(StatusBar)
        assert bar.size.height == 1
        drawn = lines(app)[bar.region.y]
        if width == 80:
            dump("river_status_80x24", screen_text(app))
        assert "hunter2" not in screen_text(app)
        assert drawn.split()[2].startswith("postgresql://payments_app")
        assert "[read-only]" in drawn and "updated 09:00:00" in drawn
        assert ("…" in drawn) == (width == 80)  # whole where it fits


def river_job() -> river_reads.Job:
    return river_reads.Job(
        id=4242,
        state="retryable",
        queue=QUEUE,
        kind="settlement.reconcile_ledger",
        priority=1,
        attempt=3,
        max_attempts=25,
        scheduled_at=NOW,
        attempted_at=NOW,
        attempted_by=["river-client-7f3a9c"],
        created_at=NOW - timedelta(hours=1),
        finalized_at=None,
        tags=["billing", "eu"],
        unique_key=None,
        unique_states=None,
        args={"ledger": 7},
        metadata={},
        error_count=2,
        errors=[{"attempt": 1, "at": "2026-12-07T08:00:00Z", "error": "card [bold]declined"}],
    )


def oban_job() -> oban_reads.Job:
    return oban_reads.Job(
        id=4242,
        state="retryable",
        queue=QUEUE,
        worker="Settlement.ReconcileLedger",
        priority=0,
        attempt=3,
        max_attempts=20,
        args={"ledger": 7},
        meta={},
        tags=["billing"],
        attempted_by=["web-1", "a1b2"],
        inserted_at=NOW - timedelta(hours=1),
        scheduled_at=NOW,
        attempted_at=NOW,
        completed_at=None,
        cancelled_at=None,
        discarded_at=None,
        error_count=2,
        errors=[{"attempt": 1, "at": "2026-12-07T08:00:00Z", "error": "card [bold]declined"}, "x"],
    )


JOBS = {
    "river": (RIVER, river_panes, river_job, "settlement.reconcile_ledger", "River job 4242"),
    "oban": (OBAN, oban_panes, oban_job, "Settlement.ReconcileLedger", "Oban job 4242"),
}
"""River's and Oban's dashboards (one job tab and detail serves both), a job of each,
what runs it and its detail's title."""


@pytest.mark.parametrize("name", list(JOBS))
async def test_river_and_oban_jobs_at_80x24_and_their_detail(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    system, panes, job, runs, title = JOBS[name]
    monkeypatch.setattr(panes.JobsPane, "fetch", lambda self, db: [job()])
    monkeypatch.setattr(panes.reads, "get_job", lambda db, id: job())
    app = app_of(system)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await until(pilot, lambda: "4242" in screen_text(app))
        await pilot.pause()
        dump(f"{name}_jobs_80x24", screen_text(app))
        row = line_with(app, "4242")
        assert all(len(line) <= 80 for line in lines(app))
        for cell in ("retryable", QUEUE, "3/"):
            assert cell in row, (cell, row)
        start, end = row.split("…")[0].split()[-1], row.split("…")[1].split()[0]
        assert runs.startswith(start) and runs.endswith(end) and len(end) >= 5  # both ends
        await pilot.press("slash", *runs[:10], "enter")  # the filter's words: what runs it
        await until(pilot, lambda: "4242" in screen_text(app))
        await pilot.press("enter")
        await until(pilot, lambda: "declined" in screen_text(app))
        assert isinstance(app.screen, panes.JobDetailScreen)
        assert app.screen.query_one(JobView).border_title == title
        text = screen_text(app)
        dump(f"{name}_job_detail_80x24", text)
        assert "card [bold]declined" in text  # database text as it is, never markup
        assert '"ledger": 7' in text  # args decoded
