"""``qctl vacuum all`` on a River database: what River's cleaner deletes (finalized jobs
older than a horizon, lowest ids first, in batches), on jobs River's own client made and
finalized; River's JobList agrees afterwards."""

from __future__ import annotations

import json
from datetime import timedelta

import psycopg

from qctl.core import audit
from qctl.systems.river import actions
from qctl.systems.river.database import Database
from tests.conftest import PG_DSN
from tests.go.harness import Harness
from tests.river.conftest import Run, data, job, until


def _age(schema: str, ids: list[int], days: int) -> None:
    """Finalized ``days`` ago: River's cleaner reads finalized_at alone."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            f'UPDATE "{schema}".river_job SET finalized_at = now() - make_interval(days => %s)'
            " WHERE id = ANY(%s)",
            [days, ids],
        )


def test_vacuum_deletes_what_rivers_cleaner_deletes(
    river: Harness, qctl: Run, pg_schema: str
) -> None:
    river.call("start", queues=["vac-work"])
    completed = river.call("insert", queue="vac-work", n=3)["ids"]
    [discarded] = river.call("insert", queue="vac-work", mode="fail", max_attempts=1)["ids"]
    until(lambda: job(river, discarded)["state"] == "discarded")
    until(lambda: all(job(river, i)["state"] == "completed" for i in completed))
    river.call("stop")
    cancelled = river.call("insert", queue="vac-idle", n=2)["ids"]
    for id_ in cancelled:
        river.call("cancel", id=id_)
    [waiting] = river.call("insert", queue="vac-idle")["ids"]
    _age(pg_schema, [*completed[:2], discarded, cancelled[0]], 3)
    everything = {*completed, discarded, *cancelled, waiting}

    zero = qctl("vacuum", "all", "--older-than", "0s", "--yes")
    assert zero.exit_code == 2 and len(zero.stderr.strip().splitlines()) == 1
    running = qctl("vacuum", "all", "--older-than", "1d", "--state", "running", "--yes")
    assert running.exit_code == 2 and "not finalized" in running.stderr
    unconfirmed = qctl("vacuum", "all", "--older-than", "1d")
    assert unconfirmed.exit_code == 4 and "Traceback" not in unconfirmed.output
    plan = data(qctl("vacuum", "all", "--older-than", "1d", "--dry-run", "-o", "json"))
    assert plan == {
        "older_than": "1d",
        "dry_run": True,
        "tables": [
            {"table": "river_job cancelled", "would_remove": 1},
            {"table": "river_job completed", "would_remove": 2},
            {"table": "river_job discarded", "would_remove": 1},
        ],
        "total": 4,
    }
    assert set(river.call("job_list")["ids"]) == everything

    only = data(
        qctl("vacuum", "all", "--older-than", "1d", "--state", "discarded", "--yes", "-o", "json")
    )
    assert only["tables"] == [{"table": "river_job discarded", "removed": 1}]
    entry = audit.read()[-1]
    assert (entry["verb"], entry["done"], entry["exit_status"]) == ("vacuum all", 1, 0)

    db = Database(PG_DSN, pg_schema)
    try:  # in batches of one: every old finalized job goes, lowest ids first
        assert actions.vacuum(db, timedelta(days=1), batch=1) == {
            "cancelled": 1,
            "completed": 2,
            "discarded": 0,
        }
    finally:
        db.close()
    left = set(river.call("job_list")["ids"])
    assert left == {completed[2], cancelled[1], waiting}

    again = qctl("vacuum", "all", "--older-than", "1d", "--yes", "-o", "json")
    assert json.loads(again.stdout)["total"] == 0
    words = qctl("vacuum", "all", "--older-than", "1h", "--dry-run")
    assert "would remove 0 row(s) older than 1h" in words.stdout
