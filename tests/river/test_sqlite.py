"""qctl on River's SQLite driver (riversqlite, River v0.51.2): River's migrator made the
file, River's client inserts, and River's producers (over modernc.org/sqlite) fetch and
work while qctl reads and retries, cancels, deletes and pauses. River reads back what
qctl wrote (JSONB it accepts, instants in its format), and its clients get qctl's
control notices from its outbox (river_notification), which they poll."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app as qctl_app
from qctl.core.changes import RESET, Hint
from qctl.core.sqldb import LISTENING
from qctl.systems.river import reads, tune
from qctl.systems.river.database import Database
from qctl.systems.river.tui import RIVER
from qctl.tui.app import QctlTop
from qctl_kit.sqlite import jsonb
from tests.dbos.test_top import cells
from tests.go.harness import Harness
from tests.river.conftest import (
    Run,
    check_contains_filters,
    check_finalized_order,
    data,
    job,
    runs,
    until,
)
from tests.tui.helpers import until as until_ui

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("river-sqlite") / "river.sqlite3"


@pytest.fixture(scope="module")
def lite(path: Path) -> Iterator[Harness]:
    """A River application on a SQLite file River's migrator made."""
    h = Harness("riverd", f"sqlite://{path}")
    h.call("migrate")
    yield h
    h.close()


@pytest.fixture
def qctl(path: Path, lite: Harness) -> Run:
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(qctl_app, ["--dsn", f"sqlite:///{path}", *args])

    return invoke


@pytest.fixture
def working(lite: Harness) -> Iterator[Harness]:
    lite.call("start", queues=["blocking", "paused", "failing"])
    yield lite
    lite.call("stop")


