"""``qctl top`` on a DBOS database: azync's shell with DBOS's screens (``qctl.systems.dbos.tui``),
driven by pilot against a real DBOS application on both backends: live or polling, the
overview, the browser's filter and marks, jump, detail with the step timeline and the
child tree, the actions (with the same rows as the command line's), read-only."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static, Tree

from qctl.systems.dbos import reads
from qctl.systems.dbos.database import Database
from qctl.systems.dbos.tui import DBOS
from qctl.systems.dbos.tui.workflows import WorkflowDetailScreen, WorkflowsPane
from qctl.tui.app import QctlTop
from qctl.tui.widgets import (
    CommandPrompt,
    ConfirmDialog,
    HelpScreen,
    PromptDialog,
    StatePicker,
    StatusBar,
)
from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App, delayed, wait_for
from tests.tui.helpers import listening, until

pytestmark = pytest.mark.timeout(180)

INTERVAL = 1.0
SIZE = (160, 50)
PARKED = "parked"
"""A queue no executor serves: what is enqueued on it stays as the action left it."""


def cells(app: QctlTop, table_id: str) -> dict[str, list[str]]:
    t: DataTable[Any] = app.screen.query_one(f"#{table_id}", DataTable)
    return {str(key.value): [str(c) for c in t.get_row(key)] for key in list(t.rows)}


def text(app: QctlTop, widget_id: str) -> str:
    return str(app.screen.query_one(f"#{widget_id}", Static).render())


def show(run: Run, wf_id: str) -> dict[str, Any]:
    result: dict[str, Any] = data(run("workflows", "show", wf_id, "-o", "json"))
    return result


def finished(run: Run, wf_id: str, want: str = "SUCCESS") -> dict[str, Any]:
    result: dict[str, Any] = wait_for(lambda: (s := show(run, wf_id))["status"] == want and s, 30)
    return result


def dashboard(
    dbos_app: App,
    scenario: Callable[[QctlTop, Any], Awaitable[None]],
    read_only: bool = False,
    clock: Callable[[], datetime] | None = None,
    poll_interval: float = INTERVAL,
    size: tuple[int, int] = SIZE,
) -> None:
    """Run ``scenario(app, pilot)`` in the dashboard on the application's database."""
    db = Database(dbos_app.url, read_only=read_only)

    async def main() -> None:
        app = QctlTop(
            db,
            system=DBOS,
            location=db.location + (" [read-only]" if read_only else ""),
            read_only=read_only,
            poll_interval=poll_interval,
            clock=clock,
        )
        async with app.run_test(size=size) as pilot:
            await scenario(app, pilot)

    try:
        asyncio.run(main())
    finally:
        db.close()


async def tab(app: QctlTop, pilot: Any, key: str) -> None:
    """Show the tab of number ``key``; the focus moves into it, and the tab stays."""
    await pilot.press(key)
    name = DBOS.tabs[int(key) - 1].name

    def focused_in_tab() -> bool:
        tab_pane = app.screen.query_one(f"#{name}")
        return app.focused is not None and tab_pane in app.focused.ancestors

    await until(pilot, focused_in_tab, 5)
    await pilot.pause(0.2)
    assert focused_in_tab(), "the focus went back to another tab"


async def type_into(pilot: Any, words: str) -> None:
    for ch in words:
        await pilot.press(ch)
    await pilot.press("enter")


async def confirm(app: QctlTop, pilot: Any) -> str:
    """Answer yes to the confirmation; its question."""
    # mounted (its No focused) before the answer: a key sooner races its on_mount
    await until(
        pilot,
        lambda: isinstance(app.screen, ConfirmDialog) and getattr(app.focused, "id", "") == "no",
        15,
    )
    question = str(app.screen.query_one("#question").render())
    await pilot.press("y")
    return question


async def prompt(app: QctlTop, pilot: Any, values: dict[str, str]) -> None:
    """Fill the prompt's fields by name (each replaced) and submit."""
    await until(pilot, lambda: isinstance(app.screen, PromptDialog), 5)
    inputs = list(app.screen.query(Input))
    for field in inputs:
        name = (field.id or "").removeprefix("field-")
        if name in values:
            field.value = values[name]
    inputs[-1].focus()
    await pilot.press("enter")


