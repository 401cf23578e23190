"""DBOS for the contract suite (``tests/systems``): a PostgreSQL database of its own where
the test DBOS application ran (its schedule, a succeeded and a failed checkout, its
application version), then stopped, so nothing moves while the suite compares rows;
plus a workflow enqueued and one delayed that nobody runs, and a paused schedule."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qctl.systems.dbos.database import Database
from tests.dbos.fixtures import App, delayed, make_sqlite_system_db, migrate, pg_database, wait_for
from tests.systems.contract import Target
from tests.systems.hostile import Hostile, HostileRow, open_row

REAL_WRITE = ["queues", "set-limits", "work", "--concurrency", "5"]
"""A write that changes nothing the other contract tests' arguments need, audited for real
(``test_a_real_write_is_audited``)."""
WRITES: dict[str, list[str] | None] = {}
"""Filled by ``database()`` with the ids it made."""


def _status(db: Database, wf_id: str) -> str:
    row = db.one("SELECT status FROM {t}workflow_status WHERE workflow_uuid = %s", [wf_id])
    return str(row["status"]) if row else ""


@contextlib.contextmanager
def database() -> Iterator[Target]:
    with pg_database() as url:
        app = App(url)
        try:
            ok = app.enqueue("checkout", "ct-ok", 1)
            failed = app.enqueue("failing", 1)
            db = Database(url)
            try:
                wait_for(lambda: _status(db, ok) == "SUCCESS" and _status(db, failed) == "ERROR")
            finally:
                db.close()
            app.client._sys_db.create_application_version("ct-v0")
        finally:
            app.process.stop()
        try:
            queued = app.enqueue("checkout", "ct-queued", 1)
            late = delayed(app, "ct-delayed")
            app.client.create_schedule(
                schedule_name="ct-paused", workflow_name="every_second", schedule="0 0 * * *"
            )
            app.client.pause_schedule("ct-paused")
        finally:
            app.client.destroy()
        WRITES.clear()
        WRITES.update(
            {
                "workflows cancel": [queued],
                "workflows resume": [queued],
                "workflows delete": [ok],
                "workflows fork": [ok],
                "workflows rewind": [failed],
                "workflows set-delay": [late, "--delay", "2h"],
                "schedules backfill": [
                    "every-second",
                    "--since",
                    "2026-01-01T00:00:00+00:00",
                    "--until",
                    "2026-01-01T00:00:03+00:00",
                ],
                "schedules pause": ["every-second"],
                "schedules resume": ["ct-paused"],
                "schedules trigger": ["every-second"],
                "vacuum workflows": ["--older-than", "1s"],
                "vacuum all": ["--older-than", "1s"],
                "versions set-latest": ["ct-v0"],
                # the demo's executor is alive: only --force recovers it
                "executors recover": ["qctl-demo-executor", "--force"],
                "queues set-limits": ["work", "--concurrency", "5"],
                "schedules create": ["ct-new", "--workflow", "every_second", "--cron", "0 0 * * *"],
                "schedules delete": ["ct-paused"],
                "workflows send": [queued, '{"go": true}'],
                "workflows set-attributes": [ok, "team=ops"],
                "db migrate": None,  # DBOS applications migrate their own database
            }
        )
        yield Target(["--dsn", url], url, "dbos")


@contextlib.contextmanager
def handle(target: Target) -> Iterator[Any]:
    db = Database(target.dsn)
    try:
        yield db
    finally:
        db.close()


HOSTILE_BACKENDS = ("postgres", "sqlite")

FAR_MS = {"infinity": 2**62, "-infinity": -(2**62), "10000-01-01 00:00:00+00": 253402300800000}
"""The hostile instants as epoch milliseconds (DBOS's BIGINT), out of ``datetime``'s range."""


@contextlib.contextmanager
def hostile_database(backend: str, tmp: Path) -> Iterator[Target]:
    """A system database DBOS migrated (``dbos migrate``), empty."""
    if backend == "sqlite":
        path = make_sqlite_system_db(tmp / "dbos.sqlite")
        yield Target(["--dsn", f"sqlite:///{path}"], f"sqlite://{path}", "")
        return
    with pg_database() as url:
        migrate(url)
        yield Target(["--dsn", url], url, "dbos")


def insert_hostile(target: Target, case: Hostile) -> HostileRow | None:
    """A workflow named ``hostile.<case>`` whose output is the JSON (``portable_json``) or
    the bytes (SQLite's TEXT takes any), or whose instants are out of range (on SQLite,
    the instant's text where DBOS stores an integer)."""
    wf_id = f"hostile-{case.name}"
    postgres = target.dsn.startswith("postgres")
    # PostgreSQL's text holds neither NUL nor invalid UTF-8: the bytes on SQLite only.
    output = case.json if postgres or case.raw is None else case.raw
    if output is None and case.instant is None:
        return None
    ms: Any = int(time.time() * 1000)
    if case.instant is not None:
        ms = FAR_MS[case.instant] if postgres else case.instant
    sql = (
        "INSERT INTO {t}workflow_status (workflow_uuid, status, name, output, serialization,"
        " created_at, updated_at) VALUES (%s, 'SUCCESS', %s, %s, 'portable_json', %s, %s)"
    )
    db = Database(target.dsn)
    try:
        db.execute(sql, [wf_id, f"hostile.{case.name}", output, ms, ms])
    finally:
        db.close()
    list_args = ["workflows", "list", "--name", f"hostile.{case.name}"]
    return HostileRow(wf_id, list_args, ["workflows", "show", wf_id])


async def show_in_dashboard(app: Any, pilot: Any, row: HostileRow) -> None:
    await open_row(app, pilot, "2", "dbos-workflows", row.key)


def verb_rows(target: Target, verb: str, n: int) -> tuple[list[str], list[str]]:
    """``n`` workflows of an id prefix of their own, enqueued by DBOS's client with no
    executor running: ENQUEUED ones to cancel or delete, then cancelled by the client
    for the verbs that take finished ones (resume, rewind)."""
    from dbos import DBOSClient

    tag = f"ct-verb-{uuid.uuid4().hex[:8]}-"
    client = DBOSClient(system_database_url=target.dsn)
    try:
        ids = [f"{tag}{i}" for i in range(n)]
        for wf_id in ids:
            client.enqueue(
                {"queue_name": "work", "workflow_name": "checkout", "workflow_id": wf_id},
                wf_id,
                1,
            )
        if verb in ("workflows resume", "workflows rewind"):
            client.cancel_workflows(ids)
    finally:
        client.destroy()
    return ids, ["--prefix", tag]


def change(target: Target, verb: str, wf_id: str) -> str:
    """The workflow deleted by DBOS's client, as another operator would: the verb finds
    it gone."""
    from dbos import DBOSClient

    client = DBOSClient(system_database_url=target.dsn)
    try:
        client.delete_workflow(wf_id)
    finally:
        client.destroy()
    return "gone"
