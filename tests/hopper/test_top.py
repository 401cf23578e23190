"""``qctl top`` on a hopper database: the shared shell with hopper's screens
(``qctl.systems.hopper.tui``), driven by pilot: live, the tabs, a queue's jobs, jump
and detail, clients, workflows, streams; cancel, retry and pause leave the same rows as
the command line does (both call ``qctl.systems.hopper.actions``); read-only hides and
refuses them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from qctl.systems.hopper.database import Database
from qctl.systems.hopper.tui import HOPPER
from qctl.systems.hopper.tui.panes import JobDetailScreen, JobsPane
from qctl.tui.app import QctlTop
from qctl.tui.widgets import ConfirmDialog, PromptDialog, StatusBar
from tests.conftest import PG_DSN, raw_pg

# Pilot helpers that are not DBOS-specific, used where they are.
from tests.dbos.test_top import cells, confirm
from tests.hopper.conftest import Run, job_row, snapshot
from tests.hopper.worker import Worker
from tests.tui.helpers import listening, until

pytestmark = pytest.mark.timeout(120)

VOLATILE = {"id", "seq", "scheduled_at", "created_at", "finalized_at", "attempted_at"}
"""Columns two twin jobs differ in whoever acts on them."""


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
            db, system=HOPPER, location=location, read_only=read_only, poll_interval=poll_interval
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


def same(schema: str, a: uuid.UUID, b: uuid.UUID) -> None:
    """Two twin jobs are in the same place with the same columns, errors' times aside."""
    (wa, ra), (wb, rb) = job_row(schema, a), job_row(schema, b)  # type: ignore[misc]
    assert wa == wb
    for row in (ra, rb):
        for error in row["errors"]:
            error.pop("at")
    assert {k: v for k, v in ra.items() if k not in VOLATILE} == {
        k: v for k, v in rb.items() if k not in VOLATILE
    }


def queue_row(schema: str, name: str) -> tuple[Any, ...]:
    with raw_pg(schema) as c:
        row = c.execute(
            "SELECT paused_at IS NOT NULL, global_limit FROM hopper_queues WHERE name = %s",
            (name,),
        ).fetchone()
    return tuple(row) if row else ()


def test_an_insert_elsewhere_shows_without_waiting_for_the_poll(
    hopper: Worker, pg_schema: str
) -> None:
    """hopper's producer notifies hopper_insert: a dashboard polling once a minute shows
    the new queue on that notice."""

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await listening(app, pilot)
        hopper.insert("tui.pushed", {}, queue="pushed-q")
        await until(pilot, lambda: "pushed-q" in cells(app, "hopper-queues"), 30)

    dashboard(pg_schema, scenario, poll_interval=60)


def test_dashboard_and_command_line_leave_the_same_rows(
    hopper: Worker, qctl: Run, pg_schema: str
) -> None:
    client = hopper.register("tui-host")
    waiting = [hopper.insert("tui.mail", {"to": "ops"}, queue="tui-q") for _ in range(2)]
    dead = [hopper.dead("tui.dead", "tui-dead", client, error="smtp [bold]421") for _ in range(2)]
    assert qctl("jobs", "cancel", str(waiting[0]), "--yes").exit_code == 0
    assert qctl("jobs", "retry", str(dead[0]), "--yes").exit_code == 0
    hopper.dead("tui.cli", "tui-cli", client)  # a queue hopper knows by its jobs alone
    assert qctl("queues", "pause", "tui-cli", "--yes").exit_code == 0
    batch, _ = hopper.workflow("tui-wf", ["a", "b"], [(1, 0)])
    hopper.consumer("tui-stream", "tui.#", "tui-q")

    async def scenario(app: QctlTop, pilot: Any) -> None:
        bar = app.screen.query_one(StatusBar)
        await until(pilot, lambda: "live" in str(bar.render()), 10)
        await until(pilot, lambda: "tui-q" in cells(app, "hopper-queues"), 10)
        # P pauses the selected queue after one confirmation
        await select(app, pilot, "hopper-queues", "tui-dead")
        await pilot.press("P")
        assert "Pause 1 hopper queue (1 active: no queue row yet)" in await confirm(app, pilot)
        await until(pilot, lambda: queue_row(pg_schema, "tui-dead") == (True, None), 10)
        await until(pilot, lambda: cells(app, "hopper-queues")["tui-dead"][1] == "paused", 10)
        # enter on a queue opens its jobs; C cancels the selected one
        await select(app, pilot, "hopper-queues", "tui-q")
        await pilot.press("enter")
        await until(pilot, lambda: str(waiting[1]) in cells(app, "hopper-jobs"), 10)
        await select(app, pilot, "hopper-jobs", str(waiting[1]))
        await pilot.press("C")
        assert "Cancel 1 hopper job (1 available: " in await confirm(app, pilot)
        await until(pilot, lambda: job_row(pg_schema, waiting[1])[0] == "history", 10)  # type: ignore[index]
        # : jumps to the dead job by a prefix; R retries it from its detail
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        for ch in str(dead[1])[:13]:
            await pilot.press(ch)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen), 10)
        text = app.screen.query_one("#hopper-job-text", Static)
        await until(pilot, lambda: "state: discarded" in str(text.render()), 10)
        errors = cells(app, "hopper-job-errors")
        assert [r[2] for r in errors.values()] == ["smtp [bold]421"]  # text, not markup
        await pilot.press("R")
        assert "Retry 1 hopper job (1 discarded: " in await confirm(app, pilot)
        await until(pilot, lambda: job_row(pg_schema, dead[1])[0] == "live", 10)  # type: ignore[index]
        await pilot.press("escape")
        await pilot.press("3")
        await until(
            pilot,
            lambda: any(r[1] == "tui-host" for r in cells(app, "hopper-clients").values()),
            10,
        )
        await pilot.press("4")
        await until(pilot, lambda: str(batch) in cells(app, "hopper-workflows"), 10)
        assert cells(app, "hopper-workflows")[str(batch)][1:4] == ["wf-tui-wf", "2", "2"]
        await pilot.press("5")
        await until(pilot, lambda: "tui-stream" in cells(app, "hopper-streams"), 10)

    dashboard(pg_schema, scenario)
    same(pg_schema, waiting[0], waiting[1])
    same(pg_schema, dead[0], dead[1])
    assert queue_row(pg_schema, "tui-dead") == queue_row(pg_schema, "tui-cli")


