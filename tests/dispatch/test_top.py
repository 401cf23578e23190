"""``qctl top`` on a dispatch database: the shared shell with dispatch's screens
(``qctl.systems.dispatch.tui``), driven by pilot over rows dispatch's own Go code wrote:
live, the tabs, a queue's jobs, jump and detail, cancel, DLQ replay, cron run now and
disable (the rows the command line leaves), read-only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from qctl.systems.dispatch.database import Database
from qctl.systems.dispatch.tui import DISPATCH
from qctl.systems.dispatch.tui.panes import JobDetailScreen, JobsPane
from qctl.tui.app import QctlTop
from qctl.tui.widgets import CommandPrompt, ConfirmDialog, PromptDialog, StatePicker, StatusBar
from tests.conftest import PG_DSN, raw_pg

# Pilot helpers that are not DBOS-specific, used where they are.
from tests.dbos.test_top import cells, confirm
from tests.dispatch.conftest import row, snapshot
from tests.go.harness import Harness
from tests.tui.helpers import listening, until

pytestmark = pytest.mark.timeout(120)


def dashboard(
    schema: str,
    scenario: Callable[[QctlTop, Any], Awaitable[None]],
    read_only: bool = False,
    poll_interval: float = 0.5,
) -> None:
    db = Database(PG_DSN, schema, read_only=read_only)

    async def main() -> None:
        location = "test" + (" [read-only]" if read_only else "")
        app = QctlTop(
            db, system=DISPATCH, location=location, read_only=read_only, poll_interval=poll_interval
        )
        async with app.run_test(size=(160, 50)) as pilot:
            await scenario(app, pilot)

    try:
        asyncio.run(main())
    finally:
        db.close()


async def select(app: QctlTop, pilot: Any, table_id: str, key: str) -> None:
    await until(pilot, lambda: key in cells(app, table_id), 10)
    t = app.screen.query_one(f"#{table_id}", DataTable)
    t.focus()
    t.move_cursor(row=list(cells(app, table_id)).index(key))
    await pilot.pause(0.1)


@pytest.fixture(scope="module")
def fleet(dispatch: Harness) -> dict[str, str]:
    pending = dispatch.call("enqueue", name="tui.mail", queue="tui-q", payload={"to": "ops"})["id"]
    dead = dispatch.call("enqueue", name="tui.dead", queue="tui-dead", max_retries=0)["id"]
    dispatch.call("dequeue", queues=["tui-dead"], limit=1)
    dispatch.call("run", id=dead, error="smtp [bold]421")
    dispatch.call("worker", hostname="tui-host", queues=["tui-q"], limit=2)
    dispatch.call("cron", name="tui-cron", schedule="@every 1h", job_name="tui.mail")
    dispatch.call("workflow", name="tui.flow")
    return {"pending": pending, "dead": dead}


def tui_mail_jobs(schema: str) -> int:
    with raw_pg(schema) as c:
        return int(
            c.execute("SELECT count(*) FROM dispatch_jobs WHERE name = 'tui.mail'").fetchone()[0]
        )


def test_an_enqueue_elsewhere_shows_without_waiting_for_the_poll(
    dispatch: Harness, pg_schema: str
) -> None:
    """dispatch (from v1.5.3) wakes its workers on dispatch_jobs_wake after an enqueue:
    a dashboard polling once a minute shows the new queue on that notice. The harness
    is v0.1.0, which sends none: the test sends it as v1.5.3's enqueue does."""

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await listening(app, pilot)
        dispatch.call("enqueue", name="tui.pushed", queue="pushed-q")
        with raw_pg(pg_schema) as c:
            c.execute("SELECT pg_notify('dispatch_jobs_wake', '')")
        await until(pilot, lambda: "pushed-q" in cells(app, "dispatch-queues"), 30)

    dashboard(pg_schema, scenario, poll_interval=60)


