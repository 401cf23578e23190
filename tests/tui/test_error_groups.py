"""``g`` on the dead jobs: grouped by last error with counts (error-first triage), at
80x24 and 200x50; enter lists a group's jobs; off the dead jobs ``g`` is the jump."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from qctl.systems.azync.tui import JobsPane
from qctl.tui.app import QctlTop
from qctl.tui.widgets import PromptDialog
from qctl_store.types import DequeueParams, EnqueueParams, JobState, Source
from tests.tui.helpers import cells, row_keys, screen_text, table, until

pytestmark = pytest.mark.timeout(120)


def die(store: Any, kind: str, n: int, error: str) -> None:
    for _ in range(n):
        store.enqueue(EnqueueParams(kind=kind, max_attempts=1))
    for job in store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=n)):
        store.dead(job.id, job.lease_token, error)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_dead_jobs_grouped_by_error(store: Any, size: tuple[int, int]) -> None:
    k = f"g_{uuid.uuid4().hex[:8]}"
    die(store, k, 3, "smtp 421 try later")
    die(store, k, 1, "bad address")
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(Source.QUEUE, k, JobState.DEAD)
        await until(pilot, lambda: pane.current and len(row_keys(app, "#jobs-table")) == 4)
        table(app, "#jobs-table").focus()
        await pilot.press("g")
        await until(pilot, lambda: len(row_keys(app, "#error-groups")) == 2)
        groups = table(app, "#error-groups")
        assert groups.display and not table(app, "#jobs-table").display
        assert [cells(app, "#error-groups", r)[:3] for r in row_keys(app, "#error-groups")] == [
            ["3", "smtp <n> try later", f"{k} 3"],
            ["1", "bad address", f"{k} 1"],
        ]
        await until(pilot, lambda: "smtp <n> try later" in screen_text(app))
        assert "grouped by error 2 errors over 4 jobs" in screen_text(app)
        # enter: the group's jobs, listed as jobs again, by the longest text of the group
        assert app.screen.focused is groups
        await pilot.press("enter")
        await until(pilot, lambda: pane.current and len(row_keys(app, "#jobs-table")) == 3)
        assert pane.filter_text == f"{k} error:try later" and not pane.grouped
        assert table(app, "#jobs-table").display and not groups.display


async def test_g_off_the_dead_jobs_is_the_jump(store: Any) -> None:
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        await until(pilot, lambda: pane.page is not None)
        table(app, "#jobs-table").focus()
        assert pane.state is None
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        assert not pane.grouped
