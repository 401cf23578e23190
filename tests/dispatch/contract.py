"""dispatch for the contract suite (``tests/systems``): a schema its own migrator made
(``tests/go`` harness ``dispatchd``, dispatch v0.1.0), with a pending job, one its worker
failed into the DLQ, and two cron entries (one disabled)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import psycopg
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems.dispatch.actions import VERBS
from qctl.systems.dispatch.database import Database
from tests.conftest import PG_DSN
from tests.go.harness import Harness, pgx_dsn, require_go
from tests.systems.contract import Target
from tests.systems.hostile import Hostile, HostileRow, open_row

REAL_WRITE = ["cron", "trigger", "ct-cron"]
"""A write that changes nothing the other contract tests' arguments need, audited for real
(``test_a_real_write_is_audited``)."""
WRITES: dict[str, list[str] | None] = {}
"""Filled by ``database()`` with the ids it made."""
HARNESS: list[Harness] = []
"""``database()``'s dispatch, for ``verb_rows``."""


@contextlib.contextmanager
def database() -> Iterator[Target]:
    require_go()
    schema = f"qt_contract_dispatch_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    h = Harness("dispatchd", pgx_dsn(schema))
    try:
        h.call("migrate")
        HARNESS[:] = [h]
        pending = h.call("enqueue", name="ct.job", queue="ct-q", payload={})["id"]
        dead = h.call("enqueue", name="ct.dead", queue="ct-dead", max_retries=0)["id"]
        h.call("dequeue", queues=["ct-dead"], limit=1)
        h.call("run", id=dead, error="boom")
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            [(entry,)] = conn.execute(f'SELECT id FROM "{schema}".dispatch_dlq').fetchall()
        h.call("cron", name="ct-cron", schedule="@every 1h", job_name="ct.job")
        h.call("cron", name="ct-off", schedule="@every 1h", job_name="ct.job")
        args = ["--dsn", PG_DSN, "--schema", schema]
        off = CliRunner().invoke(app, [*args, "cron", "disable", "ct-off", "--yes"])
        assert off.exit_code == 0, off.output
        WRITES.clear()
        WRITES.update(
            {
                "jobs cancel": [pending],
                "jobs retry": [dead],
                "dlq replay": ["--queue", "ct-dead"],
                "dlq purge": ["--older-than", "1s"],
                "dlq replay-all": ["--queue", "ct-dead"],
                "dlq delete": [entry],
                "cron disable": ["ct-cron"],
                "cron enable": ["ct-off"],
                "cron delete": ["ct-cron"],
                "cron trigger": ["ct-cron"],
                "vacuum all": ["--older-than", "1s"],
                "db migrate": None,  # dispatch's own migrator runs its migrations
            }
        )
        yield Target(args, PG_DSN, schema)
    finally:
        h.close()
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
    """``n`` rows of a queue of their own, made by dispatch's own code: pending jobs to
    cancel, or jobs its worker failed into the DLQ (their entries) to replay or delete."""
    h, queue = HARNESS[0], f"ct-verb-{uuid.uuid4().hex[:8]}"
    if verb.startswith("cron "):
        names = [f"{queue}-{n}" for n in range(n)]
        for name in names:
            h.call("cron", name=name, schedule="@every 1h", job_name=name, queue=queue)
        if verb == "cron enable":
            with psycopg.connect(PG_DSN, autocommit=True) as conn:
                conn.execute(
                    f'UPDATE "{target.schema}".dispatch_cron_entries SET enabled = false'
                    " WHERE queue = %s",
                    [queue],
                )
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            rows = conn.execute(
                f'SELECT id FROM "{target.schema}".dispatch_cron_entries WHERE queue = %s',
                [queue],
            ).fetchall()
        return [r[0] for r in rows], ["--queue", queue]
    if verb == "jobs cancel":
        ids = [h.call("enqueue", name="ct.verb", queue=queue, payload={})["id"] for _ in range(n)]
        return ids, ["--queue", queue]
    for _ in range(n):
        dead = h.call("enqueue", name="ct.verb", queue=queue, max_retries=0)["id"]
        h.call("dequeue", queues=[queue], limit=1)
        h.call("run", id=dead, error="boom")
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        rows = conn.execute(
            f'SELECT id FROM "{target.schema}".dispatch_dlq WHERE queue = %s', [queue]
        ).fetchall()
    waiting = ["--state", "waiting"] if verb == "dlq delete" else []
    return [r[0] for r in rows], ["--queue", queue, *waiting]


