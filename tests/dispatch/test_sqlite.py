"""dispatch's own SQLite store (store/sqlite at v0.1.0, driven by the ``dispatchd``
harness on a file): it migrates and enqueues, but cannot run a job nor lead its cron
scheduler, so qctl refuses such a file, saying why (exit 5), and writes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from tests.go.harness import Harness, HarnessError

# store/sqlite/migrations.go at v0.1.0: group "dispatch", six versions (the PostgreSQL
# store's seventh, schema_additions, is not there).
SQLITE_VERSIONS = [
    ("20240101120000", "create_jobs_table"),
    ("20240101120001", "create_workflows_tables"),
    ("20240101120002", "create_cron_entries_table"),
    ("20240101120003", "create_dlq_table"),
    ("20240101120004", "create_events_table"),
    ("20240101120005", "create_workers_table"),
]


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dispatch") / "dispatch.db"


@pytest.fixture(scope="module")
def dispatch(path: Path) -> Iterator[Harness]:
    """A dispatch application on its SQLite store, which its own migrator created."""
    h = Harness("dispatchd", f"sqlite:{path}")
    h.call("migrate")
    yield h
    h.close()


def _rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as c:
        return c.execute(sql, params).fetchall()


def test_dispatch_sqlite_store_cannot_run_a_job(dispatch: Harness, path: Path) -> None:
    """The facts the refusal states: the store migrates and enqueues; its dequeue claims
    the job, then fails reading it back, so no worker gets it and it stays running; its
    AcquireLeadership fails, so its scheduler never fires."""
    assert (
        _rows(path, "SELECT version, name FROM grove_migrations ORDER BY version")
        == SQLITE_VERSIONS
    )
    job_id = dispatch.call("enqueue", name="email.send", queue="mail")["id"]
    assert _rows(path, "SELECT state FROM dispatch_jobs WHERE id = ?", job_id) == [("pending",)]
    with pytest.raises(HarnessError, match=r"Scan error on column .*run_at.*time\.Time"):
        dispatch.call("dequeue", queues=["mail"], limit=1)
    assert _rows(path, "SELECT state FROM dispatch_jobs WHERE id = ?", job_id) == [("running",)]
    worker = dispatch.call("worker", hostname="would-lead", queues=["mail"], limit=1)["id"]
    with pytest.raises(HarnessError, match="model must be a struct"):
        dispatch.call("lead", worker_id=worker)


@pytest.mark.parametrize(
    "args",
    [
        ["db", "status"],
        ["jobs", "list"],
        ["cron", "list"],
        ["jobs", "cancel", "--state", "pending", "--yes"],
    ],
    ids=["db-status", "jobs-list", "cron-list", "jobs-cancel"],
)
def test_qctl_refuses_a_dispatch_sqlite_file_saying_why(
    dispatch: Harness, path: Path, args: list[str], isolated_home: None
) -> None:
    dispatch.call("enqueue", name="refused.job")
    before = _rows(path, "SELECT * FROM dispatch_jobs ORDER BY id")
    result = CliRunner().invoke(app, ["--dsn", f"sqlite:///{path}", *args])
    assert result.exit_code == 5, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("qctl: error: dispatch on SQLite is not supported")
    assert "cannot run a job" in result.stderr and len(result.stderr.splitlines()) == 1
    assert _rows(path, "SELECT * FROM dispatch_jobs ORDER BY id") == before
