"""The help screen explains every column and bar of azync's dashboard, and errors take
the width the terminal has (the status bar and notices are not cut to a fixed width),
on both backends."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from qctl.systems.azync.tui import (
    AZYNC,
    DagGraphScreen,
    EventDetailScreen,
    JobDetailScreen,
    WorkflowDetailScreen,
)
from qctl.tui.app import QctlTop
from qctl.tui.base import Loader
from qctl.tui.widgets import MODE_STYLES, HelpScreen, StatusBar, said
from qctl_store.types import (
    DAGParams,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    PublishParams,
    Source,
    Subscriber,
    WorkflowStartParams,
)
from tests.tui.helpers import SIZE, screen_text, until

pytestmark = pytest.mark.timeout(120)

GLOSSARY = " ".join(AZYNC.help_text().split("Columns and bars", 1)[1].split())
"""The help's glossary, on one line: ``word: meaning; word: meaning ...``."""


def declared() -> list[str]:
    """``name: about`` of every column the azync tabs declare (``Pane.tables``), as the
    help says it (``said``: its short header named)."""
    return [
        said(c)
        for tab in AZYNC.tabs
        for _, columns in getattr(AZYNC.pane_class(tab.name), "tables", ())
        for c in columns
    ]


def test_help_says_each_declared_column_once() -> None:
    """The help's column paragraphs come from the tables' declarations: every column is
    said as declared, a column shared by several tables (same name and meaning) once."""
    for line in declared():
        assert len(re.findall(rf"(?<![\w-]){re.escape(line)}[;.]", GLOSSARY)) == 1, line


def explained(word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}: \S", GLOSSARY) is not None


def bar_labels(app: QctlTop) -> set[str]:
    """The labels (dim parts) of every bar on the screen, values and counts left out."""
    labels = set()
    for bar in app.screen.query(".bar").results(Static):
        content = bar.content
        if not isinstance(content, Text):  # a tab not shown yet
            continue
        for span in content.spans:
            if "dim" in str(span.style):
                word = re.sub(r"[\d:.\-~≈/()]+", " ", content.plain[span.start : span.end])
                if word.split():
                    labels.add(" ".join(word.split()))
    return labels


def columns(app: QctlTop) -> set[str]:
    return {
        str(c.label)
        for t in app.screen.query(DataTable).results(DataTable)
        for c in t.columns.values()
    }


def arrange(store: Any) -> dict[str, uuid.UUID]:
    k = f"help_{uuid.uuid4().hex[:8]}"
    store.enqueue(EnqueueParams(kind=k, max_attempts=1))
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k))
    store.dead(job.id, job.lease_token, "boom")
    dag = DAGParams(name=k, tasks=[DAGTask("a", k + "_t")])
    store.create_dag(dag)
    store.register_subscriber(Subscriber(name=k + "_sub", event_type=k))
    event = PublishParams(type=k, payload={})
    store.publish(event)
    wf = WorkflowStartParams(name=k)
    store.start_workflow(wf)
    return {"job": job.id, "dag": dag.id, "event": event.id, "workflow": wf.id}


async def test_help_explains_every_column_and_bar(store: Any) -> None:
    ids = arrange(store)
    app = QctlTop(store, live=False, location="test")
    seen_columns: set[str] = set()
    seen_bars: set[str] = set()
    async with app.run_test(size=SIZE) as pilot:
        for key in "123456":
            await pilot.press(key)
            await until(pilot, lambda: any(t.row_count for t in app.screen.query(DataTable)))
            # Every bar of the tab drawn (its loader answered).
            await until(
                pilot,
                lambda: all(
                    isinstance(b.content, Text) and b.content.plain
                    for b in app.screen.query(".bar").results(Static)
                    if b.is_on_screen
                ),
            )
            seen_columns |= columns(app)
            seen_bars |= bar_labels(app)
        for screen in (
            JobDetailScreen(ids["job"]),
            DagGraphScreen(ids["dag"]),
            EventDetailScreen(ids["event"]),
            WorkflowDetailScreen(ids["workflow"]),
        ):
            app.push_screen(screen)
            await until(pilot, lambda s=screen: app.screen is s and columns(app))
            seen_columns |= columns(app)
            app.pop_screen()
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await until(pilot, lambda: "Columns and bars" in screen_text(app))
    # Every table of every screen was met, and the bars' labels with them.
    assert {"backlog", "when", "tasks", "deliveries", "seq", "killed 1h", "lifetime"} <= (
        seen_columns
    )
    assert {"source", "state", "filter", "shown", "page", "name", "type"} <= seen_bars
    # Each from its table's declaration (header, cells and help line in one place).
    assert seen_columns <= {said.split(": ", 1)[0] for said in declared()}
    modes = {*MODE_STYLES, "connecting", "updated"}
    missing = sorted(w for w in seen_columns | seen_bars | modes if not explained(w))
    assert missing == [], f"not explained in the help: {missing}"


def _visible(app: QctlTop, words: str, widget: str = "StatusBar") -> bool:
    """Every word of ``words`` in ``widget``'s part of the screen, in order, however
    its lines wrap."""
    region = app.screen.query_one(widget).region
    lines = screen_text(app).splitlines()[region.y : region.bottom]
    drawn = " ".join(line[region.x : region.right] for line in lines)
    return " ".join(words.split()) in " ".join(re.sub("[▌▎]", " ", drawn).split())


@pytest.mark.parametrize("width", [80, 200])
async def test_errors_use_the_width_they_have(store: Any, width: int) -> None:
    app = QctlTop(store, live=False, location="test")
    error = "could not connect: " + " ".join(f"host{n}.example.internal" for n in range(9))
    notice = "refused: " + " ".join(f"reason{n} of the refusal" for n in range(8))
    async with app.run_test(size=(width, 40), notifications=True) as pilot:
        await until(pilot, lambda: app.refresh_count > 0)
        # Every read answered: a late success would clear the error.
        await until(pilot, lambda: not any(w.busy_since for w in app.screen.query(Loader)))
        app.connection_failed(ConnectionError(error))
        await until(pilot, lambda: _visible(app, error))
        bar = app.screen.query_one(StatusBar)
        # Longer than the old 200-character cut; wrapped to the lines the width needs.
        assert len(error) > 200 and (bar.size.height < 3) == (width == 200)
        app.notify(notice, severity="error")
        await until(pilot, lambda: _visible(app, notice, "Toast"))
        toast = app.screen.query_one("Toast")
        # Wider than Textual's toast (60 columns, at most half the screen), never off it.
        assert min(60, width // 2) < toast.size.width <= width