def test_a_message_sent_elsewhere_is_a_hint_on_postgres(dbos_app: App, run: Run) -> None:
    """DBOS's trigger notifies dbos_notifications_channel when a message is sent: a
    dashboard polling once a minute hears it (and still polls for status)."""
    if dbos_app.url.startswith("sqlite"):
        pytest.skip("DBOS on SQLite notifies nothing (the overview test: polling)")
    wf_id = dbos_app.enqueue("checkout", "hinted", 10)
    finished(run, wf_id)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await listening(app, pilot)
        assert app.feed is not None
        heard, refreshed = app.feed.hints, app.feed.refreshes
        dbos_app.client.send(wf_id, "hello", "hint")
        await until(pilot, lambda: app.feed is not None and app.feed.refreshes > refreshed, 30)
        assert app.feed.hints > heard

    dashboard(dbos_app, scenario, poll_interval=60)


def test_overview_counts_throughput_and_errors(dbos_app: App, run: Run) -> None:
    done = [dbos_app.enqueue("checkout", f"ov-{i}", 10) for i in range(2)]
    failed = dbos_app.enqueue("failing", 7)
    for wf_id in done:
        finished(run, wf_id)
    finished(run, failed, "ERROR")

    async def scenario(app: QctlTop, pilot: Any) -> None:
        # On PostgreSQL DBOS notifies messages, events and streams (status is polled
        # behind them); on SQLite it sends nothing.
        bar = app.screen.query_one(StatusBar)
        if dbos_app.url.startswith("sqlite"):
            await until(pilot, lambda: "polling" in str(bar.render()), 10)
            assert "every 1s" in str(bar.render())
        else:
            await until(pilot, lambda: "live" in str(bar.render()), 10)
        await until(pilot, lambda: "checkout" in cells(app, "dbos-names"), 10)
        names = cells(app, "dbos-names")
        success = reads.STATUSES.index("SUCCESS") + 1
        error = reads.STATUSES.index("ERROR") + 1
        assert int(names["checkout"][success]) >= 2
        assert int(names["failing"][error]) >= 1
        assert int(cells(app, "dbos-queue-counts")["work"][success]) >= 2
        chart = text(app, "dbos-throughput")
        assert "last hour per minute, completed" in chart
        assert "all" in chart and "checkout" in chart and "✗" in chart
        errors = cells(app, "dbos-errors")
        assert failed in errors and "card declined for 7" in errors[failed][3]
        # enter on a name opens the browser filtered on it
        t = app.screen.query_one("#dbos-names", DataTable)
        t.focus()
        t.move_cursor(row=list(cells(app, "dbos-names")).index("failing"))
        await pilot.press("enter")
        await until(pilot, lambda: failed in cells(app, "dbos-workflows"), 10)
        assert {r[2] for r in cells(app, "dbos-workflows").values()} == {"failing"}

    dashboard(dbos_app, scenario)


def test_the_overview_chart_fits_80_columns(dbos_app: App, run: Run) -> None:
    """At 80x24 the last hour's chart narrows its sparklines to the panel: the panel's
    right border and each series' totals stay on the screen."""
    finished(run, dbos_app.enqueue("checkout", "fits-80", 10))

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await until(pilot, lambda: "checkout" in text(app, "dbos-throughput"), 10)
        await pilot.pause(0.3)
        panel = app.screen.query_one("#dbos-throughput", Static)
        assert panel.region.right <= 80
        widest = max(len(line) for line in text(app, "dbos-throughput").splitlines())
        assert widest <= panel.content_size.width
        assert re.search(r"checkout .* +\d+ +\d+✗", text(app, "dbos-throughput"))

    dashboard(dbos_app, scenario, size=(80, 24))


