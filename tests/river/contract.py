"""River for the contract suites (``tests/systems``): a schema River's own migrator made
(``tests/go`` harness ``riverd``, River v0.51.2), or a SQLite file it made (riversqlite,
``BACKENDS``), holding a job River's worker discarded, a job waiting in a queue nobody
works, a job River cancelled, and three queues River's producers registered (one paused
by River's QueuePause). Every row is made by River's own code; no River client runs once
``database()`` yields, so nothing changes behind the suite's snapshots."""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from qctl.systems.river.actions import VERBS
from qctl.systems.river.database import Database
from qctl_kit.sqlite import jsonb
from tests.conftest import PG_DSN
from tests.go.harness import Harness, pgx_dsn, require_go
from tests.systems.contract import Target
from tests.systems.hostile import Hostile, HostileRow, open_row

REAL_WRITE = ["queues", "pause", "ct-real"]
"""A write that changes nothing the other contract tests' arguments need, audited for real
(``test_a_real_write_is_audited``)."""
BACKENDS = ("postgres", "sqlite")
WRITES: dict[str, list[str] | None] = {}
"""Filled by ``database()`` with the ids it made."""
HARNESS: dict[tuple[str, str], Harness] = {}
"""Each open target's River (by its DSN and schema), for ``verb_rows`` and ``change``."""


def river(target: Target) -> Harness:
    return HARNESS[target.dsn, target.schema]


@contextlib.contextmanager
def migrated(backend: str, prefix: str) -> Iterator[tuple[Harness, Target]]:
    """A River application on a database its migrator made: a fresh PostgreSQL schema, or
    a SQLite file in a directory of its own."""
    require_go()
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix=f"{prefix}_") as tmp:
            path = Path(tmp) / "river.sqlite3"
            h = Harness("riverd", f"sqlite://{path}")
            t = Target(["--dsn", f"sqlite://{path}"], f"sqlite://{path}", "")
            try:
                h.call("migrate")
                HARNESS[t.dsn, t.schema] = h
                yield h, t
            finally:
                HARNESS.pop((t.dsn, t.schema), None)
                h.close()
        return
    schema = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    h = Harness("riverd", pgx_dsn(schema))
    t = Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema)
    try:
        h.call("migrate")
        HARNESS[t.dsn, t.schema] = h
        yield h, t
    finally:
        HARNESS.pop((t.dsn, t.schema), None)
        h.close()
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def insert(h: Harness, queue: str, n: int = 1, **opts: Any) -> list[str]:
    """``n`` jobs inserted by River's client (``InsertMany``); their ids as qctl's verbs
    name them."""
    return [str(i) for i in h.call("insert", queue=queue, n=n, **opts)["ids"]]


@contextlib.contextmanager
def database(backend: str = "postgres") -> Iterator[Target]:
    with migrated(backend, "qt_contract_river") as (h, t):
        h.call("queues_create", queues=["ct-work", "ct-real", "ct-paused"])
        h.call("pause", queue="ct-paused")
        [discarded] = insert(h, "ct-work", mode="fail", max_attempts=1)
        h.call("start", queues=["ct-work"])
        h.call("wait_started", id=int(discarded), seconds=10)
        h.call("stop")
        [waiting] = insert(h, "ct-idle")
        [cancelled] = insert(h, "ct-idle")
        h.call("cancel", id=int(cancelled))
        WRITES.clear()
        WRITES.update(
            {
                "jobs retry": [discarded],
                "jobs cancel": [waiting],
                "jobs delete": [cancelled],
                "queues pause": ["ct-work"],
                "queues resume": ["ct-paused"],
                "vacuum all": ["--older-than", "1s"],
                "db tune": [],
                "db migrate": None,  # River's own migrator runs its migrations
            }
        )
        yield t


@contextlib.contextmanager
def handle(target: Target) -> Iterator[Any]:
    db = Database(target.dsn, target.schema)
    try:
        yield db
    finally:
        db.close()


