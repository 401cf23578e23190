"""hopper for the contract suite (``tests/systems``): hopper's schema written from its
migrations (the package's ``schema_5fd71c6.sql``; the module proxy refuses hopper), with
a waiting job, a discarded one, a running one, a client, a queue row and a stream
consumer, made by the stand-in client in hopper's own SQL."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from qctl.systems.hopper.database import Database
from tests.conftest import PG_DSN, require_pg
from tests.hopper.conftest import install
from tests.hopper.worker import Worker
from tests.systems.contract import Target
from tests.systems.hostile import Hostile, HostileRow, open_row

REAL_WRITE = ["queues", "limit", "ct-q", "--global", "3"]
"""A write that changes nothing the other contract tests' arguments need, audited for real
(``test_a_real_write_is_audited``)."""
WRITES: dict[str, list[str] | None] = {}
"""Filled by ``database()`` with the ids it made."""


@contextlib.contextmanager
def database() -> Iterator[Target]:
    require_pg()
    schema = f"qt_contract_hopper_{uuid.uuid4().hex[:8]}"
    install(schema)
    w = Worker(schema)
    try:
        client = w.register("ct-host")
        waiting = w.insert("ct.job", queue="ct-q")
        dead = w.dead("ct.dead", "ct-dead", client)
        w.insert("ct.run", queue="ct-run")
        w.claim("ct-run", client)
        w.conn.execute("INSERT INTO hopper_queues (name) VALUES ('ct-q')")
        w.pause("ct-paused")
        w.consumer("ct-stream", "ct.#", "ct-q")
        WRITES.clear()
        WRITES.update(
            {
                "jobs cancel": [str(waiting)],
                "jobs retry": [str(dead)],
                "queues pause": ["ct-q"],
                "queues resume": ["ct-paused"],
                "queues limit": ["ct-q", "--global", "3"],
                "streams seek": ["ct-stream", "--earliest"],
                "vacuum all": ["--older-than", "1s"],
                "vacuum history": ["--older-than", "1s"],
                "vacuum batches": ["--older-than", "1s"],
                "vacuum streams": ["--older-than", "1s"],
                "db tune": [],
                "db migrate": None,  # hopper's own migrator runs its migrations
            }
        )
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema)
    finally:
        w.close()
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@contextlib.contextmanager
def handle(target: Target) -> Iterator[Any]:
    db = Database(target.dsn, target.schema)
    try:
        yield db
    finally:
        db.close()


def verb_rows(target: Target, verb: str, n: int) -> tuple[list[str], list[str]]:
    """``n`` rows of a name of their own, and the filter that selects exactly them: jobs
    of a queue (waiting ones to cancel, discarded ones to retry, made by the stand-in in
    hopper's own SQL), queues with a job waiting in each (to pause; paused by hopper's
    QueuePause statement, to resume)."""
    name = f"ct-verb-{uuid.uuid4().hex[:8]}"
    w = Worker(target.schema)
    try:
        if verb.startswith("queues "):
            queues = [f"{name}-{i}" for i in range(n)]
            for queue in queues:
                w.insert("ct.verb", queue=queue)
                if verb == "queues resume":
                    w.pause(queue)
            return queues, ["--match", name]
        if verb == "jobs retry":
            client = w.register("ct-verbs")
            ids = [w.dead("ct.verb", name, client) for _ in range(n)]
        else:
            ids = [w.insert("ct.verb", queue=name) for _ in range(n)]
    finally:
        w.close()
    return [str(i) for i in ids], ["--queue", name]


def change(target: Target, verb: str, id_: str) -> str:
    """The row moved on as hopper would: a job removed by its history retention (the
    verb finds it gone), a queue paused or resumed by another operator's hopper."""
    if verb.startswith("queues "):
        w = Worker(target.schema)
        try:
            w.pause(id_, verb == "queues resume")
        finally:
            w.close()
        return "already paused" if verb == "queues pause" else "not paused"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        for table in ("hopper_jobs", "hopper_job_history"):
            conn.execute(f'DELETE FROM "{target.schema}".{table} WHERE id = %s', [id_])
    return "gone"


HOSTILE_BACKENDS = ("postgres",)


@contextlib.contextmanager
def hostile_database(backend: str, tmp: Path) -> Iterator[Target]:
    """hopper's schema, empty."""
    schema = f"qt_hostile_hopper_{uuid.uuid4().hex[:8]}"
    install(schema)
    try:
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema)
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def insert_hostile(target: Target, case: Hostile) -> HostileRow | None:
    """A job of kind ``hostile.<case>`` inserted by hopper's own SQL, its args (and its
    attempt errors) or its instants rewritten."""
    if case.json is None and case.raw is not None:
        return None  # jsonb holds JSON only
    kind = f"hostile.{case.name}"
    w = Worker(target.schema)
    try:
        job = w.insert(kind, queue="hostile")
        w.conn.execute("SET max_stack_depth = '7MB'")  # jsonb's parser recurses
        try:
            if case.json is not None:
                w.conn.execute(
                    "UPDATE hopper_jobs SET args = %(j)s::jsonb,"
                    " errors = jsonb_build_array(jsonb_build_object('error', %(j)s::jsonb))"
                    " WHERE id = %(id)s",
                    {"j": case.json, "id": job},
                )
            if case.instant is not None:
                w.conn.execute(
                    "UPDATE hopper_jobs SET scheduled_at = %(t)s, created_at = %(t)s,"
                    " attempted_at = %(t)s WHERE id = %(id)s",
                    {"t": case.instant, "id": job},
                )
        except (psycopg.errors.DataError, psycopg.errors.StatementTooComplex):
            return None  # not a value jsonb takes (NaN, \u0000, 100,000 levels)
    finally:
        w.close()
    return HostileRow(str(job), ["jobs", "list", "--kind", kind], ["jobs", "show", str(job)])


async def show_in_dashboard(app: Any, pilot: Any, row: HostileRow) -> None:
    await open_row(app, pilot, "2", "hopper-jobs", row.key)
