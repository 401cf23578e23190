"""River's change feed in qctl: ``changes()`` listens to River's own topics on this
schema (``<schema>.river_insert``, ``river_control``, ``river_leadership``), the
dashboard says "live + polling" and shows what River's client notifies without waiting
for the poll, and ``qctl watch`` prints River's notifications."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from qctl.core.changes import RESET, Hint
from qctl.systems.river.database import Database
from qctl.systems.river.tui import RIVER
from qctl.tui.app import QctlTop
from qctl.tui.widgets import StatusBar
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.go.harness import Harness
from tests.river.conftest import Run, data
from tests.tui.helpers import listening, until

pytestmark = pytest.mark.timeout(120)


def test_hints_read_rivers_payloads(river: Harness, pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        control = db.channel("river_control")
        assert control == f"{pg_schema}.river_control" == db.control_channel
        assert db.hint(db.channel("river_insert"), '{"queue": "q1"}') == Hint(
            "jobs", queue="q1", bulk=True
        )
        cancel = '{"action": "cancel", "job_id": 7, "queue": "q1"}'
        assert db.hint(control, cancel) == Hint("jobs", ids=("7",), queue="q1")
        assert db.hint(control, '{"action": "pause", "queue": "q1"}') == Hint("queues", queue="q1")
        resigned = '{"action": "resigned", "leader_id": "x"}'
        assert db.hint(db.channel("river_leadership"), resigned) == Hint("clients", bulk=True)
        for hostile in ("not json", "[1]", '{"queue": 5}', '{"action": "cancel"}'):
            assert db.hint(control, hostile).bulk, hostile
        sub = db.changes()
        assert sub is not None
        try:
            assert sub.get(timeout=10) == RESET
            river.call("insert", queue="hinted")  # River's client notifies river_insert
            assert sub.get(timeout=10) == Hint("jobs", queue="hinted", bulk=True)
        finally:
            sub.close()
    finally:
        db.close()


def dashboard(schema: str, scenario: Callable[[QctlTop, Any], Awaitable[None]]) -> None:
    db = Database(PG_DSN, schema)

    async def main() -> None:
        app = QctlTop(db, system=RIVER, location="test", poll_interval=60)
        async with app.run_test(size=(160, 50)) as pilot:
            await scenario(app, pilot)

    try:
        asyncio.run(main())
    finally:
        db.close()


def test_the_dashboard_is_live_on_what_river_notifies(
    river: Harness, pg_schema: str, qctl: Run
) -> None:
    """Polling once a minute, the dashboard shows River's insert into a new queue, a
    queue River's QueuePause paused, and a job River's JobCancel cancelled, on River's
    notices alone."""
    river.call("queues_create", queues=["live-paused"])

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await listening(app, pilot)
        bar = app.screen.query_one(StatusBar)
        assert "+ polling every 60s" in str(bar.render())
        [id_] = river.call("insert", queue="live-q")["ids"]
        await until(pilot, lambda: "live-q" in cells(app, "river-queues"), 30)
        river.call("pause", queue="live-paused")
        await until(pilot, lambda: cells(app, "river-queues")["live-paused"][1] != "", 30)
        await pilot.press("2")
        await until(pilot, lambda: str(id_) in cells(app, "river-jobs"), 30)
        river.call("cancel", id=id_)
        await until(pilot, lambda: cells(app, "river-jobs")[str(id_)][1] == "cancelled", 30)

    dashboard(pg_schema, scenario)


def test_watch_prints_rivers_notifications(river: Harness, pg_schema: str, qctl: Run) -> None:
    """``qctl watch`` (the installed command): a qctl pause as River's clients hear it."""
    river.call("queues_create", queues=["watch-q"])
    qctl_bin = Path(sys.executable).with_name("qctl")
    args = ["--dsn", PG_DSN, "--schema", pg_schema]
    bad = subprocess.run(
        [str(qctl_bin), *args, "watch", "--channel", "nosuch"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    watcher = subprocess.Popen(
        [str(qctl_bin), *args, "watch", "--channel", "river_control"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        assert "watching" in watcher.stderr.readline()
        assert data(qctl("queues", "pause", "watch-q", "--yes", "-o", "json"))["done"] == 1
        line = json.loads(watcher.stdout.readline())
        assert line["channel"] == f"{pg_schema}.river_control"
        assert json.loads(line["payload"]) == {"action": "pause", "queue": "watch-q"}
    finally:
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(20) == 0