def test_overview_reads_the_hour_again_after_an_action(dbos_app: App, run: Run) -> None:
    """The overview keeps the minutes it has counted and recounts only the last ones;
    after an action (a rewind: the workflow's completion leaves the hour) it reads the
    hour again. Its clock stands ten minutes ahead, so no recount reaches the completion."""
    wf_id = dbos_app.enqueue("checkout", "again", 5)
    finished(run, wf_id)
    ahead = datetime.now(UTC) + timedelta(minutes=10)
    db = Database(dbos_app.url)
    success = reads.STATUSES.index("SUCCESS") + 1

    def shown(app: QctlTop) -> int:
        return int(cells(app, "dbos-names").get("checkout", [""] * (success + 1))[success] or 0)

    def fresh() -> int:
        read = reads.overview(db, int(ahead.timestamp() * 1000))
        return int(read["by_name"].get("checkout", {}).get("SUCCESS", 0))

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await until(pilot, lambda: shown(app) and shown(app) == fresh(), 10)
        before = shown(app)
        await app.push_screen(WorkflowDetailScreen(wf_id))
        await until(pilot, lambda: wf_id in text(app, "dbos-wf-text"), 10)
        await pilot.press("W")
        await prompt(app, pilot, {"step": "2", "queue": PARKED})
        await confirm(app, pilot)
        await until(pilot, lambda: show(run, wf_id)["status"] == "ENQUEUED", 15)
        await pilot.press("escape")
        await until(pilot, lambda: shown(app) == fresh() < before, 10)

    try:
        dashboard(dbos_app, scenario, clock=lambda: ahead)
    finally:
        db.close()


def test_a_workflow_finishing_shows_within_two_polls_then_its_detail(
    dbos_app: App, run: Run
) -> None:
    async def scenario(app: QctlTop, pilot: Any) -> None:
        await tab(app, pilot, "2")
        wf_id = dbos_app.enqueue("slow", 5)
        await until(
            pilot, lambda: cells(app, "dbos-workflows")[wf_id][1] in ("ENQUEUED", "PENDING"), 15
        )
        # The moment the screen first shows SUCCESS, against the commit time DBOS
        # recorded: at most two polls apart (plus one poll's own read and paint).
        await until(pilot, lambda: cells(app, "dbos-workflows")[wf_id][1] == "SUCCESS", 15)
        shown = time.time()
        done = show(run, wf_id)
        assert shown - done["completed_at"] / 1000 < 2 * INTERVAL + 0.5
        t = app.screen.query_one("#dbos-workflows", DataTable)
        t.focus()
        t.move_cursor(row=list(cells(app, "dbos-workflows")).index(wf_id))
        await pilot.press("enter")
        await until(pilot, lambda: len(cells(app, "dbos-steps")) == 5, 10)
        head = " ".join(text(app, "dbos-wf-text").split())
        assert wf_id in head and "SUCCESS" in head and "output 10" in head
        steps = cells(app, "dbos-steps")
        assert [s[1] for s in steps.values()] == ["tick"] * 5
        assert [s[4] for s in steps.values()] == ["0", "1", "2", "3", "4"]
        await pilot.press("escape")
        assert isinstance(app.screen.query_one("#dbos-workflows"), DataTable)

    dashboard(dbos_app, scenario)


