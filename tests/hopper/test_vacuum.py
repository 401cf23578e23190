"""``qctl vacuum`` on a hopper database: it deletes what hopper's leader leaves (history
past --older-than, finished batches with no live job, stream events every consumer has
delivered), in batches, and nothing else; never a partition."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.core import audit
from qctl.systems.hopper import vacuum
from qctl.systems.hopper.database import Database
from qctl_kit.errors import Done, done_before
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.conftest import Run, data, install, snapshot
from tests.hopper.worker import Worker

OLD = "now() - interval '3 days'"


def _rows(schema: str, sql: str) -> list[Any]:
    with raw_pg(schema) as c:
        return [r[0] for r in c.execute(sql).fetchall()]


def _fill(hopper: Worker, schema: str) -> dict[str, Any]:
    """Old and new rows of every kind vacuum looks at; what must survive."""
    client = hopper.register("vac-host")
    old = [hopper.dead("vac.k", "vac-q", client) for _ in range(5)]
    new = hopper.dead("vac.k", "vac-q", client)
    kept_batch, _ = hopper.workflow("vac-wf", ["a"], [])  # a live job: unfinished
    done_batch, (job,) = hopper.workflow("vac-wf2", ["a"], [])
    assert hopper.claim("vac-wf2", client) == [job]
    assert hopper.finalize(job, client, "completed")
    hopper.consumer("vac-c", "vac.#", "vac-q")
    hopper.append("vac.late", {"n": 1})  # after the consumer's seen snapshot
    with raw_pg(schema) as c:
        c.execute(
            "INSERT INTO hopper_stream_events (xid, topic, created_at)"
            f" VALUES ('3'::xid8, 'vac.delivered', {OLD})"
        )
        c.execute(f"UPDATE hopper_stream_events SET created_at = {OLD}")
        c.execute(f"UPDATE hopper_job_history SET finalized_at = {OLD} WHERE id <> %s", [new])
        c.execute(f"UPDATE hopper_batches SET completed_at = {OLD}, pending = 0")
    return {"old": old, "new": new, "kept_batch": kept_batch, "done_batch": done_batch}


def test_vacuum_deletes_what_the_leader_leaves(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    made = _fill(hopper, pg_schema)
    before = snapshot(pg_schema)
    # this schema's partitions (other modules' schemas come and go meanwhile)
    inherits = (
        "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent"
        " WHERE c.relnamespace = current_schema()::regnamespace"
    )
    partitions = _rows(pg_schema, inherits)
    assert partitions[0] > 0

    zero = qctl("vacuum", "all", "--older-than", "0s", "--yes")
    assert zero.exit_code == 2 and zero.stderr.strip().splitlines() == [
        "qctl: error: --older-than 0 would remove everything finished up to now;"
        " give a positive age"
    ]
    unconfirmed = qctl("vacuum", "all", "--older-than", "1d")
    assert unconfirmed.exit_code == 4 and "Traceback" not in unconfirmed.output
    plan = data(qctl("vacuum", "all", "--older-than", "1d", "--dry-run", "-o", "json"))
    # 5 old discarded jobs + the workflow's completed job; the finished batch; one event
    assert plan == {
        "older_than": "1d",
        "dry_run": True,
        "tables": [
            {"table": "hopper_job_history", "would_remove": 6},
            {"table": "hopper_batches", "would_remove": 1},
            {"table": "hopper_stream_events", "would_remove": 1},
        ],
        "total": 8,
    }
    assert snapshot(pg_schema) == before

    # in batches of 2: the cursor walks on, every old row goes
    db = Database(PG_DSN, pg_schema)
    try:
        done = vacuum.vacuum(db, timedelta(days=1), batch=2)
    finally:
        db.close()
    assert done.counts == {"history": 6, "batches": 1, "stream_events": 1}
    assert _rows(pg_schema, "SELECT id FROM hopper_job_history") == [made["new"]]
    assert _rows(pg_schema, "SELECT id FROM hopper_batches") == [made["kept_batch"]]
    assert _rows(pg_schema, "SELECT topic FROM hopper_stream_events") == ["vac.late"]
    assert _rows(pg_schema, inherits) == partitions
    after = snapshot(pg_schema)
    for table in ("hopper_jobs", "hopper_queues", "hopper_clients", "hopper_job_deps"):
        assert after[table] == before[table]

    again = qctl("vacuum", "all", "--older-than", "1d", "--yes", "-o", "json")
    assert json.loads(again.stdout) == {
        "older_than": "1d",
        "dry_run": False,
        "tables": [
            {"table": "hopper_job_history", "removed": 0},
            {"table": "hopper_batches", "removed": 0},
            {"table": "hopper_stream_events", "removed": 0},
        ],
        "total": 0,
    }
    assert isinstance(made["old"][0], uuid.UUID)


def test_each_verb_deletes_its_own_rows_only(fresh_pg_schema: str) -> None:
    install(fresh_pg_schema)
    hopper = Worker(fresh_pg_schema)
    try:
        made = _fill(hopper, fresh_pg_schema)
    finally:
        hopper.close()

    def qctl(*args: str) -> Result:
        return CliRunner().invoke(app, ["--dsn", PG_DSN, "--schema", fresh_pg_schema, *args])

    history = data(qctl("vacuum", "history", "--older-than", "1d", "--yes", "-o", "json"))
    assert history["tables"] == [{"table": "hopper_job_history", "removed": 6}]
    assert history["total"] == 6
    # the audit trail's record says what was removed, not that one verb ran
    entry = audit.read()[-1]
    assert (entry["verb"], entry["done"], entry["exit_status"]) == ("vacuum history", 6, 0)
    assert made["done_batch"] in _rows(fresh_pg_schema, "SELECT id FROM hopper_batches")
    batches = data(qctl("vacuum", "batches", "--older-than", "1d", "--yes", "-o", "json"))
    assert batches["tables"] == [{"table": "hopper_batches", "removed": 1}]
    streams = qctl("vacuum", "streams", "--older-than", "1d", "--yes")
    assert streams.exit_code == 0
    assert "removed 1 row(s) older than 1d: 1 from hopper_stream_events" in streams.stdout


def test_a_vacuum_stopped_part_way_says_what_it_deleted(fresh_pg_schema: str) -> None:
    """The stopped-run report's count: the batches that committed before the failure."""
    install(fresh_pg_schema)
    hopper = Worker(fresh_pg_schema)
    try:
        _fill(hopper, fresh_pg_schema)
    finally:
        hopper.close()

    class Failing(Database):
        deletes = 0

        def all(self, text: str, params: Any = ()) -> list[dict[str, Any]]:
            if text.lstrip().startswith("DELETE"):
                self.deletes += 1
                if self.deletes == 3:
                    raise KeyboardInterrupt
            return super().all(text, params)

    history = len(_rows(fresh_pg_schema, "SELECT id FROM hopper_job_history"))
    db = Failing(PG_DSN, fresh_pg_schema)
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            vacuum.vacuum(db, timedelta(days=1), batch=2)
    finally:
        db.close()
    left = len(_rows(fresh_pg_schema, "SELECT id FROM hopper_job_history"))
    # batches of 1 then 2 rows (the first batch is sized small: qctl_kit.batches.BatchSize)
    assert done_before(stopped.value) == Done(rows=history - left, batches=2)
    assert history - left == 3