def test_tabs_jump_and_actions(fleet: dict[str, str], pg_schema: str) -> None:
    async def scenario(app: QctlTop, pilot: Any) -> None:
        bar = app.screen.query_one(StatusBar)
        await until(pilot, lambda: "live" in str(bar.render()), 10)
        await until(pilot, lambda: "tui-q" in cells(app, "dispatch-queues"), 10)
        assert cells(app, "dispatch-queues")["tui-q"][1] == "1"  # pending
        # enter on a queue opens its jobs
        await select(app, pilot, "dispatch-queues", "tui-q")
        await pilot.press("enter")
        await until(pilot, lambda: list(cells(app, "dispatch-jobs")) == [fleet["pending"]], 10)
        # C cancels the selected job after one confirmation
        await select(app, pilot, "dispatch-jobs", fleet["pending"])
        await pilot.press("C")
        assert "Cancel 1 dispatch job (1 pending: " in await confirm(app, pilot)
        await until(pilot, lambda: row(pg_schema, "dispatch_jobs", fleet["pending"])["state"]
                    == "cancelled", 10)  # fmt: skip
        # DLQ: R replays the entry as a new job
        await pilot.press("3")
        await until(pilot, lambda: len(cells(app, "dispatch-dlq")) == 1, 10)
        [entry] = cells(app, "dispatch-dlq")
        assert "smtp [bold]421" in cells(app, "dispatch-dlq")[entry][-1]  # text, not markup
        await select(app, pilot, "dispatch-dlq", entry)
        await pilot.press("R")
        await confirm(app, pilot)
        await until(pilot, lambda: row(pg_schema, "dispatch_dlq", entry)["replayed_at"], 10)
        await until(pilot, lambda: cells(app, "dispatch-dlq")[entry][6] != "", 10)
        await pilot.press("4")
        await until(
            pilot, lambda: any(r[0] == "tui-cron" for r in cells(app, "dispatch-cron").values()), 10
        )
        # T runs the entry's job now, D disables it: the command line's actions
        [cron_id] = [k for k, r in cells(app, "dispatch-cron").items() if r[0] == "tui-cron"]
        await select(app, pilot, "dispatch-cron", cron_id)
        await pilot.press("T")
        assert "Trigger 1 dispatch cron entry (1 enabled: tui-cron)?" in await confirm(app, pilot)
        await until(pilot, lambda: tui_mail_jobs(pg_schema) == 2, 10)
        await pilot.press("D")
        await confirm(app, pilot)
        await until(
            pilot, lambda: row(pg_schema, "dispatch_cron_entries", cron_id)["enabled"] is False, 10
        )
        await until(pilot, lambda: cells(app, "dispatch-cron")[cron_id][4] == "no", 10)
        await pilot.press("X")
        assert "Delete 1 dispatch cron entry (1 disabled: tui-cron)?" in await confirm(app, pilot)
        await until(pilot, lambda: cron_id not in cells(app, "dispatch-cron"), 10)
        await pilot.press("5")
        await until(
            pilot,
            lambda: any(r[1] == "tui-host" for r in cells(app, "dispatch-workers").values()),
            10,
        )
        await pilot.press("6")
        await until(
            pilot, lambda: any(r[1] == "tui.flow" for r in cells(app, "dispatch-runs").values()), 10
        )
        # : jumps to a job by a prefix without job_
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        for ch in fleet["dead"][4:20]:
            await pilot.press(ch)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen), 10)
        text = app.screen.query_one("#dispatch-job-text", Static)
        await until(pilot, lambda: fleet["dead"] in str(text.render()), 10)
        assert "state: failed" in str(text.render())
        assert list(cells(app, "dispatch-job-dlq")) == [entry]
        # the command line from a detail: the failed jobs alone (dispatch's own states)
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, CommandPrompt))
        await pilot.press(*"jobs fa", "tab", "enter")
        jobs = app.screen.query_one(JobsPane)
        await until(
            pilot,
            lambda: jobs.state == "failed" and fleet["dead"] in cells(app, "dispatch-jobs"),
            10,
        )
        assert {r[3] for r in cells(app, "dispatch-jobs").values()} == {"failed"}
        # t picks another: all states again
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, StatePicker))
        await pilot.press("a", "enter")
        await until(
            pilot,
            lambda: (
                jobs.state is None and len({r[3] for r in cells(app, "dispatch-jobs").values()}) > 1
            ),
            10,
        )
        # DLQ: X deletes the (replayed) entry
        await pilot.press("3")
        await select(app, pilot, "dispatch-dlq", entry)
        await pilot.press("X")
        assert "Delete 1 dispatch DLQ entry (1 replayed: tui.dead)?" in await confirm(app, pilot)
        await until(pilot, lambda: entry not in cells(app, "dispatch-dlq"), 10)

    dashboard(pg_schema, scenario)


def test_read_only_hides_and_refuses(dispatch: Harness, pg_schema: str) -> None:
    job = dispatch.call("enqueue", name="tui.ro", queue="tui-ro")["id"]
    before = snapshot(pg_schema)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        assert "[read-only]" in str(app.screen.query_one(StatusBar).render())
        await pilot.press("2")
        await select(app, pilot, "dispatch-jobs", job)
        pane = app.screen.query_one(JobsPane)
        for action in DISPATCH.writes:
            assert pane.check_action(action, ()) is False  # hidden from the footer
        await pilot.press("C")
        await pilot.press("y")
        pane.action_job_cancel()  # called anyway: the shell refuses it
        await until(pilot, lambda: any("read-only" in n.message for n in app._notifications), 10)
        await pilot.pause(0.5)
        assert not isinstance(app.screen, ConfirmDialog)

    dashboard(pg_schema, scenario, read_only=True)
    assert snapshot(pg_schema) == before
