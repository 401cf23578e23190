"""dispatch's own Go store (github.com/xraph/dispatch v0.1.0, the release the Go module
proxy serves) on a fresh PostgreSQL schema, through the ``dispatchd`` harness: its
migrator creates the schema, its producer and worker calls write the rows. These are
the facts qctl's dispatch support reads and gates on: the migration group's versions in
``grove_migrations``, the columns of ``dispatch_jobs``, and the states a job passes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import PG_DSN, raw_pg
from tests.go.harness import Harness, HarnessError, pgx_dsn

# dispatch's store/postgres/migrations.go at v0.1.0: group "dispatch", seven versions.
DISPATCH_VERSIONS = [
    ("20240101120000", "create_jobs_table"),
    ("20240101120001", "create_workflows_tables"),
    ("20240101120002", "create_cron_entries_table"),
    ("20240101120003", "create_dlq_table"),
    ("20240101120004", "create_events_table"),
    ("20240101120005", "create_workers_table"),
    ("20240101120006", "schema_additions"),
]
DISPATCH_TABLES = {
    "dispatch_jobs",
    "dispatch_workflow_runs",
    "dispatch_checkpoints",
    "dispatch_cron_entries",
    "dispatch_dlq",
    "dispatch_events",
    "dispatch_workers",
    "grove_migrations",
    "grove_migration_locks",
}


@pytest.fixture(scope="module")
def dispatch(pg_schema: str) -> Iterator[Harness]:
    """A dispatch producer/worker on this module's schema, migrated by dispatch."""
    h = Harness("dispatchd", pgx_dsn(pg_schema))
    h.call("migrate")
    yield h
    h.close()


def _tables(schema: str) -> set[str]:
    with raw_pg(schema) as c:
        return {
            r[0]
            for r in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
        }


def test_dispatch_migrates_its_schema_once(dispatch: Harness, pg_schema: str) -> None:
    assert _tables(pg_schema) == DISPATCH_TABLES
    dispatch.call("migrate")  # a second run finds nothing to do
    with raw_pg(pg_schema) as c:
        rows = c.execute(
            'SELECT version, name FROM grove_migrations WHERE "group" = %s ORDER BY id',
            ("dispatch",),
        ).fetchall()
    assert rows == DISPATCH_VERSIONS


def test_a_job_passes_the_states_dispatch_writes(dispatch: Harness, pg_schema: str) -> None:
    job_id = dispatch.call(
        "enqueue", name="email.send", queue="mail", payload={"to": "ops"}, max_retries=1
    )["id"]
    assert job_id.startswith("job_")
    with raw_pg(pg_schema) as c:
        row = c.execute(
            "SELECT name, queue, state, priority, max_retries, retry_count, payload"
            " FROM dispatch_jobs WHERE id = %s",
            (job_id,),
        ).fetchone()
    # The payload is the producer's JSON, stored as bytea.
    assert row[:6] == ("email.send", "mail", "pending", 0, 1, 0)
    assert json.loads(row[6]) == {"to": "ops"}

    for attempt, after in [(1, "retrying"), (2, "failed")]:
        [claimed] = dispatch.call("dequeue", queues=["mail"], limit=10)["jobs"]
        assert (claimed["id"], claimed["state"], claimed["retry_count"]) == (
            job_id,
            "running",
            attempt - 1,
        )
        assert dispatch.call("fail", id=job_id, error="smtp: 421")["job"]["state"] == after
    assert dispatch.call("dequeue", queues=["mail"], limit=10)["jobs"] == []
    with raw_pg(pg_schema) as c:
        state, retries, error, done = c.execute(
            "SELECT state, retry_count, last_error, completed_at IS NOT NULL"
            " FROM dispatch_jobs WHERE id = %s",
            (job_id,),
        ).fetchone()
    assert (state, retries, error, done) == ("failed", 2, "smtp: 421", True)
    with pytest.raises(HarnessError, match="not held"):
        dispatch.call("complete", id=job_id)


def test_concurrent_workers_never_claim_one_job_twice(pg_schema: str) -> None:
    """dispatch's dequeue (FOR UPDATE SKIP LOCKED) hands each job to one worker: the
    property qctl's writes to a live dispatch deployment must keep."""
    producer = Harness("dispatchd", pgx_dsn(pg_schema))
    ids = {producer.call("enqueue", name="n", queue="race")["id"] for _ in range(60)}
    workers = [Harness("dispatchd", pgx_dsn(pg_schema)) for _ in range(3)]
    claimed: list[list[str]] = [[] for _ in workers]

    def drain(n: int) -> None:
        while jobs := workers[n].call("dequeue", queues=["race"], limit=4)["jobs"]:
            claimed[n].extend(j["id"] for j in jobs)

    threads = [threading.Thread(target=drain, args=(n,)) for n in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for h in [producer, *workers]:
        h.close()
    every = [i for c in claimed for i in c]
    assert sorted(every) == sorted(ids)  # each job once, none lost
    with psycopg.connect(PG_DSN, options=f"-c search_path={pg_schema}") as c:
        states = c.execute(
            "SELECT state, count(*) FROM dispatch_jobs WHERE queue = 'race' GROUP BY state"
        ).fetchall()
    assert states == [("running", 60)]
