"""What the dashboard says at 80x24: the confirmation names its whole target (never a
password), the help wraps, values read as the command line writes them, Esc lets an
applied filter go, an error notice leaves with its screen."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Static

from qctl.core import audit
from qctl.systems import get, load
from qctl.systems.azync.tui import JobsPane
from qctl.tui.app import QctlTop
from qctl.tui.widgets import ConfirmDialog, HelpScreen, hang
from qctl_store.types import DequeueParams, EnqueueParams, Source
from tests.tui.helpers import row_keys, screen_text, table, until

pytestmark = pytest.mark.timeout(120)

SMALL = (80, 24)


def kind() -> str:
    return f"tui_{uuid.uuid4().hex[:10]}"


def dead_job(store: Any, k: str) -> uuid.UUID:
    store.enqueue(EnqueueParams(kind=k, max_attempts=1))
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k))
    store.dead(job.id, job.lease_token, "boom")
    return job.id


def unwrapped(app: QctlTop) -> str:
    """The screen's words on one line: a text wrapped over lines reads whole."""
    return " ".join(w for line in screen_text(app).splitlines() for w in line.strip("│█▌ ").split())


async def test_the_confirmation_names_its_whole_target_without_a_password(
    store: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    k = kind()
    dead_job(store, k)
    dsn = "postgresql://postgres:hunter2@127.0.0.1:5432/walk"
    where = audit.where("azync", "walkpg", dsn, "legacy_schema_at_the_end", "postgres")
    app = QctlTop(store, live=False, location="test", audit_where=where)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(Source.QUEUE, k, None)
        await until(pilot, lambda: pane.current and len(row_keys(app, "#jobs-table")) == 1)
        table(app, "#jobs-table").focus()
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause(0.1)
        said = unwrapped(app)
        assert "context walkpg: postgresql://postgres:***@127.0.0.1:5432/walk," in said
        assert "schema legacy_schema_at_the_end?" in said
        assert "hunter2" not in screen_text(app)
        assert "Yes (y)" in said
        await pilot.press("n")


@pytest.mark.parametrize("system", ["azync", "dbos", "dispatch", "hopper", "oban", "river"])
async def test_the_help_wraps_at_80_columns_and_scrolls_to_its_end(system: str, store: Any) -> None:
    """Each system's help at 80x24: its lines wrapped inside the frame (nothing a scroll
    sideways away), the text scrolled down to its last words."""
    text = load(get(system).screens).help_text()
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SMALL) as pilot:
        app.push_screen(HelpScreen(text))
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        dialog = app.screen.query_one("#dialog", VerticalScroll)
        assert dialog.region.right <= 80 and dialog.max_scroll_x == 0
        shown = str(app.screen.query_one("#help", Static).render())
        assert shown.split() == text.split()  # every word, wrapped
        assert max(map(len, shown.splitlines())) <= dialog.scrollable_content_region.width
        assert "q     quit (top" in screen_text(app) and "level)" in screen_text(app)
        dialog.scroll_end(animate=False)
        await pilot.pause()
        assert text.split()[-1] in screen_text(app)


def test_a_help_paragraph_cut_where_it_was_written_is_filled_again() -> None:
    text = (
        "  p          pause / resume automatic refresh            q     quit (top level)\n"
        "Bars: source: the job source listed (s); state: the state listed (t), or DAG state\n"
        "  tabs with their counts.\n"
        "Actions:\n"
        "  R retry   N run now\n"
    )
    assert hang(text, 60).splitlines() == [
        "  p          pause / resume automatic refresh            q",
        "             quit (top level)",
        "Bars: source: the job source listed (s); state: the state",
        "  listed (t), or DAG state tabs with their counts.",
        "Actions:",
        "  R retry   N run now",
    ]


async def test_esc_on_the_list_lets_an_applied_filter_go(store: Any) -> None:
    k = kind()
    store.enqueue(EnqueueParams(kind=k))
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        await until(pilot, lambda: pane.page is not None)
        table(app, "#jobs-table").focus()
        await pilot.press("slash", *"nosuchthingzz", "enter")
        await until(pilot, lambda: pane.current and pane.page is not None and pane.page.unknown)
        assert pane.filter_text == "nosuchthingzz"
        await pilot.press("escape")
        await until(pilot, lambda: pane.current and k in unwrapped(app))
        assert pane.filter_text == "" and "filter -" in screen_text(app)


async def test_the_jobs_tab_opens_on_every_state_as_every_systems_does(store: Any) -> None:
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        await until(pilot, lambda: pane.page is not None)
        assert pane.state is None and "state all" in screen_text(app)


async def test_an_error_notice_leaves_with_its_screen(store: Any) -> None:
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await until(pilot, lambda: app.screen.query("#status"))
        app.command("bogus")
        await until(pilot, lambda: "bogus" in " ".join(n.message for n in app._notifications))
        await until(pilot, lambda: "bogus" in screen_text(app))
        await pilot.press("a")  # the audit trail: another screen
        await until(pilot, lambda: "audit trail" in screen_text(app))
        await pilot.pause(0.2)
        assert "bogus" not in screen_text(app) and not app._notifications
        # a dialog's outcome stays on the screen it came back to
        await pilot.press("escape")
        await until(pilot, lambda: "Overview" in screen_text(app))
        app.notify("kept")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.pause(0.2)
        assert [n.message for n in app._notifications] == ["kept"]
        assert "kept" in screen_text(app)
