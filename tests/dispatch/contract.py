"""dispatch for the contract suite (``tests/systems``): a schema its own migrator made
(``tests/go`` harness ``dispatchd``, dispatch v0.1.0), with a pending job, one its worker
failed into the DLQ, and two cron entries (one disabled)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems.dispatch.database import Database
from tests.conftest import PG_DSN
from tests.go.harness import Harness, pgx_dsn, require_go
from tests.systems.contract import Target

WRITES: dict[str, list[str] | None] = {}
"""Filled by ``database()`` with the ids it made."""


@contextlib.contextmanager
def database() -> Iterator[Target]:
    require_go()
    schema = f"qt_contract_dispatch_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    h = Harness("dispatchd", pgx_dsn(schema))
    try:
        h.call("migrate")
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
