"""``qctl db migrate`` beside a live deployment: a transaction open elsewhere holds back
migration 00006's CREATE INDEX CONCURRENTLY (it waits for the table's writers). The
migration waits as azync's goose migrator does, naming the session it waits behind; with
``--lock-timeout`` it stops and says how far it got; the index that build leaves invalid
is listed by ``db status`` and rebuilt by ``db migrate``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.conftest import PG_DSN

INDEX = "azync_jobs_succeeded_vacuum_idx"  # migration 00006's, built concurrently


def qctl(schema: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "qctl", "--dsn", PG_DSN, "--schema", schema, *args]


@pytest.fixture
def at_version_5(fresh_pg_schema: str) -> str:
    """A schema at version 5 (migrations 6 to 11 are re-runnable: their rows deleted and
    00006's index dropped, the next run applies them again)."""
    run = subprocess.run(qctl(fresh_pg_schema, "db", "migrate"), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'SET search_path = "{fresh_pg_schema}"')
        conn.execute(f"DROP INDEX {INDEX}")
        conn.execute("DELETE FROM azync_migrations WHERE version_id > 5")
    return fresh_pg_schema


@pytest.fixture
def holder(at_version_5: str) -> Iterator[psycopg.Connection[Any]]:
    """A session in a transaction that may write azync_jobs, as a worker's would be: a
    concurrent index build on the table waits for it to end. (A lock on this schema's
    table only: a snapshot held open would also hold back other schemas' builds, which
    other test processes may run meanwhile under goose's database-wide lock.)"""
    with psycopg.connect(PG_DSN, application_name="qctl-test-holder") as conn:
        conn.execute(f'LOCK TABLE "{at_version_5}".azync_jobs IN ROW EXCLUSIVE MODE')
        yield conn
        conn.rollback()


def invalid(schema: str) -> list[str]:
    with psycopg.connect(PG_DSN) as conn:
        rows = conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE NOT i.indisvalid AND c.relnamespace = %s::regnamespace",
            (schema,),
        ).fetchall()
    return sorted(r[0] for r in rows)


def test_migrate_waits_behind_an_open_transaction_and_names_it(
    at_version_5: str, holder: psycopg.Connection[Any]
) -> None:
    """No lock timeout by default (it used to stop at version 5 after 5 s, exit 7): the
    wait is named on stderr, a pipe here, and the run completes once the holder ends."""
    proc = subprocess.Popen(
        qctl(at_version_5, "db", "migrate"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        pid = holder.info.backend_pid
        # Other sessions of the database may hold the build back too (another test's
        # transaction): each is named; ours comes among them.
        line = proc.stderr.readline()
        while line and f" pid {pid} " not in line:
            line = proc.stderr.readline()
        assert line.startswith(
            f"qctl: waiting for a lock held by pid {pid} (user postgres, "
            "application 'qctl-test-holder', from 127.0.0.1, idle in transaction for "
        ), line
        assert f': LOCK TABLE "{at_version_5}".azync_jobs IN ROW EXCLUSIVE MODE)' in line, line
        holder.rollback()
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "applied 6 migration(s): 6, 7, 8, 9, 10, 11" in stdout
    assert invalid(at_version_5) == []


def test_a_stopped_migration_says_how_far_it_got_and_the_next_run_finishes(
    at_version_5: str, holder: psycopg.Connection[Any]
) -> None:
    stopped = subprocess.run(
        qctl(at_version_5, "db", "migrate", "--lock-timeout", "1s"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stopped.returncode == 7, stopped.stderr
    lines = stopped.stderr.splitlines()
    assert lines[-2] == (
        "db migrate stopped with the schema at version 5 of 11; left: 6, 7, 8, 9, 10, 11;"
        f" invalid: {INDEX}; `qctl db migrate` again goes on from there"
    )
    assert lines[-1].startswith(
        "qctl: error: timed out after 1s waiting for a lock held by pid"
        f" {holder.info.backend_pid} (user postgres, application 'qctl-test-holder'"
    ), lines[-1]
    assert lines[-1].endswith("(lock_timeout); raise it with --lock-timeout")
    assert invalid(at_version_5) == [INDEX]
    holder.rollback()
    again = subprocess.run(
        qctl(at_version_5, "db", "migrate", "-o", "json"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["applied"] == [6, 7, 8, 9, 10, 11]
    assert invalid(at_version_5) == []


def test_status_lists_an_invalid_index_and_migrate_rebuilds_it(fresh_pg_schema: str) -> None:
    """What azync's own migrator leaves after a stopped run: version 11 recorded, the
    index still invalid (its CREATE INDEX CONCURRENTLY IF NOT EXISTS finds it there).
    Up to date, qctl used to call that schema healthy and have nothing to do."""
    run = subprocess.run(qctl(fresh_pg_schema, "db", "migrate"), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            (f'"{fresh_pg_schema}".{INDEX}',),
        )
    status = subprocess.run(
        qctl(fresh_pg_schema, "db", "status", "-o", "json"), capture_output=True, text=True
    )
    assert json.loads(status.stdout)["invalid_indexes"] == [INDEX]
    assert f"invalid index(es): {INDEX} (" in status.stderr
    assert status.stderr.rstrip().endswith("`qctl db migrate` rebuilds those of azync's migrations")

    dry = subprocess.run(
        qctl(fresh_pg_schema, "db", "migrate", "--dry-run"), capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr
    assert f"would rebuild the invalid index(es) {INDEX} (DROP INDEX CONCURRENTLY" in (
        dry.stdout + dry.stderr
    )
    assert invalid(fresh_pg_schema) == [INDEX]

    done = subprocess.run(
        qctl(fresh_pg_schema, "db", "migrate", "-o", "json"), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"applied": [], "version": 11, "rebuilt_indexes": [INDEX]}
    assert invalid(fresh_pg_schema) == []


def test_migrate_names_another_migrator_holding_gooses_lock(fresh_pg_schema: str) -> None:
    """Another migrator (azync's goose, or a second qctl) holds goose's session lock:
    qctl waits for it, as goose does, and names it."""
    from qctl_store.postgres.migrate import GOOSE_LOCK_KEY

    with psycopg.connect(PG_DSN, autocommit=True, application_name="qctl-test-goose") as other:
        other.execute("SELECT pg_advisory_lock(%s)", (GOOSE_LOCK_KEY,))
        proc = subprocess.Popen(
            qctl(fresh_pg_schema, "db", "migrate"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            other.execute("SELECT pg_advisory_unlock(%s)", (GOOSE_LOCK_KEY,))
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        pid = other.info.backend_pid
    assert line.startswith(
        f"qctl: waiting for a lock held by pid {pid} (user postgres, "
        "application 'qctl-test-goose', from 127.0.0.1, idle for "
    ), line
    assert line.rstrip().endswith(": SELECT pg_advisory_lock($1))"), line
    assert proc.returncode == 0, stderr
    assert "applied 11 migration(s)" in stdout