def test_filter_and_jump(dbos_app: App, run: Run) -> None:
    tag = uuid.uuid4().hex[:8]
    ok = dbos_app.enqueue("checkout", "j", 1, id=f"jump-{tag}-ok")
    bad = dbos_app.enqueue("failing", 2, id=f"jump-{tag}-bad")
    finished(run, ok)
    finished(run, bad, "ERROR")

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await tab(app, pilot, "2")
        pane = app.screen.query_one(WorkflowsPane)
        await until(pilot, lambda: ok in cells(app, "dbos-workflows"), 10)
        await pilot.press("slash")
        await type_into(pilot, f"id=jump-{tag} error")
        await until(pilot, lambda: list(cells(app, "dbos-workflows")) == [bad], 10)
        assert pane.filter == reads.WorkflowFilter(
            status=("ERROR",), workflow_id_prefix=f"jump-{tag}"
        )
        await pilot.press("slash")
        await type_into(pilot, "nosuchkey=1")
        assert list(cells(app, "dbos-workflows")) == [bad], "a bad filter keeps the last one"
        # : jumps by a unique prefix; an ambiguous one says so
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await type_into(pilot, f"jump-{tag}-o")
        await until(pilot, lambda: isinstance(app.screen, WorkflowDetailScreen), 10)
        assert app.screen.record_id == ok
        await until(pilot, lambda: ok in text(app, "dbos-wf-text"), 10)
        await pilot.press("escape")
        await pilot.press("colon")  # g groups by error on this tab; elsewhere it jumps
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await type_into(pilot, f"jump-{tag}")
        await until(pilot, lambda: any("ambiguous" in n.message for n in app._notifications), 10)
        # the command line narrows to a status (DBOS's own, completed from its start),
        # then the status picker (t) to every status again
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, CommandPrompt))
        await pilot.press(*"workflows SU", "tab", "enter")
        await until(pilot, lambda: pane.state == "SUCCESS" and ok in cells(app, "dbos-workflows"))
        assert bad not in cells(app, "dbos-workflows")
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, StatePicker))
        await pilot.press("a", "enter")
        await until(pilot, lambda: pane.state is None and bad in cells(app, "dbos-workflows"), 10)

    dashboard(dbos_app, scenario)


def test_marked_workflows_cancel_after_one_confirmation(dbos_app: App, run: Run) -> None:
    tag = uuid.uuid4().hex[:8]
    # Parked: they stay ENQUEUED, whatever the application's executor is busy with.
    ids = [dbos_app.enqueue("slow", 50, queue=PARKED, id=f"bulk-{tag}-{i}") for i in range(4)]

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await tab(app, pilot, "2")
        await pilot.press("slash")
        await type_into(pilot, f"id=bulk-{tag}")
        await until(pilot, lambda: set(cells(app, "dbos-workflows")) == set(ids), 10)
        t = app.screen.query_one("#dbos-workflows", DataTable)
        t.move_cursor(row=0)
        await pilot.press("space", "space")  # the first two rows
        pane = app.screen.query_one(WorkflowsPane)
        marked = list(pane.marked)
        assert marked == list(cells(app, "dbos-workflows"))[:2]
        assert "2 marked" in text(app, "dbos-wf-filter")
        await pilot.press("C")
        assert (await confirm(app, pilot)).startswith("Cancel 2 dbos workflows (2 ENQUEUED")
        await until(pilot, lambda: all(show(run, i)["status"] == "CANCELLED" for i in marked), 15)
        # * marks every match: the filter selects only what cancel takes
        live = [i for i in ids if show(run, i)["status"] == "ENQUEUED"]
        assert len(live) == 2 and not set(live) & set(marked)
        await pilot.press("asterisk")
        assert "every matching workflow marked" in text(app, "dbos-wf-filter")
        await pilot.press("C")
        question = await confirm(app, pilot)
        assert question.startswith("Cancel 2 dbos workflows (2 ENQUEUED")
        await until(pilot, lambda: all(show(run, i)["status"] == "CANCELLED" for i in ids), 15)
        await until(pilot, lambda: "marked" not in text(app, "dbos-wf-filter"), 5)
        # a fork of the marked ones: one new workflow each
        t.move_cursor(row=0)
        await pilot.press("space", "space")
        await pilot.press("F")
        await prompt(app, pilot, {"step": "1", "queue": PARKED})
        assert (await confirm(app, pilot)).startswith("Fork 2 dbos workflows (2 CANCELLED")
        db = Database(dbos_app.url)
        try:
            await until(pilot, lambda: all(reads.related(db, "forked_from", i) for i in marked), 15)
        finally:
            db.close()

    dashboard(dbos_app, scenario)


IDENTITY = {"workflow_id", "forked_from", "created_at", "updated_at", "dequeued_at"}


def normal_rows(db: Database, wf_id: str) -> dict[str, Any]:
    """A workflow's rows as the action left them, its identity and instants aside (an
    instant only as whether it is set)."""
    wf = reads.get_workflow(db, wf_id)
    out: dict[str, Any] = {
        k: (v is not None)
        if k.endswith(("_at", "_ms"))
        else (v.text() if hasattr(v, "text") else v)
        for k, v in wf.items()
        if k not in IDENTITY
    }
    out["steps"] = [
        {
            "function_id": s["function_id"],
            "function_name": s["function_name"],
            "output": s["output"].text() if s["output"] else None,
            "error": s["error"].text() if s["error"] else None,
        }
        for s in reads.list_steps(db, wf_id)
    ]
    return out


