"""qctl's writes to a dispatch v0.1.0 database, each compared with the rows dispatch's
own code leaves (its worker, its DLQ replay and purge through the harness; its API's
cancel, api/job_handler.go, transcribed), and with what a live worker sees afterwards."""

from __future__ import annotations

import time

import pytest

from tests.dispatch.conftest import Run, data, row, snapshot
from tests.go.harness import Harness, HarnessError

REPLAY_COLUMNS = (
    "name",
    "queue",
    "payload",
    "state",
    "priority",
    "max_retries",
    "retry_count",
    "last_error",
    "scope_app_id",
    "scope_org_id",
    "worker_id",
    "started_at",
    "completed_at",
    "heartbeat_at",
    "timeout",
)


def _dead(dispatch: Harness, queue: str, error: str = "boom") -> str:
    """A job that dispatch's worker ran, failed past its retries and pushed to the DLQ."""
    job_id = dispatch.call(
        "enqueue", name=f"{queue}.job", queue=queue, payload={"q": queue}, priority=3, max_retries=0
    )["id"]
    [claimed] = dispatch.call("dequeue", queues=[queue], limit=1)["jobs"]
    assert claimed["id"] == job_id
    assert dispatch.call("run", id=job_id, error=error)["job"]["state"] == "failed"
    return job_id


def _entry(qctl: Run, job_id: str) -> str:
    [entry] = data(qctl("jobs", "show", job_id, "-o", "json"))["dlq"]
    return str(entry["id"])


