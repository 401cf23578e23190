"""Dashboard tables use the width they have: fixed columns (counts, states, times) keep
theirs, flexible ones (a kind, an error) share the rest and are cut with an ellipsis, so a
~150-character kind never pushes the counts off the screen (at 80 and at 200 columns); a
kind is cut in its middle, so two that share a long prefix still differ."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from qctl.systems.azync.tui import JobsPane
from qctl.tui.app import QctlTop
from qctl_store.types import DAGParams, DAGTask, DequeueParams, EnqueueParams, JobState, Source
from tests.tui.helpers import row_keys, screen_text, table, until

pytestmark = pytest.mark.timeout(120)

ERROR = "connection refused by upstream " + "x" * 300 + " END"


def long_kind() -> str:
    return f"w_{uuid.uuid4().hex[:8]}_" + "k" * 140


def arrange(store: Any, k: str) -> None:
    for _ in range(3):
        store.enqueue(EnqueueParams(kind=k))
    store.enqueue(EnqueueParams(kind=k, max_attempts=1))
    store.enqueue(EnqueueParams(kind=k, max_attempts=1))
    for job in store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k, limit=2)):
        store.dead(job.id, job.lease_token, ERROR)


def line_with(text: str, needle: str) -> str:
    """The first table line (a border's title aside) with ``needle``."""
    return next(line for line in text.splitlines() if needle in line and "╭" not in line)


async def settled(pilot: Any, app: QctlTop, needle: str) -> str:
    """The line with ``needle`` once the table has measured its cells (on idle)."""
    await until(pilot, lambda: line_with(screen_text(app), needle))
    await pilot.pause()
    return line_with(screen_text(app), needle)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_a_long_kind_is_cut_and_the_counts_stay(store: Any, size: tuple[int, int]) -> None:
    k = long_kind()
    arrange(store, k)
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=size) as pilot:
        await pilot.press("slash", *k[:10], "enter")
        await until(pilot, lambda: row_keys(app, "#queues") == [f"queue\x1f{k}"])
        cut = f"{k[:3]}"  # the kind's start, then "…" and its end
        await until(pilot, lambda: line_with(screen_text(app), "…k"))
        text = screen_text(app)
        header = line_with(text, "dead")
        row = line_with(text, "…k")
        assert len(row) <= size[0] and cut in row and k not in row
        head, tail = row.split("…", 1)
        start, (end, *cells) = head.split()[-1], tail.split()
        assert k.startswith(start) and k.endswith(end)  # both ends kept
        # pending, scheduled, active ... dead: every count column is on the screen, under
        # its short header where the terminal is narrow
        narrow = size[0] == 80
        shown = (
            ("pend", "sched", "act", "wait", "blk", "unc", "dead", "paus")
            if narrow
            else ("pending", "scheduled", "active", "wait", "block", "uncert", "dead", "paused")
        )
        assert set(shown) <= set(header.split()), header
        assert ("backlog" in header) is not narrow
        assert cells[:3] == ["3", "0", "0"] and "2" in cells
        # the kind takes what the fixed columns leave: more on a wider terminal
        assert len(start) + len(end) >= (90 if size[0] == 200 else 6)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_an_error_takes_the_width_left(store: Any, size: tuple[int, int]) -> None:
    k = f"w_{uuid.uuid4().hex[:8]}"
    arrange(store, k)
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(Source.QUEUE, k, JobState.DEAD)
        await until(pilot, lambda: pane.current and len(row_keys(app, "#jobs-table")) == 2)
        await until(pilot, lambda: line_with(screen_text(app), "connection"))
        row = line_with(screen_text(app), "connection")
        assert len(row) <= size[0] and row.rstrip(" │").endswith("…")
        error = row[row.index("connection") :].rstrip(" │")
        # 50 characters was the fixed cut before; at 200 columns it takes far more
        assert len(error) > (120 if size[0] == 200 else 10)
        assert table(app, "#jobs-table").virtual_size.width <= size[0]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_overview_panels_stay_usable(size: tuple[int, int]) -> None:
    """At 80x24 the DAG panel kept 4 columns (its names gone) and the charts wrapped;
    the queues panel is as tall as its rows and the charts take the rest."""
    from tests.tui.test_snapshots import NOW, FixedStore

    app = QctlTop(FixedStore(), live=False, location="test", clock=lambda: NOW)
    async with app.run_test(size=size) as pilot:
        await until(
            pilot, lambda: "etl.nig" in screen_text(app) and "event ledger" in screen_text(app)
        )
        await pilot.pause()
        text = screen_text(app)
        assert all(len(line) <= size[0] for line in text.splitlines())
        dags = app.screen.query_one("#dag-states")
        assert dags.size.width >= 20
        assert "etl.nig" in line_with(text, "running")  # a DAG name beside its live runs
        assert "1400" in line_with(text, "enqueued")  # today's count, on the series' line
        assert "no delivery  3" in text
        # every queue row is on the screen, and the panel ends below the last one
        for kind in ("audi", "bill", "emai", "repo"):
            assert kind in text
        queues = app.screen.query_one("#queues")
        # four rows, the header, the border (and at 80 columns a horizontal scrollbar)
        assert queues.outer_size.height == 4 + 3 + queues.scrollbar_size_horizontal