def raw(path: Path, statement: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(statement, params).fetchall()


def test_status_names_sqlite_and_rivers_migrations(qctl: Run) -> None:
    status = data(qctl("db", "status", "-o", "json"))
    assert (status["system"], status["backend"], status["supported"]) == ("river", "sqlite", True)
    assert status["migrations"] == [f"main {v}" for v in range(1, 9)]
    assert status["control_channel"].startswith("river_control ")


def test_jobs_and_queues_read_as_river_wrote_them(lite: Harness, qctl: Run, path: Path) -> None:
    [id_] = lite.call(
        "insert", queue="read", tags=["t-one", "t-two"], metadata={"k": [1, "v"]}, priority=2
    )["ids"]
    lite.call("insert", queue="read", tags=["t-one"])
    # River stores the JSON columns as SQLite JSONB (binary), which this SQLite cannot read.
    [(kind,)] = raw(path, "SELECT typeof(args) FROM river_job WHERE id = ?", id_)
    assert kind == "blob"
    shown = data(qctl("jobs", "show", str(id_), "-o", "json"))
    assert (shown["args"], shown["metadata"]["k"], shown["tags"]) == (
        {"mode": "ok"},
        [1, "v"],
        ["t-one", "t-two"],
    )
    created = datetime.fromisoformat(shown["created_at"].replace("Z", "+00:00"))
    assert created.tzinfo is not None and abs(datetime.now(UTC) - created).total_seconds() < 600
    tagged = data(qctl("jobs", "list", "--tag", "t-two", "-o", "json"))
    assert [j["id"] for j in tagged] == [id_]
    listed = lite.call("job_list", queue="read")
    ours = data(qctl("jobs", "list", "--queue", "read", "-o", "json"))
    assert sorted(j["id"] for j in ours) == sorted(listed["ids"])
    assert Counter(j["state"] for j in ours) == Counter(listed["counts"])
    queue = data(qctl("queues", "show", "read", "-o", "json"))
    assert queue["available"] == 2


def test_a_cancel_reaches_a_running_job_through_rivers_outbox(working: Harness, qctl: Run) -> None:
    [id_] = working.call("insert", queue="blocking", mode="block")["ids"]
    working.call("wait_started", id=id_, seconds=10)
    assert data(qctl("jobs", "cancel", str(id_), "--yes", "-o", "json"))["done"] == 1
    # Only River's control notice (its producer cancels the work) ends the worker.
    until(lambda: job(working, id_)["state"] == "cancelled", 10)
    row = job(working, id_)
    assert "cancel_attempted_at" in row["metadata"] and runs(working)[id_] == 1


def test_a_retried_job_is_worked_again_and_its_errors_read(working: Harness, qctl: Run) -> None:
    [id_] = working.call("insert", queue="failing", mode="fail", max_attempts=1)["ids"]
    until(lambda: job(working, id_)["state"] == "discarded")
    assert data(qctl("jobs", "retry", str(id_), "--yes", "-o", "json"))["done"] == 1
    until(lambda: job(working, id_)["attempt"] == 2 and job(working, id_)["state"] == "discarded")
    assert (job(working, id_)["max_attempts"], runs(working)[id_]) == (2, 2)
    history = data(qctl("jobs", "show", str(id_), "-o", "json"))["errors"]
    assert [(e["attempt"], e["error"]) for e in history] == [
        (1, "harness failure"),
        (2, "harness failure"),
    ]
    groups = data(qctl("jobs", "errors", "--queue", "failing", "-o", "json"))
    assert any("harness failure" in json.dumps(g) for g in groups)


def test_a_paused_queue_is_not_fetched_until_resumed(working: Harness, qctl: Run) -> None:
    until(lambda: any(q["name"] == "paused" for q in working.call("queue_list")["queues"]))
    assert data(qctl("queues", "pause", "paused", "--yes", "-o", "json"))["done"] == 1
    assert {"name": "paused", "paused": True} in working.call("queue_list")["queues"]
    time.sleep(0.5)  # River's listener polls its outbox
    ids = working.call("insert", queue="paused", n=3)["ids"]
    time.sleep(2)  # twenty fetch polls of River's producer
    assert working.call("job_list", queue="paused")["counts"] == {"available": 3}
    assert not set(ids) & set(runs(working))
    assert data(qctl("queues", "resume", "paused", "--yes", "-o", "json"))["done"] == 1
    until(lambda: working.call("job_list", queue="paused")["counts"] == {"completed": 3})


def test_a_cancel_then_retry_leaves_metadata_river_reads(
    lite: Harness, qctl: Run, path: Path
) -> None:
    [id_] = lite.call("insert", queue="meta", metadata={"keep": "é\n\u2028"})["ids"]
    assert data(qctl("jobs", "cancel", str(id_), "--yes", "-o", "json"))["done"] == 1
    row = job(lite, id_)
    assert row["state"] == "cancelled" and row["metadata"]["keep"] == "é\n\u2028"
    datetime.fromisoformat(row["metadata"]["cancel_attempted_at"].replace("Z", "+00:00"))
    [(notice,)] = raw(
        path, "SELECT payload FROM river_notification WHERE payload LIKE ?", f'%"job_id":{id_},%'
    )
    assert json.loads(str(notice)) == {"action": "cancel", "job_id": id_, "queue": "meta"}
    assert data(qctl("jobs", "retry", str(id_), "--yes", "-o", "json"))["done"] == 1
    row = job(lite, id_)
    assert row["state"] == "available" and "cancel_attempted_at" not in row["metadata"]
    [(blob,)] = raw(path, "SELECT metadata FROM river_job WHERE id = ?", id_)
    assert isinstance(blob, bytes) and json.loads(jsonb.to_text(blob))["keep"] == "é\n\u2028"
    assert data(qctl("jobs", "delete", str(id_), "--yes", "-o", "json"))["done"] == 1
    assert not lite.call("job_list", queue="meta")["ids"]


def test_a_retry_never_breaks_a_unique_key(lite: Harness, qctl: Run) -> None:
    [first] = lite.call("insert", queue="unique", unique=True, note="u")["ids"]
    lite.call("cancel", id=first)
    [second] = lite.call("insert", queue="unique", unique=True, note="u")["ids"]
    assert second != first
    result = qctl("jobs", "retry", str(first), "--yes", "-o", "json")
    assert result.exit_code == 3, result.output
    assert "unique key held by another job" in result.stderr
    assert job(lite, first)["state"] == "cancelled"


def test_watch_polls_rivers_outbox(lite: Harness, path: Path) -> None:
    db = Database(f"sqlite://{path}")
    try:
        notices = db.notifications(["river_insert"], timeout=10)
        assert next(notices) == (LISTENING, "")
        lite.call("insert", queue="watched")
        topic, payload = next(notices)
        assert (topic, json.loads(payload)) == ("river_insert", {"queue": "watched"})
    finally:
        db.close()


def test_the_dashboard_is_hinted_from_rivers_outbox(lite: Harness, path: Path) -> None:
    lite.call("queues_create", queues=["hinted"])
    db = Database(f"sqlite://{path}")
    try:
        hints = db.changes()
        assert hints is not None and hints.get(timeout=10) == RESET
        lite.call("pause", queue="hinted")
        assert hints.get(timeout=10) == Hint("queues", queue="hinted")
    finally:
        db.close()


def test_the_jobs_tab_filter_reads_args_and_metadata_keys(lite: Harness, path: Path) -> None:
    """The shared Jobs tab's ``/`` with ``args.KEY=VALUE`` and ``metadata.KEY:=JSON``
    words reads the jobs whose columns contain them; other words match the rows read."""
    [wanted] = lite.call("insert", queue="tui-f", note="n1", metadata={"n": 3})["ids"]
    [other] = lite.call("insert", queue="tui-f", note="n1", metadata={"n": 4})["ids"]
    [elsewhere] = lite.call("insert", queue="tui-g", note="n1", metadata={"n": 3})["ids"]
    db = Database(f"sqlite:///{path}")

    async def main() -> None:
        app = QctlTop(db, system=RIVER, location="test", poll_interval=60)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("2")
            await until_ui(pilot, lambda: str(other) in cells(app, "river-jobs"), 10)
            await pilot.press("slash", *"args.note=n1 metadata.n:=3", "enter")
            await until_ui(
                pilot, lambda: set(cells(app, "river-jobs")) == {str(wanted), str(elsewhere)}
            )
            await pilot.press("escape", "slash", *"args.note=n1 metadata.n:=3 tui-f", "enter")
            await until_ui(pilot, lambda: set(cells(app, "river-jobs")) == {str(wanted)})

    try:
        asyncio.run(main())
    finally:
        db.close()


FILTERS: list[dict[str, Any]] = [
    {"states": ["available"], "queues": ["filt-a"]},
    {"states": ["available", "cancelled"], "queues": ["filt-a"]},
    {"states": ["cancelled"], "queues": ["filt-a", "filt-b"]},
    {"states": ["scheduled", "available"], "queues": ["filt-a", "filt-b"]},
    {"states": ["cancelled"]},
    {"queues": ["filt-b"]},
    {"queues": ["filt-a", "filt-b"], "kinds": ["qctl_test"], "priorities": [2]},
    {"queues": ["filt-a"], "metadata": {"third": 0}},
    {"states": ["cancelled"], "queues": ["filt-b"], "metadata": {"third": 0}},
    {"metadata": {"third": 2}},
    {},
]
"""Every shape of a listing's filter, each read by other conditions (reads.job_filter)."""


def test_every_filter_pages_the_jobs_it_matches_in_order(lite: Harness, path: Path) -> None:
    """Newest first; finalized states alone newest finalized first."""
    third: dict[int, int] = {}  # the metadata of the jobs inserted here
    for n in range(12):
        queue = "filt-a" if n % 2 else "filt-b"
        [id_] = lite.call(
            "insert",
            queue=queue,
            priority=1 + n % 3,
            seconds=3600 if n % 4 == 0 else 0,
            metadata={"third": n % 3},
        )["ids"]
        third[id_] = n % 3
        if n % 3 == 0 and n % 4:
            lite.call("cancel", id=id_)
    every = raw(path, "SELECT id, state, queue, kind, priority, finalized_at FROM river_job")
    fields = ("states", "queues", "kinds", "priorities")

    def matched(f: dict[str, Any]) -> list[int]:
        rows = [
            r
            for r in every
            if all(not f.get(k) or r[i + 1] in f[k] for i, k in enumerate(fields))
            and ("metadata" not in f or third.get(int(str(r[0]))) == f["metadata"]["third"])
        ]
        if reads.by_finalized(f.get("states")):  # River's text instants sort as text
            rows.sort(key=lambda r: (str(r[5]), int(str(r[0]))), reverse=True)
            return [int(str(r[0])) for r in rows]
        return sorted((int(str(r[0])) for r in rows), reverse=True)

    db = Database(f"sqlite:///{path}")
    try:
        for tuned in (False, True):
            if tuned:
                tune.tune(db)
            for f in FILTERS:
                pages, after = [], None
                while page := reads.list_jobs(db, **f, limit=2, after=after):
                    pages += [j.id for j in page]
                    after = reads.position(page[-1], f.get("states"))
                assert pages == matched(f), (f, tuned)
    finally:
        db.close()


def test_vacuum_deletes_the_finalized_jobs_past_the_age(lite: Harness, qctl: Run) -> None:
    [old] = lite.call("insert", queue="vacuumed")["ids"]
    lite.call("cancel", id=old)
    time.sleep(1.1)  # River's instants have milliseconds: the job is now over a second old
    [waiting] = lite.call("insert", queue="vacuumed")["ids"]
    data(qctl("vacuum", "all", "--older-than", "1s", "--yes", "-o", "json"))
    assert lite.call("job_list", queue="vacuumed")["ids"] == [waiting]


def test_args_and_metadata_filters(lite: Harness, qctl: Run) -> None:
    check_contains_filters(lite, qctl, postgres=False)


def test_finalized_jobs_list_newest_finalized_first(lite: Harness, qctl: Run) -> None:
    check_finalized_order(lite, qctl)
