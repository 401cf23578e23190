"""The SQLite migrator: fresh file, idempotence, version rows, too-new schemas and
concurrent migrators on one file."""

from __future__ import annotations

import multiprocessing
import sqlite3
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from qctl_kit import errors
from qctl_store.config import Config
from qctl_store.sqlite import SqliteStore
from qctl_store.sqlite.migrate import latest_version, migrations, statements

AZYNC_TABLES = {
    "azync_jobs",
    "azync_events",
    "azync_subscribers",
    "azync_job_attempts",
    "azync_idempotency_keys",
    "azync_stats_daily",
    "azync_dags",
    "azync_dag_deps",
    "azync_dag_signals",
    "azync_workflow_executions",
    "azync_workflow_history",
    "azync_workflow_signals",
    "azync_workflow_timers",
    "qctl_leases",
}


def _names(path: Path, kind: str) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,))
        }


def _versions(path: Path, table: str = "azync_migrations") -> list[tuple[int, int]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute(f"SELECT version_id, is_applied FROM {table} ORDER BY id"))


def test_fresh_file_is_migrated_to_the_latest_version(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    with SqliteStore(str(path)) as store:
        with pytest.raises(errors.SchemaNotMigrated):
            store.check_schema()
        applied = store.migrate()
        assert applied == [v for v, _ in migrations()]
        assert applied[0] == 1
        store.check_schema()
        status = store.schema_status()
    assert _names(path, "table") >= AZYNC_TABLES
    assert {
        "azync_jobs_idempotency_idx",
        "azync_jobs_dag_task_idx",
        "azync_jobs_workflow_exec_key_idx",
        "azync_dags_idempotency_live_idx",
        "azync_workflow_history_exec_key_idx",
        "azync_jobs_succeeded_vacuum_idx",
    } <= _names(path, "index")
    assert _versions(path) == [(0, 1)] + [(v, 1) for v in applied]
    assert (status.backend, status.schema, status.location) == ("sqlite", "", str(path))
    assert status.applied_version == status.expected_version == latest_version()
    assert status.pending_versions == []


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    with SqliteStore(str(path)) as store:
        store.migrate()
        before = _versions(path)
        assert store.migrate() == []
    assert _versions(path) == before


def test_custom_version_table(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    with SqliteStore(str(path), Config(migrations_table="my_versions")) as store:
        store.migrate()
    assert _versions(path, "my_versions")[0] == (0, 1)
    assert "azync_migrations" not in _names(path, "table")


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    with SqliteStore(str(path)) as store:
        store.migrate()
        with sqlite3.connect(path) as conn:
            conn.execute(
                "INSERT INTO azync_migrations (version_id, is_applied) VALUES (?, 1)",
                (latest_version() + 1,),
            )
        with pytest.raises(errors.SchemaTooNew):
            store.migrate()
        with pytest.raises(errors.SchemaTooNew):
            store.check_schema()


def test_statement_splitting_keeps_trigger_bodies_whole() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (a INTEGER);
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN
        INSERT INTO t (a) VALUES (1);
        SELECT 1;
    END;
    -- trailing comment
    """
    got = statements(script)
    assert len(got) == 2
    assert got[1].startswith("CREATE TRIGGER") and got[1].endswith("END;")


def _migrate(path: str) -> list[int]:
    with SqliteStore(path) as store:
        return store.migrate()


def _migrate_at_barrier(paths: list[str], barrier: Barrier, results: Queue) -> None:
    """Open and migrate each of ``paths`` in turn, each the instant every process is
    ready for it; report the versions applied to each, or the error."""
    for path in paths:
        barrier.wait()
        try:
            results.put((path, "ok", _migrate(path)))
        except Exception as exc:
            results.put((path, "error", f"{type(exc).__name__}: {exc}"))


OPENERS = 8
ROUNDS = 40


def test_processes_opening_one_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    """Eight processes open and migrate the same new file at the same instant, for forty
    files in turn: switching a new file to WAL needs it to itself, and SQLite answers
    "database is locked" there without waiting out the busy timeout. (Before the switch
    was retried, this failed in most runs, at one file or another.)"""
    ctx = multiprocessing.get_context("spawn")
    paths = [str(tmp_path / f"q{n}.db") for n in range(ROUNDS)]
    barrier, results = ctx.Barrier(OPENERS), ctx.Queue()
    procs = [
        ctx.Process(target=_migrate_at_barrier, args=(paths, barrier, results))
        for _ in range(OPENERS)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in range(OPENERS * ROUNDS)]
    for p in procs:
        p.join(timeout=30)
    assert [(path, detail) for path, status, detail in outcomes if status == "error"] == []
    for path in paths:
        applied = sorted(v for p, _, versions in outcomes if p == path for v in versions)
        # Every version was applied exactly once, by one process or another.
        assert applied == [v for v, _ in migrations()], path
        assert _versions(Path(path)) == [(0, 1)] + [(v, 1) for v, _ in migrations()]