def test_cancel_pending_as_dispatch_api_does(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    job_id = dispatch.call("enqueue", name="c", queue="cancel-q", payload={"a": 1})["id"]
    before = row(pg_schema, "dispatch_jobs", job_id)
    dry = qctl("jobs", "cancel", job_id, "--dry-run", "-o", "json")
    assert data(dry)["dry_run"] is True and row(pg_schema, "dispatch_jobs", job_id) == before
    assert qctl("jobs", "cancel", job_id).exit_code == 4  # no terminal, no --yes
    assert row(pg_schema, "dispatch_jobs", job_id) == before

    result = data(qctl("jobs", "cancel", job_id[4:14], "--yes", "-o", "json"))
    assert result["ids"] == [job_id] and result["done"] == 1
    after = row(pg_schema, "dispatch_jobs", job_id)
    # cancelJob sets state and completed_at; UpdateJob stamps updated_at. Nothing else.
    assert after["state"] == "cancelled" and after["completed_at"] is not None
    assert after["updated_at"] >= before["updated_at"]
    changed = {"state", "completed_at", "updated_at"}
    assert {k: v for k, v in after.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }
    assert dispatch.call("dequeue", queues=["cancel-q"], limit=5)["jobs"] == []
    again = qctl("jobs", "cancel", job_id, "--yes")
    assert again.exit_code == 3 and "nothing to cancel: skipped 1 (1 cancelled)" in again.output


def test_cancel_refuses_a_running_job(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    job_id = dispatch.call("enqueue", name="r", queue="running-q")["id"]
    dispatch.call("dequeue", queues=["running-q"], limit=1)
    before = snapshot(pg_schema)
    refused = qctl("jobs", "cancel", job_id, "--yes")
    assert refused.exit_code == 3 and "no lease epoch" in refused.output
    assert snapshot(pg_schema) == before
    assert dispatch.call("run", id=job_id)["job"]["state"] == "completed"


def test_dispatch_engine_cannot_replay_on_postgres(dispatch: Harness, qctl: Run) -> None:
    """The fact the harness's replay works around: the engine's own DLQ service fails
    to read the entry at v0.1.0, so dispatch's API cannot replay on PostgreSQL."""
    entry = _entry(qctl, _dead(dispatch, "engine-q"))
    with pytest.raises(HarnessError, match='syntax error at or near "LIMIT"'):
        dispatch.call("engine_replay_dlq", id=entry)


def test_replay_leaves_what_dispatch_replay_leaves(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    ours = _entry(qctl, _dead(dispatch, "replay-q", "smtp 421"))
    theirs = _entry(qctl, _dead(dispatch, "replay-q", "smtp 421"))
    before = snapshot(pg_schema)
    plan = data(qctl("dlq", "replay", ours, "--dry-run", "-o", "json"))
    assert plan["dry_run"] is True and plan["ids"] == [ours] and plan["states"] == {"waiting": 1}
    assert snapshot(pg_schema) == before

    done = data(qctl("dlq", "replay", ours[4:16], "--yes", "-o", "json"))
    assert done["ids"] == [ours]
    [new_id] = _replayed_as(pg_schema, "replay-q")  # before dispatch's own replay
    reference = dispatch.call("replay_dlq", id=theirs)["job"]["id"]
    mine, dispatchs = (
        row(pg_schema, "dispatch_jobs", new_id),
        row(pg_schema, "dispatch_jobs", reference),
    )
    assert {c: mine[c] for c in REPLAY_COLUMNS} == {c: dispatchs[c] for c in REPLAY_COLUMNS}
    assert mine["state"] == "pending" and mine["priority"] == 0  # Replay drops priority
    assert mine["run_at"] == mine["created_at"] == mine["updated_at"]
    for entry in (ours, theirs):
        assert row(pg_schema, "dispatch_dlq", entry)["replayed_at"] is not None

    # Each entry once: dispatch's own replay would enqueue it again.
    jobs_before = snapshot(pg_schema)["dispatch_jobs"]
    again = qctl("dlq", "replay", ours, "--yes")
    assert again.exit_code == 3 and "already replayed" in again.output
    assert snapshot(pg_schema)["dispatch_jobs"] == jobs_before

    # dispatch's worker takes qctl's job like its own (the id parses as a job TypeID).
    claimed = {j["id"] for j in dispatch.call("dequeue", queues=["replay-q"], limit=5)["jobs"]}
    assert claimed == {new_id, reference}
    assert dispatch.call("run", id=new_id)["job"]["state"] == "completed"


def _replayed_as(schema: str, queue: str) -> list[str]:
    """The pending jobs of ``queue``: those replays enqueued (its failed jobs are not)."""
    import psycopg

    from tests.conftest import PG_DSN

    with psycopg.connect(PG_DSN) as conn:
        rows = conn.execute(
            f'SELECT id FROM "{schema}".dispatch_jobs'
            " WHERE queue = %s AND state = 'pending' ORDER BY id",
            [queue],
        ).fetchall()
    return [i for (i,) in rows]


def test_retry_replays_the_failed_jobs_entry(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    job_id = _dead(dispatch, "retry-q")
    entry = _entry(qctl, job_id)
    before = snapshot(pg_schema)
    assert data(qctl("jobs", "retry", job_id, "--dry-run", "-o", "json"))["ids"] == [entry]
    assert snapshot(pg_schema) == before
    done = data(qctl("jobs", "retry", job_id, "--yes", "-o", "json"))
    assert done["ids"] == [entry] and done["verb"] == "dlq replay"
    assert row(pg_schema, "dispatch_jobs", job_id)["state"] == "failed"  # the old row stays
    [new_id] = _replayed_as(pg_schema, "retry-q")
    assert row(pg_schema, "dispatch_jobs", new_id)["state"] == "pending"
    gone = qctl("jobs", "retry", job_id, "--yes")
    assert gone.exit_code == 3 and "no DLQ entry left" in gone.output
    pending = dispatch.call("enqueue", name="p", queue="retry-q")["id"]
    assert qctl("jobs", "retry", pending, "--yes").exit_code == 3


def test_read_only_refuses_every_write(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    job_id = dispatch.call("enqueue", name="ro", queue="ro-q")["id"]
    entry = _entry(qctl, _dead(dispatch, "ro-dead-q"))
    before = snapshot(pg_schema)
    for args in (
        ("jobs", "cancel", job_id, "--yes"),
        ("jobs", "retry", job_id, "--yes"),
        ("dlq", "replay", entry, "--yes"),
        ("dlq", "purge", "--older-than", "1s", "--yes"),
    ):
        refused = qctl(*args, root=("--read-only",))
        assert refused.exit_code == 4, (args, refused.output)
    # A dry run only reads: allowed, on a read-only session.
    assert qctl("dlq", "replay", entry, "--dry-run", root=("--read-only",)).exit_code == 0
    assert snapshot(pg_schema) == before


def test_purge_deletes_what_dispatch_purge_deletes(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    _dead(dispatch, "purge-q")
    assert qctl("dlq", "purge", "--older-than", "0s", "--yes").exit_code == 2
    time.sleep(1.2)
    with_cutoff = snapshot(pg_schema)["dispatch_dlq"]
    plan = data(qctl("dlq", "purge", "--older-than", "1s", "--dry-run", "-o", "json"))
    assert plan["count"] == len(with_cutoff) > 0 and plan["dry_run"] is True
    assert snapshot(pg_schema)["dispatch_dlq"] == with_cutoff
    fresh = _entry(qctl, _dead(dispatch, "purge-q"))  # failed now: younger than 1s
    done = data(qctl("dlq", "purge", "--older-than", "1s", "--yes", "-o", "json"))
    assert done["count"] == plan["count"]
    assert [r[0] for r in snapshot(pg_schema)["dispatch_dlq"]] == [fresh]
    # dispatch's PurgeDLQ with the same cutoff finds nothing more.
    assert dispatch.call("purge_dlq", before=done["before"])["purged"] == 0


def test_bulk_cancel_by_filter(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    pending = [dispatch.call("enqueue", name="bulk", queue="bulk-q")["id"] for _ in range(4)]
    [running] = dispatch.call("dequeue", queues=["bulk-q"], limit=1)["jobs"]
    waiting = [i for i in pending if i != running["id"]]
    before = snapshot(pg_schema)
    plan = data(qctl("jobs", "cancel", "--queue", "bulk-q", "--dry-run", "-o", "json"))
    assert plan["dry_run"] is True and plan["selected"] == 3
    assert sorted(plan["ids"]) == sorted(waiting)
    for args in (
        ("--queue", "bulk-q", "--max", "2", "--yes"),  # more match than --max
        ("--queue", "bulk-q", "--state", "running", "--yes"),  # not a cancellable state
        (waiting[0], "--queue", "bulk-q", "--yes"),  # ids and a filter
        ("--yes",),  # neither
    ):
        assert qctl("jobs", "cancel", *args).exit_code == 2, args
    assert snapshot(pg_schema) == before

    done = data(qctl("jobs", "cancel", "--queue", "bulk-q", "--yes", "-o", "json"))
    assert done["done"] == 3 and done["skipped"] == {}
    assert all(row(pg_schema, "dispatch_jobs", i)["state"] == "cancelled" for i in waiting)
    assert row(pg_schema, "dispatch_jobs", running["id"])["state"] == "running"
    assert qctl("jobs", "cancel", "--queue", "bulk-q", "--yes").exit_code == 3  # none left


def test_replay_all_of_a_queue(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    entries = sorted(_entry(qctl, _dead(dispatch, "bulk-dlq")) for _ in range(2))
    assert qctl("dlq", "replay", "--yes").exit_code == 2  # ids, a filter or --all
    plan = data(qctl("dlq", "replay", "--queue", "bulk-dlq", "--dry-run", "-o", "json"))
    assert sorted(plan["ids"]) == entries
    done = data(qctl("dlq", "replay", "--queue", "bulk-dlq", "--yes", "-o", "json"))
    assert sorted(done["ids"]) == entries
    assert all(row(pg_schema, "dispatch_dlq", e)["replayed_at"] is not None for e in entries)
    assert qctl("dlq", "replay", "--queue", "bulk-dlq", "--yes").exit_code == 3  # none left
    replayed = _replayed_as(pg_schema, "bulk-dlq")
    claimed = dispatch.call("dequeue", queues=["bulk-dlq"], limit=5)["jobs"]
    assert len(replayed) == 2 and sorted(j["id"] for j in claimed) == replayed


def test_a_cancel_behind_a_row_lock_times_out_and_writes_nothing(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    """dispatch's sessions take the console's limits as azync's and DBOS's do: a cancel
    waiting on a row another session holds ends at ``--lock-timeout`` with exit 7."""
    import psycopg

    from tests.conftest import PG_DSN

    job_id = dispatch.call("enqueue", name="l", queue="lock-q", payload={})["id"]
    before = row(pg_schema, "dispatch_jobs", job_id)
    with psycopg.connect(PG_DSN) as other:
        other.execute(
            f'SELECT 1 FROM "{pg_schema}".dispatch_jobs WHERE id = %s FOR UPDATE', (job_id,)
        ).fetchall()
        result = qctl("jobs", "cancel", job_id, "--yes", root=("--lock-timeout", "700ms"))
        pid = other.info.backend_pid
        other.rollback()
    assert result.exit_code == 7, result.output
    assert f"waiting for a lock held by pid {pid} (user postgres" in result.stderr
    assert row(pg_schema, "dispatch_jobs", job_id) == before


def test_a_bulk_cancel_stopped_part_way_reports_what_it_did(
    dispatch: Harness, pg_schema: str, qctl: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run in batches of one stops at a row another session holds (lock_timeout): the
    first batch stays done, the result says so (JSON here), then the timeout's line and
    exit code."""
    import json

    import psycopg

    from qctl.core import verbs
    from tests.conftest import PG_DSN

    monkeypatch.setattr(verbs, "BATCH", 1)
    ids = [
        dispatch.call("enqueue", name="p", queue="part-q", payload={"n": n})["id"] for n in range(3)
    ]
    with psycopg.connect(PG_DSN) as other:
        other.execute(
            f'SELECT 1 FROM "{pg_schema}".dispatch_jobs WHERE id = %s FOR UPDATE', (ids[1],)
        ).fetchall()
        result = qctl(
            "jobs", "cancel", *ids, "--yes", "-o", "json", root=("--lock-timeout", "500ms")
        )
        other.rollback()
    assert result.exit_code == 7, result.output
    report = json.loads(result.stdout)
    assert (report["stopped_part_way"], report["done"], report["batches"]) == (True, 1, 1)
    assert report["ids"] == [ids[0]] and "lock" in report["error"]
    assert "qctl: stopped part-way: cancelled 1 dispatch job in 1 committed" in result.stderr
    assert [row(pg_schema, "dispatch_jobs", i)["state"] for i in ids] == [
        "cancelled",
        "pending",
        "pending",
    ]
    assert "lock_timeout" in result.stderr


def test_a_replay_writes_the_worker_id_the_deployments_dispatch_writes(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    """A job no worker holds carries v0.1.0's zero TypeID text, or '' from dispatch's main
    at 6f7dda7 (same schema): qctl's jobs carry what the deployment's own waiting jobs
    carry, not always v0.1.0's."""
    from qctl.systems.dispatch.database import ZERO_WORKER_ID
    from tests.conftest import raw_pg

    first, second = (_entry(qctl, _dead(dispatch, "wid-q")) for _ in range(2))
    dispatch.call("enqueue", name="w", queue="wid-waiting")  # v0.1.0's producer
    data(qctl("dlq", "replay", first, "--yes", "-o", "json"))
    [replayed] = _replayed_as(pg_schema, "wid-q")
    assert row(pg_schema, "dispatch_jobs", replayed)["worker_id"] == ZERO_WORKER_ID
    with raw_pg(pg_schema) as c:  # as 6f7dda7's producer writes them
        c.execute("UPDATE dispatch_jobs SET worker_id = '' WHERE worker_id = %s", (ZERO_WORKER_ID,))
    data(qctl("dlq", "replay", second, "--yes", "-o", "json"))
    [replayed] = [i for i in _replayed_as(pg_schema, "wid-q") if i != replayed]
    assert row(pg_schema, "dispatch_jobs", replayed)["worker_id"] == ""