def test_read_only_hides_and_refuses(hopper: Worker, pg_schema: str) -> None:
    job = hopper.insert("tui.ro", queue="tui-ro")
    before = snapshot(pg_schema)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        assert "[read-only]" in str(app.screen.query_one(StatusBar).render())
        await pilot.press("2")
        await select(app, pilot, "hopper-jobs", str(job))
        pane = app.screen.query_one(JobsPane)
        for action in ("job_cancel", "job_retry"):
            assert pane.check_action(action, ()) is False  # hidden from the footer
        await pilot.press("C")
        await pilot.press("y")
        pane.action_job_cancel()  # called anyway: the shell refuses it
        await until(pilot, lambda: any("read-only" in n.message for n in app._notifications), 10)
        await pilot.pause(0.5)
        assert not isinstance(app.screen, ConfirmDialog)

    dashboard(pg_schema, scenario, read_only=True)
    assert snapshot(pg_schema) == before


def test_marked_jobs_are_retried_together(hopper: Worker, pg_schema: str) -> None:
    """Space marks two of three discarded jobs (● in their first cell); R asks once for
    both and retries exactly those; the marks are cleared after the run. In read-only
    mode R says it is disabled."""
    client = hopper.register()
    dead = [hopper.dead("tui.mark", "tui-mark", client) for _ in range(3)]
    keys = [str(d) for d in dead]

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await pilot.press("2")
        await until(pilot, lambda: all(k in cells(app, "hopper-jobs") for k in keys), 10)
        for key in keys[:2]:
            await select(app, pilot, "hopper-jobs", key)
            await pilot.press("space")
        await until(pilot, lambda: cells(app, "hopper-jobs")[keys[0]][0].startswith("● "), 10)
        await pilot.press("R")
        assert "Retry 2 hopper jobs (2 discarded: tui.mark)" in await confirm(app, pilot)
        await until(pilot, lambda: job_row(pg_schema, dead[1])[0] == "live", 10)  # type: ignore[index]
        await until(pilot, lambda: not app.screen.query_one(JobsPane).marked, 10)

    dashboard(pg_schema, scenario)
    assert [job_row(pg_schema, d)[0] for d in dead] == ["live", "live", "history"]  # type: ignore[index]

    said: list[str] = []

    async def read_only(app: QctlTop, pilot: Any) -> None:
        app.notify = lambda message, **_: said.append(str(message))  # type: ignore[method-assign]
        await pilot.press("2")
        await select(app, pilot, "hopper-jobs", keys[2])
        await pilot.press("R")
        await until(pilot, lambda: "read-only: retry is disabled" in said, 10)

    dashboard(pg_schema, read_only, read_only=True)
    assert job_row(pg_schema, dead[2])[0] == "history"  # type: ignore[index]
