"""Retention on a running DBOS application, PostgreSQL and SQLite: ``vacuum workflows``
keeps what a running workflow still needs and what ``--keep-last`` names, leaves the
application room to run on SQLite, refreshes PostgreSQL's estimate; ``workflows cancel
--older-than`` is a global timeout."""

from __future__ import annotations

import threading
import time
from typing import Any

from qctl.systems.dbos import actions
from qctl.systems.dbos.database import Database
from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App, wait_for


def status(run: Run, wf_id: str) -> str:
    return str(data(run("workflows", "show", wf_id, "-o", "json"))["status"])


def finished(run: Run, wf_id: str, want: str = "SUCCESS") -> None:
    wait_for(lambda: status(run, wf_id) == want, timeout=30)


def exists(run: Run, wf_id: str) -> bool:
    return run("workflows", "show", wf_id, "-o", "json").exit_code == 0


def copies(app: App, wf_id: str, n: int, stamp: int | None = None) -> None:
    """``n`` copies of a finished workflow's status row (``<id>-c<i>``), exactly as DBOS
    wrote it but for the id (and ``completed_at``: ``stamp`` plus i ms, when given)."""
    db = Database(app.url)
    try:
        columns = [c for c in db.all("SELECT * FROM {t}workflow_status LIMIT 1")[0]]
        rest = ", ".join(c for c in columns if c not in ("workflow_uuid", "completed_at"))
        done = "%s + n.i" if stamp is not None else "ws.completed_at"
        db.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %s)"
            f" INSERT INTO {{t}}workflow_status (workflow_uuid, completed_at, {rest})"
            f" SELECT ws.workflow_uuid || '-c' || CAST(n.i AS TEXT), {done}, {rest}"
            " FROM {t}workflow_status ws, n WHERE ws.workflow_uuid = %s",
            [n, *([stamp] if stamp is not None else []), wf_id],
        )
    finally:
        db.close()


