"""``qctl watch`` on a DBOS database: workflows created, started and completed, as JSON
lines, by polling DBOS's indexes; Ctrl-C exits 0."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from qctl.systems.dbos import reads
from qctl.systems.dbos.database import Database
from tests.dbos.fixtures import App, make_sqlite_system_db

pytestmark = pytest.mark.timeout(120)

QCTL = Path(sys.executable).parent / "qctl"


def test_watch_starts_after_the_history_even_at_its_last_millisecond(tmp_path: Path) -> None:
    """The workflows of the latest instant at start are history: not reported by the
    first poll. One created later in that same millisecond is reported, once."""
    import sqlite3

    path = make_sqlite_system_db(tmp_path / "dbos.sqlite")
    insert = (
        "INSERT INTO workflow_status (workflow_uuid, status, name, created_at)"
        " VALUES (?, ?, 'w', ?)"
    )
    with sqlite3.connect(path) as conn:
        conn.executemany(insert, [("old-1", "PENDING", 1000), ("old-2", "PENDING", 5000)])
        conn.execute(insert, ("old-3", "PENDING", 5000))
    db = Database(f"sqlite:///{path}")
    try:
        marks = reads.WatchMarks()
        assert reads.changes_since(db, marks) == []  # the start
        assert reads.changes_since(db, marks) == []  # nothing happened since
        with sqlite3.connect(path) as conn:
            conn.execute(insert, ("new-1", "PENDING", 5000))
        assert [(c["event"], c["workflow_id"]) for c in reads.changes_since(db, marks)] == [
            ("created", "new-1")
        ]
        assert reads.changes_since(db, marks) == []
    finally:
        db.close()


def test_watch_reports_what_the_application_does(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    app = App(url)
    proc = subprocess.Popen(
        [str(QCTL), "--dsn", url, "watch", "--refresh", "0.2", "--name", "checkout"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in proc.stdout or []], daemon=True
    ).start()
    try:
        assert proc.stderr is not None
        assert "polling every 0.2s" in proc.stderr.readline()
        wf_id = app.enqueue("checkout", "w-1", 1)
        app.enqueue("failing", 1)  # another name: filtered out
        events: list[dict[str, object]] = []
        while not any(e["event"] == "completed" for e in events):
            events.append(json.loads(lines.get(timeout=30)))
        assert [e["event"] for e in events] == ["created", "started", "completed"]
        assert {e["workflow_id"] for e in events} == {wf_id}
        assert events[-1]["status"] == "SUCCESS" and events[-1]["entity"] == "workflow"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        app.stop()
