"""qctl's dispatch operations that dispatch's admin API has beyond v0.1.0's (cron
trigger, stats) and the retention dispatch lacks (vacuum): each compared with the rows
dispatch's own code leaves, through the harness (dispatch v0.1.0's engine)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from qctl.core import audit
from qctl.systems.dispatch import actions
from qctl.systems.dispatch.database import Database
from qctl_kit.errors import Done, done_before
from tests.conftest import PG_DSN, raw_pg
from tests.dispatch.conftest import Run, data, row, snapshot
from tests.dispatch.test_actions import REPLAY_COLUMNS, _dead, _entry
from tests.go.harness import Harness


def test_cron_trigger_enqueues_what_a_fire_enqueues(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    """A fire is EnqueueRaw(job name, payload, the queue override) (cron/scheduler.go
    fireEntry): the harness's enqueue of the same is the row to match."""
    dispatch.call(
        "cron",
        name="nightly",
        schedule="0 3 * * *",
        job_name="report",
        queue="cron-t",
        payload={"k": 1},
    )
    entry_before = data(qctl("cron", "list", "-o", "json"))
    before = snapshot(pg_schema)
    dry = data(qctl("cron", "trigger", "nightly", "--dry-run", "-o", "json"))
    assert dry["dry_run"] is True and dry["sample"][0]["label"] == "nightly"
    assert snapshot(pg_schema) == before

    # dispatch's row first: a waiting job tells qctl what this dispatch writes as worker_id
    theirs = row(
        pg_schema,
        "dispatch_jobs",
        dispatch.call("enqueue", name="report", queue="cron-t", payload={"k": 1})["id"],
    )
    assert data(qctl("cron", "trigger", "nightly", "--yes", "-o", "json"))["done"] == 1
    with raw_pg(pg_schema) as c:
        [(new_job_id,)] = c.execute(
            "SELECT id FROM dispatch_jobs WHERE queue = 'cron-t' AND id <> %s", [theirs["id"]]
        )
    ours = row(pg_schema, "dispatch_jobs", new_job_id)
    same = [c for c in REPLAY_COLUMNS if c != "payload"]
    assert {c: ours[c] for c in same} == {c: theirs[c] for c in same}
    with raw_pg(pg_schema) as c:
        [stored] = c.execute("SELECT payload FROM dispatch_cron_entries WHERE name = 'nightly'")
    assert ours["payload"] == stored[0] == b'{"k":1}'  # the entry's bytes, as a fire's
    assert ours["timeout"] == 5 * 60 * 10**9 and ours["max_retries"] == 3
    # the schedule is untouched: next and last run as they were
    assert data(qctl("cron", "list", "-o", "json")) == entry_before
    # dispatch's worker claims it like any job
    claimed = dispatch.call("dequeue", queues=["cron-t"], limit=5)["jobs"]
    assert new_job_id in {j["id"] for j in claimed}


