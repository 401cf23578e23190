"""A hopper workflow's dependency graph in the terminal: ``workflows show`` draws it (the
drawing azync's DAGs use, ``qctl.core.graph``) and the dashboard's Workflows tab opens it,
each job labelled with its kind, the end of its id and its state."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Static

from qctl.core.graph import ARROW
from qctl.systems.hopper.database import Database
from qctl.systems.hopper.tui import HOPPER
from qctl.systems.hopper.tui.panes import JobDetailScreen
from qctl.systems.hopper.tui.workflows import WorkflowDetailScreen
from qctl.tui.app import QctlTop
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.hopper.conftest import Run, data
from tests.hopper.worker import Worker
from tests.tui.helpers import until

pytestmark = pytest.mark.timeout(120)


def test_workflows_show_draws_the_graph(hopper: Worker, qctl: Run) -> None:
    client = hopper.register("g-host")
    batch, ids = hopper.workflow(
        "g-q", ["g.extract", "g.left", "g.right", "g.load"], [(1, 0), (2, 0), (3, 1), (3, 2)]
    )
    assert hopper.claim("g-q", client) == [ids[0]]
    assert hopper.finalize(ids[0], client, "completed")
    shown = qctl("workflows", "show", str(batch)[:30])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    graph = [line for line in lines if ARROW in line]
    # extract feeds both branches on the first line and the second, load joins them
    assert graph and f"g.extract …{str(ids[0])[-6:]} [completed]" in graph[0]
    assert f"{ARROW}g.load …{str(ids[3])[-6:]} [pending]" in graph[0]
    assert any(f"{ARROW}g.right …{str(ids[2])[-6:]} [available]" in line for line in graph)
    # the jobs table follows the graph's reading order: roots first
    table = [line.split()[0] for line in lines if line[:36] in {str(i) for i in ids}]
    assert table[0] == str(ids[0]) and table[-1] == str(ids[3])
    document = data(qctl("workflows", "show", str(batch), "-o", "json"))
    assert [j["id"] for j in document["jobs"]] == [str(i) for i in ids]
    assert sorted(map(tuple, document["edges"])) == sorted(
        (str(ids[j]), str(ids[d])) for j, d in [(1, 0), (2, 0), (3, 1), (3, 2)]
    )


def test_the_workflows_tab_opens_the_graph(hopper: Worker, pg_schema: str) -> None:
    batch, ids = hopper.workflow("gt-q", ["gt.a", "gt.b"], [(1, 0)])
    db = Database(PG_DSN, pg_schema, read_only=True)

    async def main() -> None:
        app = QctlTop(db, system=HOPPER, location="test", read_only=True, poll_interval=0.5)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("4")
            await until(pilot, lambda: str(batch) in cells(app, "hopper-workflows"), 10)
            table = app.screen.query_one("#hopper-workflows")
            table.focus()
            table.move_cursor(row=list(cells(app, "hopper-workflows")).index(str(batch)))  # type: ignore[attr-defined]
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, WorkflowDetailScreen), 10)

            def graph() -> str:
                return str(app.screen.query_one("#graph", Static).render())

            await until(pilot, lambda: ARROW in graph(), 10)
            assert f"gt.a …{str(ids[0])[-6:]} [available]" in graph()
            assert f"{ARROW}gt.b …{str(ids[1])[-6:]} [pending]" in graph()
            assert list(cells(app, "hopper-workflow-jobs")) == [str(i) for i in ids]
            app.screen.query_one("#hopper-workflow-jobs").focus()
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, JobDetailScreen), 10)

    try:
        asyncio.run(main())
    finally:
        db.close()