def change(target: Target, verb: str, id_: str) -> str:
    """The row moved on: a job a worker took (dispatch's dequeue sets running), an entry
    another operator replayed, an entry deleted."""
    if verb.startswith("cron "):  # the scheduler took its fire lock
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(
                f'UPDATE "{target.schema}".dispatch_cron_entries'
                " SET locked_by = 'ct-leader', locked_until = now() + interval '1 hour'"
                " WHERE id = %s",
                [id_],
            )
        if verb != "cron trigger":
            return next(v for v in VERBS if v.title == verb).reason("firing") or "firing"
        statement, reason = "DELETE FROM {}.dispatch_cron_entries WHERE id = %s", "gone"
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(statement.format(f'"{target.schema}"'), [id_])  # type: ignore[arg-type]
        return reason
    statement, reason = {
        "jobs cancel": ("UPDATE {}.dispatch_jobs SET state = 'running' WHERE id = %s", "running"),
        "dlq replay": ("UPDATE {}.dispatch_dlq SET replayed_at = now() WHERE id = %s", "replayed"),
        "dlq delete": ("DELETE FROM {}.dispatch_dlq WHERE id = %s", "gone"),
    }[verb]
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(statement.format(f'"{target.schema}"'), [id_])  # type: ignore[arg-type]
    verbs = {v.title: v for v in VERBS}
    return reason if reason == "gone" else verbs[verb].reason(reason) or reason


def observe(target: Target, verb: str, ids: list[str]) -> dict[str, int] | None:
    """A trigger changes no entry: it enqueues the entry's job (on the entry's queue)."""
    if verb != "cron trigger":
        return None
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        rows = conn.execute(
            f'SELECT e.id, (SELECT count(*) FROM "{target.schema}".dispatch_jobs j'
            "  WHERE j.queue = e.queue AND j.name = e.job_name)"
            f' FROM "{target.schema}".dispatch_cron_entries e WHERE e.id = ANY(%s)',
            [ids],
        ).fetchall()
    return {i: n for i, n in rows}


HOSTILE_BACKENDS = ("postgres",)


@contextlib.contextmanager
def hostile_database(backend: str, tmp: Path) -> Iterator[Target]:
    """dispatch's schema as its migrations leave it (``schema_6f7dda7.sql``), empty."""
    schema = f"qt_hostile_dispatch_{uuid.uuid4().hex[:8]}"
    sql = files("qctl.systems.dispatch").joinpath("schema_6f7dda7.sql").read_text()
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'SET search_path = "{schema}"')
        conn.execute(sql.encode())
    try:
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema)
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def insert_hostile(target: Target, case: Hostile) -> HostileRow | None:
    """A pending job in queue ``hostile-<case>`` as dispatch's store inserts one, its
    payload (bytea: any bytes) or its instants hostile."""
    job = f"job_{uuid.uuid4().hex[:26]}"
    payload = case.raw if case.raw is not None else (case.json or "{}").encode()
    instant = case.instant or "now"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            f'INSERT INTO "{target.schema}".dispatch_jobs'
            " (id, name, queue, payload, run_at, created_at, updated_at)"
            " VALUES (%(id)s, 'hostile', %(q)s, %(p)s, %(t)s, %(t)s, %(t)s)",
            {"id": job, "q": f"hostile-{case.name}", "p": payload, "t": instant},
        )
    list_args = ["jobs", "list", "--queue", f"hostile-{case.name}"]
    return HostileRow(job, list_args, ["jobs", "show", job])


async def show_in_dashboard(app: Any, pilot: Any, row: HostileRow) -> None:
    await open_row(app, pilot, "2", "dispatch-jobs", row.key)