def test_stats_counts_as_dispatch_counts(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    stats = data(qctl("stats", "-o", "json"))
    with raw_pg(pg_schema) as c:
        states = dict(c.execute("SELECT state, count(*) FROM dispatch_jobs GROUP BY 1").fetchall())
        dlq, waiting = c.execute(
            "SELECT count(*), count(*) FILTER (WHERE replayed_at IS NULL) FROM dispatch_dlq"
        ).fetchone()
    for state in ("pending", "running", "completed", "failed", "retrying", "cancelled"):
        assert stats[state] == states.get(state, 0), state
    assert (stats["dlq"], stats["dlq_unreplayed"]) == (dlq, waiting)


def test_replay_wakes_dispatchs_workers(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    """dispatch v1.5.3's workers LISTEN on dispatch_jobs_wake (store/postgres/wake.go);
    qctl's replay sends it once the new job is committed."""
    entry = _entry(qctl, _dead(dispatch, "wake-q"))
    with psycopg.connect(PG_DSN, autocommit=True) as listener:
        listener.execute("LISTEN dispatch_jobs_wake")
        assert data(qctl("dlq", "replay", entry, "--yes", "-o", "json"))["ids"] == [entry]
        got = list(listener.notifies(timeout=5, stop_after=1))
    assert [(n.channel, n.payload) for n in got] == [("dispatch_jobs_wake", "")]


def _age(schema: str, table: str, column: str, id_: str, days: int) -> None:
    with raw_pg(schema) as c:
        c.execute(
            f"UPDATE {table} SET {column} = %s WHERE id = %s",
            (datetime.now(UTC) - timedelta(days=days), id_),
        )


def test_vacuum_deletes_only_old_finished_rows(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    old_done = dispatch.call("enqueue", name="v", queue="vac-q")["id"]
    new_done = dispatch.call("enqueue", name="v", queue="vac-q")["id"]
    dispatch.call("dequeue", queues=["vac-q"], limit=2)
    for j in (old_done, new_done):
        dispatch.call("complete", id=j)
    old_failed = _dead(dispatch, "vac-q")
    old_pending = dispatch.call("enqueue", name="v", queue="vac-q")["id"]
    replayed = _entry(qctl, old_failed)
    data(qctl("dlq", "replay", replayed, "--yes", "-o", "json"))
    waiting = _entry(qctl, _dead(dispatch, "vac-q"))
    _age(pg_schema, "dispatch_jobs", "completed_at", old_done, 40)
    _age(pg_schema, "dispatch_jobs", "completed_at", old_failed, 40)
    _age(pg_schema, "dispatch_jobs", "created_at", old_pending, 40)
    _age(pg_schema, "dispatch_dlq", "replayed_at", replayed, 40)
    _age(pg_schema, "dispatch_dlq", "failed_at", waiting, 40)

    before = snapshot(pg_schema)
    plan = data(qctl("vacuum", "all", "--older-than", "30d", "--dry-run", "-o", "json"))
    assert plan == {
        "older_than": "30d",
        "dry_run": True,
        "tables": [
            {"table": "dispatch_jobs", "would_remove": 1},
            {"table": "dispatch_events", "would_remove": 0},
            {"table": "dispatch_dlq", "would_remove": 1},
        ],
        "total": 2,
    }
    assert snapshot(pg_schema) == before
    assert qctl("vacuum", "all", "--older-than", "30d").exit_code == 4  # no --yes
    zero = qctl("vacuum", "all", "--older-than", "0s", "--yes")
    assert zero.exit_code == 2 and zero.stderr.strip().splitlines() == [
        "qctl: error: --older-than 0 would remove everything finished up to now;"
        " give a positive age"
    ]
    assert snapshot(pg_schema) == before

    done = data(qctl("vacuum", "all", "--older-than", "30d", "--yes", "-o", "json"))
    assert done == {
        "older_than": "30d",
        "dry_run": False,
        "tables": [
            {"table": "dispatch_jobs", "removed": 1},
            {"table": "dispatch_events", "removed": 0},
            {"table": "dispatch_dlq", "removed": 1},
        ],
        "total": 2,
    }
    entry = audit.read()[-1]  # the audit record counts the rows removed
    assert (entry["verb"], entry["done"]) == ("vacuum all", 2)
    with raw_pg(pg_schema) as c:
        jobs = {r[0] for r in c.execute("SELECT id FROM dispatch_jobs")}
        dlq = {r[0] for r in c.execute("SELECT id FROM dispatch_dlq")}
    assert old_done not in jobs
    assert {new_done, old_failed, old_pending} <= jobs
    assert replayed not in dlq and waiting in dlq


def test_an_id_prefix_of_other_characters_is_bad_input(qctl: Run) -> None:
    for text in ("job_01%", "ab cd", "job_.*"):
        refused = qctl("jobs", "show", text)
        assert refused.exit_code == 2, (text, refused.output)
        assert "not a dispatch id or a prefix of one" in refused.output


def test_dlq_replay_all_and_delete(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    entries = [_entry(qctl, _dead(dispatch, "all-q")) for _ in range(3)]
    other = _entry(qctl, _dead(dispatch, "all-other"))
    data(qctl("dlq", "replay", entries[0], "--yes", "-o", "json"))
    before = snapshot(pg_schema)
    plan = data(qctl("dlq", "replay-all", "--queue", "all-q", "--dry-run", "-o", "json"))
    assert sorted(plan["ids"]) == sorted(entries[1:])
    assert snapshot(pg_schema) == before
    done = data(qctl("dlq", "replay-all", "--queue", "all-q", "--yes", "-o", "json"))
    assert done["done"] == 2 and sorted(done["ids"]) == sorted(entries[1:])
    assert row(pg_schema, "dispatch_dlq", other)["replayed_at"] is None

    dry = data(qctl("dlq", "delete", other, "--dry-run", "-o", "json"))
    assert dry["states"] == {"waiting": 1} and dry["dry_run"] is True
    assert qctl("dlq", "delete", other).exit_code == 4  # no --yes off a terminal
    deleted = data(qctl("dlq", "delete", other[4:], entries[0], "--yes", "-o", "json"))
    assert deleted["done"] == 2
    with raw_pg(pg_schema) as c:
        left = {r[0] for r in c.execute("SELECT id FROM dispatch_dlq")}
    assert other not in left and entries[0] not in left and set(entries[1:]) <= left
    assert qctl("dlq", "delete", other, "--yes").exit_code == 3


def test_a_vacuum_stopped_part_way_says_what_it_deleted(dispatch: Harness, pg_schema: str) -> None:
    """The stopped-run report's count: the batches that committed before the failure."""
    ids = [dispatch.call("enqueue", name="v", queue="vac-stop")["id"] for _ in range(3)]
    dispatch.call("dequeue", queues=["vac-stop"], limit=3)
    for j in ids:
        dispatch.call("complete", id=j)
        _age(pg_schema, "dispatch_jobs", "completed_at", j, 40)

    class Failing(Database):
        deletes = 0

        def execute(self, text: str, params: Any = ()) -> int:
            if text.lstrip().startswith("DELETE"):
                self.deletes += 1
                if self.deletes == 3:
                    raise KeyboardInterrupt
            return super().execute(text, params)

    db = Failing(PG_DSN, pg_schema)
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            actions.vacuum(db, timedelta(days=30), batch=1)
    finally:
        db.close()
    with raw_pg(pg_schema) as c:
        left = {r[0] for r in c.execute("SELECT id FROM dispatch_jobs WHERE id = ANY(%s)", (ids,))}
    assert done_before(stopped.value) == Done(rows=2, batches=2)
    assert len(left) == 1


def test_vacuum_stopped_part_way_reports_on_the_command_line(
    dispatch: Harness, pg_schema: str, qctl: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line says what a stopped vacuum committed, as every system's vacuum."""
    ids = [dispatch.call("enqueue", name="v", queue="vac-cli")["id"] for _ in range(3)]
    dispatch.call("dequeue", queues=["vac-cli"], limit=3)
    for j in ids:
        dispatch.call("complete", id=j)
        _age(pg_schema, "dispatch_jobs", "completed_at", j, 40)
    execute = Database.execute
    deletes: list[str] = []

    def failing(self: Database, text: str, params: Any = ()) -> int:
        if text.lstrip().startswith("DELETE"):
            deletes.append(text)
            if len(deletes) == 2:  # the jobs are deleted; the events' delete fails
                raise RuntimeError("boom")
        return execute(self, text, params)

    plan = data(qctl("vacuum", "all", "--older-than", "30d", "--dry-run", "-o", "json"))
    old = plan["tables"][0]["would_remove"]
    assert old >= 3  # ours, and any an earlier test of this module left
    monkeypatch.setattr(Database, "execute", failing)
    stopped = qctl("vacuum", "all", "--older-than", "30d", "--yes")
    assert stopped.exit_code == 1, stopped.output
    assert f"stopped part-way: done {old} dispatch row(s) deleted" in stopped.stderr
    assert "boom" in stopped.stderr
