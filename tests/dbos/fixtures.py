"""Helpers of the DBOS tests: system databases created by DBOS itself, and the DBOS
application (``qctl/systems/dbos/demo_app.py``) run in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qctl.systems.dbos.app_process import AppProcess

DBOS_CLI = Path(sys.executable).with_name("dbos")
PG_BASE = os.environ.get("QCTL_TEST_PG_BASE", "postgresql://postgres@127.0.0.1:5432/")


def migrate(url: str) -> None:
    """Create DBOS's system tables the way DBOS does (``dbos migrate``)."""
    subprocess.run(
        [str(DBOS_CLI), "migrate", "--sys-db-url", url],
        check=True,
        capture_output=True,
        timeout=120,
    )


def make_sqlite_system_db(path: Path) -> Path:
    migrate(f"sqlite:///{path}")
    return path


@contextmanager
def pg_database() -> Iterator[str]:
    """A PostgreSQL database of its own (CREATE DATABASE with a unique name), dropped
    afterwards; yields its URL."""
    import psycopg

    name = f"qctl_dbos_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_BASE + "postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_BASE + name
    finally:
        with psycopg.connect(PG_BASE + "postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class App:
    """The test DBOS application, running on ``url`` in a subprocess."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.process = AppProcess(url)
        from dbos import DBOSClient

        self.client = DBOSClient(system_database_url=url)

    def enqueue(self, workflow: str, *args: Any, queue: str = "work", id: str = "") -> str:
        wf_id = id or f"{workflow}-{uuid.uuid4().hex[:10]}"
        self.client.enqueue(
            {"queue_name": queue, "workflow_name": workflow, "workflow_id": wf_id}, *args
        )
        return wf_id

    def stop(self) -> None:
        self.client.destroy()
        self.process.stop()


def delayed(app: App, wf_id: str, **options: Any) -> str:
    """A checkout enqueued to start in an hour (DELAYED: nobody runs it meanwhile)."""
    app.client.enqueue(
        {
            "queue_name": "work",
            "workflow_name": "checkout",
            "workflow_id": wf_id,
            "delay_seconds": 3600,
            **options,  # type: ignore[typeddict-item]
        },
        wf_id,
        1,
    )
    return wf_id


def wait_for(predicate: Any, timeout: float = 20.0, interval: float = 0.1) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        time.sleep(interval)