def verb_rows(target: Target, verb: str, n: int) -> tuple[list[str], list[str]]:
    """``n`` rows made by River's own code, and the filter that selects exactly them:
    jobs waiting in a queue of their own (to cancel), jobs River cancelled (to retry or
    delete), queues River's producers registered (to pause; paused by River's
    QueuePause, to resume)."""
    h, name = river(target), f"ct-verb-{uuid.uuid4().hex[:8]}"
    if verb.startswith("queues "):
        queues = [f"{name}-{i}" for i in range(n)]
        h.call("queues_create", queues=queues)
        if verb == "queues resume":
            for queue in queues:
                h.call("pause", queue=queue)
        return queues, ["--match", name]
    ids = insert(h, name, n)
    if verb != "jobs cancel":
        for id_ in ids:
            h.call("cancel", id=int(id_))
    return ids, ["--queue", name]


def change(target: Target, verb: str, id_: str) -> str:
    """The row moved on by River's own client, as another operator's River call would:
    a job cancelled or retried, a job deleted, a queue paused or resumed; the reason the
    engine counts it under."""
    h = river(target)
    call, state = {
        "jobs cancel": ("cancel", "cancelled"),
        "jobs retry": ("retry", "available"),
        "jobs delete": ("delete", "gone"),
        "queues pause": ("pause", "paused"),
        "queues resume": ("resume", "active"),
    }[verb]
    if verb.startswith("queues "):
        h.call(call, queue=id_)
    else:
        h.call(call, id=int(id_))
    verbs = {v.title: v for v in VERBS}
    return state if state == "gone" else verbs[verb].reason(state) or state


HOSTILE_BACKENDS = ("postgres", "sqlite")


@contextlib.contextmanager
def hostile_database(backend: str, tmp: Path) -> Iterator[Target]:
    """River's schema (or SQLite file), made by River's migrator, empty."""
    with migrated(backend, "qt_hostile_river") as (_, t):
        yield t


def insert_hostile(target: Target, case: Hostile) -> HostileRow | None:
    """A job inserted by River's client, its args, metadata and attempt errors (jsonb;
    SQLite's JSONB, or the bytes themselves there) or its instants rewritten; its kind
    named for the case."""
    kind = f"hostile.{case.name}"
    [job] = insert(river(target), "hostile")
    row = HostileRow(job, ["jobs", "list", "--kind", kind], ["jobs", "show", job])
    if target.dsn.startswith("sqlite://"):
        path = target.dsn.removeprefix("sqlite://")
        with contextlib.closing(sqlite3.connect(path, timeout=10)) as lite, lite:
            lite.execute("UPDATE river_job SET kind = ? WHERE id = ?", [kind, int(job)])
            if case.json is not None or case.raw is not None:
                value = jsonb.from_json(case.json) if case.json is not None else case.raw
                errors = jsonb.element(jsonb.ARRAY, value) if case.json is not None else value
                lite.execute(
                    "UPDATE river_job SET args = ?, metadata = ?, errors = ? WHERE id = ?",
                    [value, value, errors, int(job)],
                )
            if case.instant is not None:
                lite.execute(
                    "UPDATE river_job SET scheduled_at = ?1, created_at = ?1,"
                    " attempted_at = ?1 WHERE id = ?2",
                    [case.instant, int(job)],
                )
        return row
    if case.json is None and case.raw is not None:
        return None  # jsonb holds JSON only
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute("SET max_stack_depth = '7MB'")  # jsonb's parser recurses
        t = f'"{target.schema}".river_job'
        conn.execute(f"UPDATE {t} SET kind = %s WHERE id = %s", [kind, int(job)])  # type: ignore[arg-type]
        try:
            if case.json is not None:
                conn.execute(
                    f"UPDATE {t} SET args = %(j)s::jsonb, metadata = %(j)s::jsonb,"  # type: ignore[arg-type]
                    " errors = ARRAY[%(j)s::jsonb] WHERE id = %(id)s",
                    {"j": case.json, "id": int(job)},
                )
            if case.instant is not None:
                conn.execute(
                    f"UPDATE {t} SET scheduled_at = %(t)s, created_at = %(t)s,"  # type: ignore[arg-type]
                    " attempted_at = %(t)s WHERE id = %(id)s",
                    {"t": case.instant, "id": int(job)},
                )
        except (psycopg.errors.DataError, psycopg.errors.StatementTooComplex):
            return None  # not a value jsonb takes (NaN, \u0000, 100,000 levels)
    return row


async def show_in_dashboard(app: Any, pilot: Any, row: HostileRow) -> None:
    await open_row(app, pilot, "2", "river-jobs", row.key)