def test_fork_and_rewind_leave_the_rows_the_command_line_does(dbos_app: App, run: Run) -> None:
    """The same fork, and the same rewind, once by ``qctl workflows`` and once from the
    dashboard, onto a queue no executor serves: the rows each leaves are the same."""
    tag = uuid.uuid4().hex[:8]
    by_cli, by_tui = (dbos_app.enqueue("checkout", "same", 5, id=f"same-{tag}-{w}") for w in "ct")
    for wf_id in (by_cli, by_tui):
        finished(run, wf_id)
    cli_fork = data(
        run("workflows", "fork", by_cli, "--from-step", "3", "--on-queue", PARKED, "-o", "json")
    )["new_workflow_id"]
    rewind = run("workflows", "rewind", by_cli, "--from-step", "2", "--on-queue", PARKED, "--yes")
    assert rewind.exit_code == 0, rewind.output
    db = Database(dbos_app.url)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(by_tui))
        await until(pilot, lambda: by_tui in text(app, "dbos-wf-text"), 10)
        await pilot.press("F")
        await prompt(app, pilot, {"step": "3", "queue": PARKED})
        assert (await confirm(app, pilot)).startswith("Fork 1 dbos workflow (1 SUCCESS")
        await until(pilot, lambda: reads.related(db, "forked_from", by_tui), 15)
        await pilot.press("W")
        await prompt(app, pilot, {"step": "2", "queue": PARKED})
        assert (await confirm(app, pilot)).startswith("Rewind 1 dbos workflow (1 SUCCESS")
        await until(pilot, lambda: show(run, by_tui)["status"] == "ENQUEUED", 15)

    try:
        dashboard(dbos_app, scenario)
        [tui_fork] = [r["workflow_id"] for r in reads.related(db, "forked_from", by_tui)]
        forked = normal_rows(db, tui_fork)
        assert forked == normal_rows(db, cli_fork)
        assert [s["function_id"] for s in forked["steps"]] == [1, 2], "steps before 3 copied"
        assert forked["status"] == "ENQUEUED" and forked["queue_name"] == PARKED
        rewound = normal_rows(db, by_tui)
        assert rewound == normal_rows(db, by_cli)
        assert [s["function_id"] for s in rewound["steps"]] == [1]
    finally:
        db.close()


def test_delay_moves_a_delayed_workflow_as_the_command_line_does(dbos_app: App, run: Run) -> None:
    tag = uuid.uuid4().hex[:8]
    by_cli, by_tui = (f"delay-{tag}-{w}" for w in "ct")
    for wf_id in (by_cli, by_tui):
        delayed(dbos_app, wf_id, queue_name=PARKED)
    assert run("workflows", "set-delay", by_cli, "--delay", "2h", "--yes").exit_code == 0

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(by_tui))
        await until(pilot, lambda: by_tui in text(app, "dbos-wf-text"), 10)
        await pilot.press("L")
        await prompt(app, pilot, {"delay": "2h"})
        assert (await confirm(app, pilot)).startswith("Set-delay 1 dbos workflow (1 DELAYED")
        await until(
            pilot,
            lambda: show(run, by_tui)["delay_until_epoch_ms"] > time.time() * 1000 + 5400_000,
            15,
        )
        # a bad duration is one notice; nothing is asked or changed
        before = show(run, by_tui)["delay_until_epoch_ms"]
        await pilot.press("L")
        await prompt(app, pilot, {"delay": "soon"})
        await pilot.pause(0.5)
        assert not isinstance(app.screen, ConfirmDialog)
        assert show(run, by_tui)["delay_until_epoch_ms"] == before

    dashboard(dbos_app, scenario)
    cli, tui = show(run, by_cli), show(run, by_tui)
    assert tui["status"] == cli["status"] == "DELAYED"
    assert abs(tui["delay_until_epoch_ms"] - cli["delay_until_epoch_ms"]) < 120_000


