"""Oban's dashboard: live on Oban's insert channel (a dashboard polling once a minute
shows a new job on the insert notice) and polled behind it, and the Queues, Jobs and
Nodes tabs in both flavours (a job's detail: the hostile-row suite opens it)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from qctl.systems.oban.database import Database
from qctl.systems.oban.tui import OBAN
from qctl.tui.app import QctlTop
from qctl.tui.widgets import StatusBar
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.oban import ddl
from tests.oban.standin import Producers
from tests.tui.helpers import listening, until


def dashboard(schema: str, scenario: Callable[[QctlTop, Any], Awaitable[None]]) -> None:
    db = Database(PG_DSN, schema)

    async def main() -> None:
        app = QctlTop(db, system=OBAN, location="test", poll_interval=60)
        async with app.run_test(size=(160, 50)) as pilot:
            await scenario(app, pilot)

    try:
        asyncio.run(main())
    finally:
        db.close()


def test_live_tabs(oban: psycopg.Connection[Any], pg_schema: str, flavour: str) -> None:
    [failed] = ddl.insert(oban, "tui-q")
    ddl.fetch(oban, "tui-q")
    ddl.fail(oban, failed, "smtp [bold]421")
    producers = Producers(pg_schema)
    if flavour == "oban-py":
        producers.start("tui-q", node="tui-node")

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await listening(app, pilot)
        assert "polling every 60s" in str(app.screen.query_one(StatusBar).render())
        await until(pilot, lambda: "tui-q" in cells(app, "oban-queues"), 10)
        row = cells(app, "oban-queues")["tui-q"]
        assert row[row.index("tui-q") + 7] == "1", row  # retryable
        [pushed] = ddl.insert(oban, "pushed-q")
        oban.execute(
            'SELECT pg_notify(%s, \'{"queue": "pushed-q"}\')', (f"{pg_schema}.oban_insert",)
        )
        await until(pilot, lambda: "pushed-q" in cells(app, "oban-queues"), 30)
        await pilot.press("2")
        await until(pilot, lambda: str(pushed) in cells(app, "oban-jobs"), 10)
        await pilot.press("3")
        if flavour == "oban-py":
            await until(
                pilot, lambda: any("tui-node" in r for r in cells(app, "oban-nodes").values()), 10
            )
            [node] = [r for r in cells(app, "oban-nodes").values() if "tui-node" in r]
            assert node[3] == "no", node  # paused, as the Queues tab says it

    try:
        dashboard(pg_schema, scenario)
    finally:
        producers.close()


def test_the_jobs_filter_reads_args_and_meta_keys(
    oban: psycopg.Connection[Any], pg_schema: str
) -> None:
    """``/`` with ``args.KEY:=JSON`` and ``meta.KEY=VALUE`` words reads the jobs whose
    columns contain them (``jobs list --args``); other words match the rows read."""
    [wanted] = ddl.insert(oban, "tui-f", args={"user": 7}, meta='{"tenant": "acme"}')
    [other] = ddl.insert(oban, "tui-f", args={"user": 7}, meta='{"tenant": "o"}')
    [elsewhere] = ddl.insert(oban, "tui-g", args={"user": 7}, meta='{"tenant": "acme"}')

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await pilot.press("2")
        await until(pilot, lambda: str(other) in cells(app, "oban-jobs"), 10)
        await pilot.press("slash", *"args.user:=7 meta.tenant=acme", "enter")
        await until(pilot, lambda: set(cells(app, "oban-jobs")) == {str(wanted), str(elsewhere)})
        await pilot.press("escape", "slash", *"args.user:=7 meta.tenant=acme tui-f", "enter")
        await until(pilot, lambda: set(cells(app, "oban-jobs")) == {str(wanted)})

    dashboard(pg_schema, scenario)