async def test_at_80_columns_kinds_keep_both_ends_and_the_footer_quit_and_help(
    store: Any,
) -> None:
    """Two kinds that share a long prefix, cut to the width left: their ends tell them
    apart. The footer's longest line (Jobs) still shows quit and help."""
    tag = uuid.uuid4().hex[:6]
    kinds = [f"approval.{tag}.workflow.step.requested", f"approval.{tag}.workflow.step.approved"]
    for k in kinds:  # the busiest of the last hour: the chart shows the busiest three
        for _ in range(5):
            store.enqueue(EnqueueParams(kind=k))
        for job in store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k, limit=4)):
            store.ack(job.id, job.lease_token)
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *f"approval.{tag}", "enter")
        await until(pilot, lambda: len(row_keys(app, "#queues")) == 2)
        await until(pilot, lambda: screen_text(app).count("…") >= 2)
        await pilot.pause()
        text = screen_text(app)
        rows = [line for line in text.splitlines() if "│ queue" in line]
        assert len(rows) == 2 and all(len(line) <= 80 for line in rows)
        assert {row.split()[2][-3:] for row in rows} == {"ted", "ved"}  # the kinds' ends
        # The last hour's chart names them apart too.
        assert {f"{k[:5]}…{k[-4:]}" in text for k in kinds} == {True}
        await pilot.press("2")
        await until(pilot, lambda: "Filter" in screen_text(app).splitlines()[-1])
        footer = screen_text(app).splitlines()[-1]
        assert footer.startswith("q Quit ? Help"), footer


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_tables_are_sized_from_their_first_page(
    store: Any, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame of a table shown for the first time (every tab, and the dead jobs
    grouped by error, a table displayed again) has the widths of the frames after it:
    its flexible columns are not drawn at their narrowest until its size arrives (nor
    its columns at their header's widths until the app is idle)."""
    from qctl.tui import widgets

    k = f"w_{uuid.uuid4().hex[:8]}"
    arrange(store, k)
    store.create_dag(DAGParams(name=k + "_" + "d" * 120, tasks=[DAGTask("a", k)]))
    drawn: dict[tuple[str, str], set[tuple[int, ...]]] = {}
    """The widths each table was drawn at, by the rows it showed."""
    render_line = widgets.Table.render_line

    def record(self: widgets.Table, y: int) -> Any:
        if y == 0 and self.row_count:
            rows = repr([self.get_row_at(i) for i in range(self.row_count)])
            widths = tuple(c.get_render_width(self) for c in self.columns.values())
            drawn.setdefault((self.id or "", rows), set()).add(widths)
        return render_line(self, y)

    monkeypatch.setattr(widgets.Table, "render_line", record)
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        for key in "23456":
            await pilot.press(key)
            await pilot.pause(0.3)
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(Source.QUEUE, k, JobState.DEAD)
        await until(pilot, lambda: pane.current and len(row_keys(app, "#jobs-table")) == 2)
        await pilot.press("g")
        await until(pilot, lambda: line_with(screen_text(app), "connection"))
        await pilot.pause(0.3)
        app.reload_screen()  # a refresh draws what the first frame drew
        await pilot.pause(0.3)
    tables = {table for table, _ in drawn}
    assert {"error-groups", "jobs-table", "queues", "dag-runs"} <= tables
    # At most a scrollbar's width apart: a table that fills its height makes room for
    # its scrollbar once Textual shows it.
    moved = {
        table: widths
        for (table, _), widths in drawn.items()
        if sum(max(w) - min(w) for w in zip(*widths, strict=True)) > 2
    }
    assert moved == {}, f"the same rows drawn at other widths: {moved}"