def children(run: Run, parent: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = data(run("workflows", "list", "--parent", parent, "-o", "json"))
    return rows


def test_vacuum_keeps_trees_with_an_unfinished_workflow(run: Run, dbos_app: App) -> None:
    # A parent waiting (PENDING) with its child finished: it reads the child's result
    # when it runs on.
    parent = dbos_app.enqueue("gathers", 3)
    child = wait_for(lambda: [c for c in children(run, parent) if c["status"] == "SUCCESS"])[0]
    assert status(run, parent) == "PENDING"
    # A finished parent whose child still waits (it may read its parent's events).
    leaver = dbos_app.enqueue("hands_off", 120.0)
    finished(run, leaver)
    waiting = children(run, leaver)[0]["workflow_id"]
    assert status(run, waiting) == "PENDING"
    done = dbos_app.enqueue("checkout", "k-1", 1)
    finished(run, done)
    time.sleep(0.05)
    tree = {"unfinished_ancestor": 1, "unfinished_descendant": 1}
    dry = data(run("vacuum", "workflows", "--older-than", "1ms", "--dry-run", "-o", "json"))
    assert dry["kept"] == tree and dry["count"] >= 1
    text = run("vacuum", "workflows", "--older-than", "1ms", "--dry-run")
    assert "kept 2 old enough (1: an ancestor is unfinished" in " ".join(text.output.split())
    result = data(run("vacuum", "workflows", "--older-than", "1ms", "--yes", "-o", "json"))
    assert result["kept"] == tree and result["count"] >= dry["count"]
    assert exists(run, child["workflow_id"]) and exists(run, leaver)
    assert not exists(run, done)
    # The parent runs on and reads its child's result; the child reads its message.
    dbos_app.client.send(parent, "go", "go")
    finished(run, parent)
    assert data(run("workflows", "show", parent, "-o", "json"))["output"]["value"] == 7
    dbos_app.client.send(waiting, "hello", "go")
    finished(run, waiting)
    # Now nothing in the trees is unfinished: they go.
    again = data(run("vacuum", "workflows", "--older-than", "1ms", "--yes", "-o", "json"))
    assert again["kept"] == {}
    for wf_id in (parent, child["workflow_id"], leaver, waiting):
        assert not exists(run, wf_id)


def test_keep_last_per_name(run: Run, dbos_app: App) -> None:
    ids = []
    for i in range(3):
        ids.append(dbos_app.enqueue("checkout", f"last-{i}", 1))
        finished(run, ids[-1])
        if dbos_app.url.startswith("sqlite"):
            time.sleep(1.05)  # DBOS's SQLite clock (strftime) counts whole seconds
    failed = dbos_app.enqueue("failing", 1)
    finished(run, failed, "ERROR")
    time.sleep(0.05)
    args = ["vacuum", "workflows", "--older-than", "1ms", "--keep-last", "2", "-o", "json"]
    dry = data(run(*args, "--dry-run"))
    assert dry["keep_last"] == 2 and dry["kept"]["keep_last"] >= 3
    data(run(*args, "--yes"))
    assert [exists(run, i) for i in ids] == [False, True, True]
    assert exists(run, failed)  # the newest of its name
    assert run(*args[:-2], "--keep-last", "-1", "--yes").exit_code == 2


def test_cancel_older_than_cancels_only_unfinished_old_workflows(run: Run, dbos_app: App) -> None:
    old = dbos_app.enqueue("awaits_message", 120.0)
    done = dbos_app.enqueue("checkout", "t-1", 1)
    finished(run, done)
    wait_for(lambda: status(run, old) == "PENDING")
    db = Database(dbos_app.url)  # created two hours ago, as far as any clock can tell
    db.execute(
        "UPDATE {t}workflow_status SET created_at = created_at - 7200000"
        " WHERE workflow_uuid IN (%s, %s)",
        [old, done],
    )
    db.close()
    young = dbos_app.enqueue("awaits_message", 120.0)
    args = ["workflows", "cancel", "--older-than", "1h", "-o", "json"]
    dry = data(run(*args, "--dry-run"))
    assert dry["dry_run"] is True and old in dry["ids"]
    assert young not in dry["ids"] and done not in dry["ids"]
    assert status(run, old) == "PENDING"
    assert run(*args[:-2]).exit_code == 4  # not a terminal: --yes needed
    result = data(run(*args, "--yes"))
    assert old in result["ids"] and young not in result["ids"]
    assert status(run, old) == "CANCELLED" and status(run, done) == "SUCCESS"
    assert status(run, young) in ("PENDING", "ENQUEUED")
    assert run("workflows", "cancel", "--older-than", "0s", "--yes").exit_code == 2
    assert run("workflows", "cancel", young, "--yes").exit_code == 0
    for wf_id in (old, young):  # woken: their threads end with the test
        dbos_app.client.send(wf_id, "bye", "go")


def test_vacuum_analyzes_what_it_shrank(run: Run, dbos_app: App) -> None:
    """PostgreSQL's SUCCESS count is the planner's estimate: after a vacuum it follows
    the deletes (SQLite's count is exact either way)."""
    done = dbos_app.enqueue("checkout", "a-1", 1)
    finished(run, done)
    copies(dbos_app, done, 3000)
    if dbos_app.url.startswith("postgresql"):
        db = Database(dbos_app.url)
        db.execute("ANALYZE {t}workflow_status")  # as autovacuum would, after the inserts
        db.close()

    def success() -> int:
        rows = data(run("workflows", "counts", "-o", "json"))
        return int(next(r["count"] for r in rows if r["status"] == "SUCCESS"))

    assert success() >= 3000
    result = data(run("vacuum", "workflows", "--older-than", "1ms", "--yes", "-o", "json"))
    assert result["count"] >= 3001
    assert result["analyzed"] is dbos_app.url.startswith("postgresql")
    assert success() < 100


def test_vacuum_leaves_the_application_room(run: Run, dbos_app: App) -> None:
    """The application keeps completing workflows while a vacuum deletes 30,000 rows:
    on SQLite, one writer at a time, the vacuum rests between batches (PostgreSQL's
    row locks never stopped it: a third of the rows there)."""
    rows = 30_000 if dbos_app.url.startswith("sqlite") else 10_000
    seed = dbos_app.enqueue("checkout", "s-1", 1)
    finished(run, seed)
    copies(dbos_app, seed, rows, stamp=1)
    stop = threading.Event()
    started: list[str] = []

    def load() -> None:  # the application's own work: a checkout every 20 ms
        while not stop.wait(0.02):
            started.append(dbos_app.enqueue("checkout", "load", 1))

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    try:
        time.sleep(2)
        begin = int(time.time() * 1000)
        result = data(run("vacuum", "workflows", "--older-than", "1h", "--yes", "-o", "json"))
        end = int(time.time() * 1000)
    finally:
        stop.set()
        thread.join()
    assert result["count"] >= rows
    db = Database(dbos_app.url)
    try:
        row = db.one(
            "SELECT count(*) AS n FROM {t}workflow_status"
            " WHERE name = 'checkout' AND completed_at >= %s AND completed_at < %s",
            [begin, end],
        )
        before = db.one(
            "SELECT count(*) AS n FROM {t}workflow_status"
            " WHERE name = 'checkout' AND completed_at >= %s AND completed_at < %s",
            [begin - 2000, begin],
        )
    finally:
        db.close()
    assert row and before
    seconds = (end - begin) / 1000
    during, rate = int(row["n"]) / seconds, int(before["n"]) / 2
    print(f"vacuum {seconds:.1f}s: {during:.1f}/s during, {rate:.1f}/s before", result)
    assert during >= rate / 2, (during, rate, seconds)


def test_vacuum_all_reports_the_rows_it_removed_per_table(run: Run, dbos_app: App) -> None:
    """``vacuum all`` is DBOS's vacuum under every system's name: a row per table and
    what it removed; ``--older-than 0`` is refused with what it would mean."""
    zero = run("vacuum", "all", "--older-than", "0s", "--yes")
    assert zero.exit_code == 2 and zero.stdout == ""
    assert zero.stderr.splitlines() == [
        "qctl: error: --older-than: 0 would delete every finished workflow, however recent;"
        " give an age above 0"
    ]
    done = dbos_app.enqueue("checkout", "va-1", 1)
    finished(run, done)
    time.sleep(0.05)
    dry = data(run("vacuum", "all", "--older-than", "1ms", "--dry-run", "-o", "json"))
    assert (dry["verb"], dry["system"], dry["dry_run"]) == ("vacuum all", "dbos", True)
    assert exists(run, done)
    result = data(run("vacuum", "all", "--older-than", "1ms", "--yes", "-o", "json"))
    removed = {t["table"]: t["removed"] for t in result["tables"]}
    assert set(removed) == set(actions.WORKFLOW_TABLES)
    assert removed["workflow_status"] == result["count"] >= 1
    assert removed["operation_outputs"] >= 1 and removed["workflow_input"] >= 1
    assert not exists(run, done)