def test_detail_draws_the_tree_of_child_workflows(dbos_app: App, run: Run) -> None:
    parent = dbos_app.enqueue("parent", 4)
    finished(run, parent)
    child = f"{parent}-child"

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(parent))
        tree: Tree[str] = app.screen.query_one("#dbos-children", Tree)
        await until(pilot, lambda: len(tree.root.children) == 1, 10)
        node = tree.root.children[0]
        assert node.data == child and "SUCCESS" in str(node.label) and "child" in str(node.label)
        assert str(tree.border_title) == "child workflows: 1"
        assert child in [s[5] for s in cells(app, "dbos-steps").values()]
        tree.focus()
        tree.move_cursor(node)
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, WorkflowDetailScreen) and app.screen.record_id == child,
            10,
        )
        await until(
            pilot, lambda: f"parent {parent}" in " ".join(text(app, "dbos-wf-text").split())
        )

    dashboard(dbos_app, scenario)


def test_detail_shows_streams(dbos_app: App, run: Run) -> None:
    wf_id = dbos_app.enqueue("streaming", 2)
    finished(run, wf_id)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(wf_id))
        await until(pilot, lambda: len(cells(app, "dbos-events")) == 4, 10)
        values = [r[2] for r in cells(app, "dbos-events").values()]
        assert values == ["{'done': 1, 'of': 2}", "{'done': 2, 'of': 2}", "'last'", "(closed)"]

    dashboard(dbos_app, scenario)


def test_read_only_hides_and_refuses_actions(dbos_app: App, run: Run) -> None:
    wf_id = dbos_app.enqueue("slow", 30, queue=PARKED)  # stays ENQUEUED

    async def scenario(app: QctlTop, pilot: Any) -> None:
        assert "[read-only]" in str(app.screen.query_one(StatusBar).render())
        await tab(app, pilot, "2")
        await until(pilot, lambda: cells(app, "dbos-workflows")[wf_id][1] == "ENQUEUED", 15)
        pane = app.screen.query_one(WorkflowsPane)
        for action in DBOS.writes:
            assert pane.check_action(action, ()) is False
        t = app.screen.query_one("#dbos-workflows", DataTable)
        t.move_cursor(row=list(cells(app, "dbos-workflows")).index(wf_id))
        await pilot.press("C")
        await pilot.press("y")
        pane.action_wf_cancel()  # called anyway: the shell refuses it
        await until(pilot, lambda: any("read-only" in n.message for n in app._notifications))
        await pilot.pause(1.0)
        assert show(run, wf_id)["status"] == "ENQUEUED"
        assert not isinstance(app.screen, ConfirmDialog)

    try:
        dashboard(dbos_app, scenario, read_only=True)
    finally:
        assert run("workflows", "cancel", wf_id, "--yes").exit_code == 0


def test_question_mark_shows_the_dbos_keys(dbos_app: App) -> None:
    async def scenario(app: QctlTop, pilot: Any) -> None:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = str(app.screen.query_one("#help", Static).render())
        assert shown.split() == DBOS.help_text().split()  # wrapped to the terminal
        assert "F fork from step N" in shown and "Jobs:" not in shown
        await pilot.press("question_mark")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))

    dashboard(dbos_app, scenario)


