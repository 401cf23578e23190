"""``qctl db tune`` on a River database: qctl's one opt-in index (queue, id), built
concurrently, named qctl_*, listed by ``db status``; the listing by queue is the same
page with it, and on a table where a queue's jobs are far from the newest the planner
reads the page on that index."""

from __future__ import annotations

import psycopg

from qctl.systems.river import reads, tune
from qctl.systems.river.database import Database
from tests.conftest import PG_DSN
from tests.go.harness import Harness
from tests.river.conftest import Run, data


def test_tune_adds_the_queue_index(river: Harness, qctl: Run, pg_schema: str) -> None:
    rare = river.call("insert", queue="tune-rare", n=3)["ids"]
    river.call("insert", queue="tune-busy", n=20)
    db = Database(PG_DSN, pg_schema)
    try:
        assert tune.present(db) == []
        page = [j.id for j in reads.list_jobs(db, queues=["tune-rare"])]
        assert page == sorted(rare, reverse=True)
        dry = qctl("db", "tune", "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert f"would create {tune.QUEUE_ID}; nothing was changed" in dry.output
        refused = qctl("--read-only", "db", "tune")
        assert refused.exit_code == 4 and "read-only" in refused.output
        assert tune.present(db) == []

        created = data(qctl("db", "tune", "-o", "json"))
        assert created == {"dry_run": False, "indexes": [tune.QUEUE_ID]}
        assert tune.present(db) == [tune.QUEUE_ID]
        assert [j.id for j in reads.list_jobs(db, queues=["tune-rare"])] == page
        again = qctl("db", "tune")
        assert again.exit_code == 0 and f"nothing to tune: {tune.QUEUE_ID} exists" in again.output
        status = data(qctl("db", "status", "-o", "json"))
        assert status["console_indexes"] == [tune.QUEUE_ID]
        with psycopg.connect(PG_DSN, autocommit=True) as c:
            c.execute(f'SET search_path = "{pg_schema}"')
            c.execute("SET enable_seqscan = off")  # a table this small is read whole anyway
            plan = c.execute(
                "EXPLAIN SELECT id FROM river_job WHERE queue = ANY(%s) ORDER BY id DESC LIMIT 50",
                [["tune-rare"]],
            ).fetchall()
        assert tune.QUEUE_ID in str(plan)
    finally:
        db.close()
