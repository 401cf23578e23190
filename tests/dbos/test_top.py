"""``qctl top`` on a DBOS database: polling, the workflow browser and detail, actions
behind confirmation, read-only."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from textual.widgets import DataTable, Static

from qctl.systems.dbos.database import Database
from qctl.tui.dbos import DbosTop
from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App
from tests.tui.helpers import until

INTERVAL = 1.0


def cells(app: DbosTop, table_id: str) -> dict[str, list[str]]:
    t: DataTable[Any] = app.query_one(f"#{table_id}", DataTable)
    return {str(key.value): [str(c) for c in t.get_row(key)] for key in list(t.rows)}


def test_top_shows_a_workflow_finishing_within_two_polls(dbos_app: App, run: Run) -> None:
    db = Database(dbos_app.url)

    async def scenario() -> None:
        app = DbosTop(db, db.location, read_only=False, interval=INTERVAL)
        async with app.run_test(size=(160, 45)) as pilot:
            status = str(app.query_one("#status", Static).render())
            assert "polling every 1s" in status
            app.query_one("#tabs").active = "workflows"  # type: ignore[attr-defined]
            wf_id = dbos_app.enqueue("slow", 3)
            await until(pilot, lambda: cells(app, "wf-list")[wf_id][1] == "PENDING", 15)
            # The moment the screen first shows SUCCESS, against the commit time DBOS
            # recorded: at most two polls apart (plus one poll's own read and paint).
            await until(pilot, lambda: cells(app, "wf-list")[wf_id][1] == "SUCCESS", 15)
            shown = time.time()
            done = data(run("workflows", "show", wf_id, "-o", "json"))
            assert shown - done["completed_at"] / 1000 < 2 * INTERVAL + 0.5

            # enter opens the detail with the step timeline
            table: DataTable[Any] = app.query_one("#wf-list", DataTable)
            table.focus()
            table.move_cursor(row=list(cells(app, "wf-list")).index(wf_id))
            await pilot.press("enter")
            await until(pilot, lambda: len(cells(app.screen, "wf-steps")) == 3)  # type: ignore[arg-type]
            head = str(app.screen.query_one("#wf-head", Static).render())
            assert wf_id in head and "SUCCESS" in head and "output 3" in head
            await pilot.press("escape")

            # C cancels after confirmation; the running workflow stops
            victim = dbos_app.enqueue("slow", 20)
            await until(pilot, lambda: cells(app, "wf-list")[victim][1] == "PENDING", 15)
            table.move_cursor(row=list(cells(app, "wf-list")).index(victim))
            await pilot.press("C")
            await pilot.press("y")
            await until(pilot, lambda: cells(app, "wf-list")[victim][1] == "CANCELLED", 10)

            app.query_one("#tabs").active = "overview"  # type: ignore[attr-defined]
            await until(pilot, lambda: "slow" in cells(app, "ov-names"), 5)

    try:
        asyncio.run(scenario())
    finally:
        db.close()


def test_top_read_only_hides_and_refuses_actions(dbos_app: App) -> None:
    db = Database(dbos_app.url, read_only=True)

    async def scenario() -> None:
        app = DbosTop(db, db.location, read_only=True, interval=INTERVAL)
        async with app.run_test(size=(160, 45)) as pilot:
            assert "[read-only]" in str(app.query_one("#status", Static).render())
            for action in ("cancel", "resume", "delete"):
                assert app.check_action(action, ()) is False
            wf_id = dbos_app.enqueue("slow", 30)
            app.query_one("#tabs").active = "workflows"  # type: ignore[attr-defined]
            await until(pilot, lambda: cells(app, "wf-list")[wf_id][1] == "PENDING", 15)
            await pilot.press("C")
            await pilot.press("y")
            await pilot.pause(1.0)
            assert cells(app, "wf-list")[wf_id][1] == "PENDING"

    try:
        asyncio.run(scenario())
    finally:
        db.close()


def test_database_text_is_drawn_escaped() -> None:
    from qctl.tui.dbos import _text, clean

    assert _text("evil\x1b]52;c;aGk=\x07name").plain == "evil\\x1b]52;c;aGk=\\x07name"
    assert clean("[bold]x[/bold]\nnext").plain == "[bold]x[/bold]\nnext"  # not markup


def test_question_mark_opens_the_dbos_keys_in_azyncs_help_screen(dbos_app: App) -> None:
    from qctl.tui import dbos as dbos_top
    from qctl.tui.widgets import HelpScreen

    db = Database(dbos_app.url)

    async def scenario() -> None:
        app = DbosTop(db, db.location, read_only=False, interval=INTERVAL)
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            shown = str(app.screen.query_one("#help", Static).render())
            assert shown.strip() == dbos_top.HELP.strip()
            assert "C cancel   R resume   D delete" in shown and "Jobs:" not in shown
            # every key the help names is bound on the dashboard
            keys = {b.key for b in DbosTop.BINDINGS}  # type: ignore[union-attr]
            assert {"C", "R", "D", "r", "q", "question_mark"} <= keys
            await pilot.press("question_mark")  # closes it, as on azync's dashboard
            await until(pilot, lambda: not isinstance(app.screen, HelpScreen))

    try:
        asyncio.run(scenario())
    finally:
        db.close()