def test_the_help_explains_every_column_and_bar(dbos_app: App, run: Run) -> None:
    from tests.tui.test_help import bar_labels, columns

    glossary = " ".join(DBOS.help_text().split("Columns and bars", 1)[1].split())
    parent = dbos_app.enqueue("parent", 1)
    finished(run, parent)
    seen: set[str] = set()
    headers: set[str] = set()

    async def scenario(app: QctlTop, pilot: Any) -> None:
        for key in "12345":
            await tab(app, pilot, key)
            await pilot.pause(INTERVAL)
            headers.update(columns(app))
            seen.update(bar_labels(app))
        await app.push_screen(WorkflowDetailScreen(parent))
        await until(pilot, lambda: len(cells(app, "dbos-steps")) == 2, 10)
        headers.update(columns(app))
        seen.update(bar_labels(app))

    dashboard(dbos_app, scenario)
    seen |= headers
    assert {"workflow id", "oldest enqueued", "output / error", "last fired", "page"} <= seen
    unexplained = {w for w in seen if not re.search(rf"(?<![\w-]){re.escape(w)}: \S", glossary)}
    assert not unexplained
    # Every table's header is its declaration's (which the help's lines are built from).
    declared = {
        c.name
        for tab in DBOS.tabs
        for _, cols in [
            ("", getattr(DBOS.pane_class(tab.name), "columns", ())),
            *getattr(DBOS.pane_class(tab.name), "tables", ()),
        ]
        for c in cols
    }
    assert headers <= declared, headers - declared


def test_database_text_is_drawn_escaped() -> None:
    from qctl.systems.dbos.tui import cells as dbos_cells
    from qctl.tui.widgets import table_cell

    assert table_cell("evil\x1b]52;c;aGk=\x07name").plain == "evil\\x1b]52;c;aGk=\\x07name"
    assert dbos_cells.value("a\nb\x1b[2J") == "a b\\x1b[2J"


def test_detail_puts_the_trees_steps_on_one_timeline(dbos_app: App, run: Run) -> None:
    parent = dbos_app.enqueue("parent", 3)
    finished(run, parent)
    child = f"{parent}-child"
    parent_steps = len(data(run("workflows", "steps", parent, "-o", "json")))

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(parent))
        await until(pilot, lambda: len(cells(app, "dbos-timeline")) == parent_steps + 1, 10)
        rows = cells(app, "dbos-timeline")
        t = app.screen.query_one("#dbos-timeline", DataTable)
        assert str(t.border_title) == f"timeline: {parent_steps + 1} step(s) of the tree"
        tick = rows[f"{child}\x1f1"]
        # The child's step, indented under its parent, within the parent's time.
        assert tick[2] == "└ child" and tick[4] == "tick" and "█" in tick[5]
        assert float(tick[0].strip("+s")) >= 0 and tick[1]
        starts = [float(r[0].strip("+s")) for r in rows.values()]
        assert starts == sorted(starts)
        assert {r[2] for r in rows.values()} == {"parent", "└ child"}
        t.focus()
        t.move_cursor(row=list(rows).index(f"{child}\x1f1"))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, WorkflowDetailScreen) and app.screen.record_id == child,
            10,
        )


def test_mark_all_acts_on_exactly_the_confirmed_set(dbos_app: App, run: Run) -> None:
    tag = uuid.uuid4().hex[:8]
    ids = [dbos_app.enqueue("slow", 50, queue=PARKED, id=f"all-{tag}-{i}") for i in range(2)]
    later: list[str] = []

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await tab(app, pilot, "2")
        await pilot.press("slash")
        await type_into(pilot, f"id=all-{tag}")
        await until(pilot, lambda: set(cells(app, "dbos-workflows")) == set(ids), 10)
        await pilot.press("asterisk", "C")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), 15)
        # matches that appear while the question is open were not confirmed
        later.extend(
            dbos_app.enqueue("slow", 50, queue=PARKED, id=f"all-{tag}-{i}") for i in (7, 8, 9)
        )
        assert (await confirm(app, pilot)).startswith("Cancel 2 dbos workflows (2 ENQUEUED")
        await until(pilot, lambda: all(show(run, i)["status"] == "CANCELLED" for i in ids), 15)
        await pilot.pause(0.5)
        assert [show(run, i)["status"] for i in later] == ["ENQUEUED"] * 3

    dashboard(dbos_app, scenario)


