"""Oban for the contract suites (``tests/systems``): oban-py's schema (its own install, by
the partner: ``tests/oban/schemas.py``) holding a discarded job, a job waiting in a
queue nobody runs, a cancelled job, and three queues with producers (one paused), whose
stand-in (``tests/oban/standin.py``) answers Oban's signals as oban-py's producers do."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from qctl.systems.oban.actions import VERBS, queue_targets
from qctl.systems.oban.database import Database
from tests.conftest import PG_DSN
from tests.oban import ddl, schemas
from tests.oban.standin import Producers
from tests.systems.contract import Target
from tests.systems.hostile import Hostile, HostileRow, open_row

REAL_WRITE = ["queues", "pause", "ct-real"]
"""A write that changes nothing the other contract tests' arguments need, audited for real
(``test_a_real_write_is_audited``)."""
WRITES: dict[str, list[str] | None] = {}
"""Filled by ``database()`` with the ids it made."""
PRODUCERS: list[Producers] = []


def _conn(schema: str) -> psycopg.Connection[Any]:
    return psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={schema}")


@contextlib.contextmanager
def _schema(prefix: str) -> Iterator[str]:
    schema = f"qt_{prefix}_oban_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    schemas.install_obanpy(PG_DSN, schema)
    producers = Producers(schema)
    PRODUCERS[:] = [producers]
    try:
        yield schema
    finally:
        producers.close()
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@contextlib.contextmanager
def database() -> Iterator[Target]:
    with _schema("contract") as schema, _conn(schema) as conn:
        for queue in ("ct-work", "ct-real", "ct-paused"):
            PRODUCERS[0].start(queue, paused=queue == "ct-paused")
        [discarded] = ddl.insert(conn, "ct-work", max_attempts=1)
        ddl.fetch(conn, "ct-work")
        ddl.fail(conn, discarded, "boom", discard=True)
        [waiting] = ddl.insert(conn, "ct-idle")
        [cancelled] = ddl.insert(conn, "ct-idle", state="cancelled")
        WRITES.clear()
        WRITES.update(
            {
                "jobs retry": [str(discarded)],
                "jobs cancel": [str(waiting)],
                "jobs delete": [str(cancelled)],
                "queues pause": ["ct-work"],
                "queues resume": ["ct-paused"],
                "queues scale": ["ct-work", "--limit", "3"],
                "vacuum all": ["--older-than", "1s"],
                "db tune": [],
                "db migrate": None,  # Oban installs and migrates its own schema
            }
        )
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema, PRODUCERS[0].sync)


@contextlib.contextmanager
def handle(target: Target) -> Iterator[Any]:
    db = Database(target.dsn, target.schema)
    try:
        yield db
    finally:
        db.close()


def verb_rows(target: Target, verb: str, n: int) -> tuple[list[str], list[str]]:
    """``n`` rows as Oban makes them, and the filter that selects exactly them: jobs
    waiting in a queue of their own (to cancel), cancelled jobs (to retry or delete),
    queues a producer runs (to pause; paused, to resume)."""
    PRODUCERS[0].sync()  # a signal of an earlier test answered before the suite's snapshots
    name = f"ct-verb-{uuid.uuid4().hex[:8]}"
    if verb.startswith("queues "):
        queues = [f"{name}-{i}" for i in range(n)]
        for queue in queues:
            PRODUCERS[0].start(queue, paused=verb == "queues resume")
        return queues, ["--match", name]
    with _conn(target.schema) as conn:
        state = "available" if verb == "jobs cancel" else "cancelled"
        ids = ddl.insert(conn, name, n, state=state)
    return [str(i) for i in ids], ["--queue", name]


def change(target: Target, verb: str, id_: str) -> str:
    """The row moved on as Oban (a node, or another operator's Oban call) would: a job
    cancelled or retried, deleted, a queue's producers paused or resumed; the reason the
    engine counts it under."""
    verbs = {v.title: v for v in VERBS}
    with _conn(target.schema) as conn:
        if verb.startswith("queues "):
            paused = verb == "queues pause"
            conn.execute(
                "UPDATE oban_producers SET meta = meta || jsonb_build_object('paused', %s::boolean)"
                " WHERE queue = %s",
                (paused, id_),
            )
            return verbs[verb].reason("paused" if paused else "active") or ""
        if verb == "jobs delete":
            conn.execute("DELETE FROM oban_jobs WHERE id = %s", (int(id_),))
            return "gone"
        state = {"jobs cancel": "cancelled", "jobs retry": "available"}[verb]
        conn.execute("UPDATE oban_jobs SET state = %s WHERE id = %s", (state, int(id_)))
        return verbs[verb].reason(state) or state


def observe(target: Target, verb: str, ids: list[str]) -> dict[str, str] | None:
    """A queue verb changes no row itself: the producers answer its signal; their state
    once every signal sent was answered."""
    if not verb.startswith("queues "):
        return None
    PRODUCERS[0].sync()
    with handle(target) as db:
        return {t.id: t.state for t in queue_targets(db) if t.id in ids}


HOSTILE_BACKENDS = ("postgres",)


@contextlib.contextmanager
def hostile_database(backend: str, tmp: Path) -> Iterator[Target]:
    """oban-py's schema, empty."""
    with _schema("hostile") as schema:
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema, PRODUCERS[0].sync)


def insert_hostile(target: Target, case: Hostile) -> HostileRow | None:
    """A job, its args, meta and errors (jsonb) or its instants rewritten; its worker
    named for the case."""
    if case.json is None and case.raw is not None:
        return None  # jsonb holds JSON only
    worker = f"hostile.{case.name}"
    with _conn(target.schema) as conn:
        [job] = ddl.insert(conn, "hostile", worker=worker)
        conn.execute("SET max_stack_depth = '7MB'")  # jsonb's parser recurses
        try:
            if case.json is not None:
                conn.execute(
                    "UPDATE oban_jobs SET args = %(j)s::jsonb, meta = %(j)s::jsonb,"
                    " errors = jsonb_build_array(%(j)s::jsonb) WHERE id = %(id)s",
                    {"j": case.json, "id": job},
                )
            if case.instant is not None:
                conn.execute(
                    "UPDATE oban_jobs SET scheduled_at = %(t)s::timestamptz AT TIME ZONE 'UTC',"
                    " inserted_at = %(t)s::timestamptz AT TIME ZONE 'UTC',"
                    " attempted_at = %(t)s::timestamptz AT TIME ZONE 'UTC' WHERE id = %(id)s",
                    {"t": case.instant, "id": job},
                )
        except (psycopg.errors.DataError, psycopg.errors.StatementTooComplex):
            return None  # not a value jsonb takes (NaN, \u0000, 100,000 levels)
    return HostileRow(str(job), ["jobs", "list", "--worker", worker], ["jobs", "show", str(job)])


async def show_in_dashboard(app: Any, pilot: Any, row: HostileRow) -> None:
    await open_row(app, pilot, "2", "oban-jobs", row.key)