def test_delete_tree_leaves_the_rows_the_command_line_does(dbos_app: App, run: Run) -> None:
    """``E`` on a parent deletes it and its child as ``workflows delete --children``."""
    tag = uuid.uuid4().hex[:8]
    by_cli, by_tui = (dbos_app.enqueue("parent", 2, id=f"tree-{tag}-{w}") for w in "ct")
    for wf_id in (by_cli, by_tui):
        finished(run, wf_id)
    trees = {
        w: [w, *(c["workflow_id"] for c in show(run, w)["children"])] for w in (by_cli, by_tui)
    }
    assert all(len(t) == 2 for t in trees.values())
    assert run("workflows", "delete", by_cli, "--children", "--yes").exit_code == 0
    db = Database(dbos_app.url)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(by_tui))
        await until(pilot, lambda: by_tui in text(app, "dbos-wf-text"), 10)
        await pilot.press("E")
        question = await confirm(app, pilot)
        assert question.startswith("Delete 2 dbos workflows (2 SUCCESS")
        await until(pilot, lambda: not reads.existing_ids(db, trees[by_tui]), 15)

    try:
        dashboard(dbos_app, scenario)
        assert reads.existing_ids(db, trees[by_cli] + trees[by_tui]) == []
    finally:
        db.close()


def test_g_groups_failed_workflows_by_error(dbos_app: App, run: Run) -> None:
    tag = uuid.uuid4().hex[:8]
    ids = [dbos_app.enqueue("failing", n, id=f"grp-{tag}-{i}") for i, n in enumerate([4, 4, 5])]
    for wf_id in ids:
        finished(run, wf_id, "ERROR")

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await tab(app, pilot, "2")
        await pilot.press("slash")
        await type_into(pilot, f"id=grp-{tag}")
        await until(pilot, lambda: set(cells(app, "dbos-workflows")) == set(ids), 10)
        await pilot.press("g")
        await until(pilot, lambda: len(cells(app, "dbos-error-groups")) == 1, 10)
        groups = list(cells(app, "dbos-error-groups").values())
        # 4 and 5 folded: one fingerprint
        assert [(g[0], g[1], g[2], g[3]) for g in groups] == [
            ("3", "ERROR", "failing", "CardDeclined('card declined for <n>')"),
        ]
        assert "1 error group(s)" in text(app, "dbos-wf-filter")
        await pilot.press("enter")  # the group's newest workflow
        await until(pilot, lambda: isinstance(app.screen, WorkflowDetailScreen), 10)
        assert app.screen.record_id in ids
        await pilot.press("escape")
        await pilot.press("g")
        await until(pilot, lambda: app.screen.query_one("#dbos-workflows").display, 10)

    dashboard(dbos_app, scenario)


def test_cancel_tree_leaves_the_rows_the_command_line_does(dbos_app: App, run: Run) -> None:
    """``T`` on a finished parent whose child still waits cancels the child (the parent,
    finished, is skipped) as ``workflows cancel --children`` does."""
    tag = uuid.uuid4().hex[:8]
    by_cli, by_tui = (dbos_app.enqueue("hands_off", 120, id=f"ctree-{tag}-{w}") for w in "ct")
    kids = {}
    for wf_id in (by_cli, by_tui):
        [kids[wf_id]] = [c["workflow_id"] for c in finished(run, wf_id)["children"]]
        wait_for(lambda k=kids[wf_id]: show(run, k)["status"] == "PENDING")
    assert run("workflows", "cancel", by_cli, "--children", "--yes").exit_code == 0
    db = Database(dbos_app.url)

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await app.push_screen(WorkflowDetailScreen(by_tui))
        await until(pilot, lambda: by_tui in text(app, "dbos-wf-text"), 10)
        await pilot.press("T")
        question = await confirm(app, pilot)
        assert question.startswith("Cancel 1 dbos workflow (1 PENDING")
        await until(pilot, lambda: show(run, kids[by_tui])["status"] == "CANCELLED", 15)

    try:
        dashboard(dbos_app, scenario)
        for parent, kid in kids.items():
            assert show(run, parent)["status"] == "SUCCESS"
            assert show(run, kid)["status"] == "CANCELLED"
        # the same rows but for whose child each is and when its recv's sleep ends
        tui_kid, cli_kid = (normal_rows(db, kids[w]) for w in (by_tui, by_cli))
        for rows in (tui_kid, cli_kid):
            del rows["parent_workflow_id"], rows["steps"]
        assert tui_kid == cli_kid
    finally:
        db.close()
