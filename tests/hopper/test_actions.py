"""qctl's writes to a hopper database, each compared with the rows and notifications
hopper's own code leaves (its statements, transcribed in ``worker.Worker`` and read in
``driver/internal/pgsql``), and with what hopper's worker does afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from qctl.core import verbs
from qctl.core.verbs import Selection
from qctl.systems.hopper import actions, reads
from qctl.systems.hopper.database import Database
from tests.conftest import PG_DSN
from tests.hopper.conftest import Run, data, job_row, snapshot
from tests.hopper.worker import Worker

RUN = uuid.uuid4().hex[:8]
RETRY_Q = f"retry-q-{RUN}"
OPS_Q = f"ops-q-{RUN}"
"""Queue names of this run: hopper's channels are the database's, not the schema's, so
another test run on the same database (another schema) sends the same notices; each
payload ``heard`` keeps names a job id or a queue of this run."""


@pytest.fixture
def listen() -> Iterator[psycopg.Connection[Any]]:
    """A connection listening on hopper's channels."""
    conn = psycopg.connect(PG_DSN, autocommit=True)
    for channel in ("hopper_insert", "hopper_control", "hopper_done"):
        conn.execute(f"LISTEN {channel}")
    yield conn
    conn.close()


def heard(conn: psycopg.Connection[Any], pg_schema: str) -> list[tuple[str, str]]:
    """The notifications since the last call that name this run's jobs or queues."""
    with psycopg.connect(PG_DSN, options=f"-c search_path={pg_schema}") as c:
        ids = {str(r[0]) for r in c.execute(
            "SELECT id FROM hopper_jobs UNION ALL SELECT id FROM hopper_job_history"
        )}  # fmt: skip
    notices = [(n.channel, n.payload) for n in conn.notifies(timeout=0.5)]
    ours = ids | {RETRY_Q, OPS_Q}  # payloads: "<queue>", "<id>", "<action>:<id or queue>"
    return [(channel, payload) for channel, payload in notices if payload.split(":")[-1] in ours]


def test_cancel_waiting_moves_it_to_history(
    hopper: Worker, qctl: Run, pg_schema: str, listen: psycopg.Connection[Any]
) -> None:
    job = hopper.insert("c.wait", {"a": 1}, queue="cancel-q", **{"await": True})
    before = snapshot(pg_schema)
    dry = data(qctl("jobs", "cancel", str(job), "--dry-run", "-o", "json"))
    assert dry["dry_run"] is True and dry["ids"] == [str(job)]
    assert dry["states"] == {"available": 1} and dry["skipped"] == {}
    refused = qctl("jobs", "cancel", str(job))  # no terminal, no --yes
    assert refused.exit_code == 4
    assert snapshot(pg_schema) == before and heard(listen, pg_schema) == []

    result = data(qctl("jobs", "cancel", str(job)[:18], "--yes", "-o", "json"))
    assert result["ids"] == [str(job)] and result["done"] == 1 and result["batches"] == 1
    where, row = job_row(pg_schema, job)  # type: ignore[misc]
    assert where == "history" and row["state"] == "cancelled" and row["finalized_at"]
    [error] = row["errors"]
    assert error["error"] == "hopper: cancelled" and error["attempt"] == 0
    assert row["args"] == {"a": 1} and row["output"] is None
    assert heard(listen, pg_schema) == [("hopper_done", str(job))]  # awaited: announced as done
    again = qctl("jobs", "cancel", str(job), "--yes")
    assert again.exit_code == 3 and "cancelled: already finalized" in again.output


def test_cancel_running_only_asks_its_client(
    hopper: Worker, qctl: Run, pg_schema: str, listen: psycopg.Connection[Any]
) -> None:
    client = hopper.register()
    job = hopper.insert("c.run", queue="cancel-run")
    assert hopper.claim("cancel-run", client) == [job]
    result = data(qctl("jobs", "cancel", str(job), "--yes", "-o", "json"))
    assert result["ids"] == [str(job)] and result["skipped"] == {}
    where, row = job_row(pg_schema, job)  # type: ignore[misc]
    assert where == "live" and row["state"] == "running" and row["cancel_requested_at"]
    assert row["attempted_by"] == client
    assert heard(listen, pg_schema) == [("hopper_control", f"cancel:{job}")]
    # the client that holds it finalizes it, as hopper's worker does on the request
    assert hopper.finalize(job, client, "cancelled", error="hopper: job cancelled")
    assert job_row(pg_schema, job)[0] == "history"  # type: ignore[index]


def test_cancel_cascades_through_a_workflow(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    callback = {"kind": "wf.failed", "queue": "wf-cb"}
    batch, (root, child, grandchild) = hopper.workflow(
        "wf-cancel", ["root", "child", "grandchild"], [(1, 0), (2, 1)], on_failure=callback
    )
    result = data(qctl("jobs", "cancel", str(root), "--yes", "-o", "json"))
    assert result["ids"] == [str(root)]
    for job in (root, child, grandchild):
        where, row = job_row(pg_schema, job)  # type: ignore[misc]
        assert where == "history" and row["state"] == "cancelled"
    assert job_row(pg_schema, child)[1]["errors"][-1]["error"] == "hopper: dependency failed"  # type: ignore[index]
    shown = data(qctl("workflows", "show", str(batch), "-o", "json"))
    assert shown["pending"] == 0 and shown["failed"] == 3 and shown["completed_at"]
    [cb] = data(qctl("jobs", "list", "--queue", "wf-cb", "-o", "json"))
    assert cb["kind"] == "wf.failed" and cb["metadata"]["batch_id"] == str(batch)
    assert data(qctl("jobs", "show", str(child), "-o", "json"))["deps"] == []


def test_retry_from_history_as_hopper_does(
    hopper: Worker, qctl: Run, pg_schema: str, listen: psycopg.Connection[Any]
) -> None:
    client = hopper.register()
    dead = hopper.dead("r.dead", RETRY_Q, client, error="out of luck")
    _, before = job_row(pg_schema, dead)  # type: ignore[misc]
    heard(listen, pg_schema)
    result = data(qctl("jobs", "retry", str(dead), "--yes", "-o", "json"))
    assert result["ids"] == [str(dead)] and result["selected"] == 1
    where, row = job_row(pg_schema, dead)  # type: ignore[misc]
    assert where == "live" and row["state"] == "available"
    # attempts and errors kept; one more attempt allowed since it had run out
    assert row["attempt"] == 1 and row["max_attempts"] == 2 and row["errors"] == before["errors"]
    assert row["seq"] != before["seq"] and row["created_at"] == before["created_at"]
    assert heard(listen, pg_schema) == [("hopper_insert", RETRY_Q)]
    # hopper's worker runs it again
    assert hopper.claim(RETRY_Q, client) == [dead]
    assert hopper.finalize(dead, client, "completed")


def test_retry_refusals_write_nothing(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    client = hopper.register()
    running = hopper.insert("r.run", queue="retry-refuse")
    hopper.claim("retry-refuse", client)
    dead = hopper.dead("r.u", "retry-uq", client, unique_key="k1")
    holder = hopper.insert("r.u", queue="retry-uq", unique_key="k1")
    _, pending = hopper.workflow("wf-retry", ["a", "b"], [(1, 0)])
    before = snapshot(pg_schema)
    for job, why in ((running, "is running"), (dead, "unique key"), (pending[1], "pending")):
        refused = qctl("jobs", "retry", str(job), "--yes")
        assert refused.exit_code == 3 and why in refused.output, refused.output
    assert snapshot(pg_schema) == before
    assert job_row(pg_schema, holder)[0] == "live"  # type: ignore[index]


def test_bulk_retry_by_filter(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    client = hopper.register()
    dead = [hopper.dead("bulk.dead", "bulk-q", client) for _ in range(3)]
    done = hopper.insert("bulk.ok", queue="bulk-q")
    hopper.claim("bulk-q", client)
    hopper.finalize(done, client, "completed")
    before = snapshot(pg_schema)
    dry = data(qctl("jobs", "retry", "--queue", "bulk-q", "--dry-run", "-o", "json"))
    assert dry["selected"] == 3 and set(dry["ids"]) == {str(d) for d in dead}
    capped = qctl("jobs", "retry", "--queue", "bulk-q", "--max", "2", "--yes")
    assert capped.exit_code == 2 and "more than 2" in capped.output
    assert snapshot(pg_schema) == before
    words = qctl("jobs", "retry", "--queue", "bulk-q", "--yes")
    assert words.exit_code == 0 and "retried 3 hopper jobs" in words.stdout
    assert all(job_row(pg_schema, d)[0] == "live" for d in dead)  # type: ignore[index]
    assert job_row(pg_schema, done)[0] == "history"  # type: ignore[index]  # completed: not by default
    both = qctl("jobs", "retry", str(done), "--queue", "bulk-q", "--yes")
    assert both.exit_code == 2


def test_a_claim_between_plan_and_write_is_never_finalized(hopper: Worker, pg_schema: str) -> None:
    """A worker claims the job after qctl planned to cancel it waiting: the write's
    predicate sees it running, so the cancel only asks (hopper's rule); nothing
    finalizes it."""
    client = hopper.register()
    job = hopper.insert("race", queue="race-q")
    db = Database(PG_DSN, pg_schema)
    try:
        planned = verbs.plan(db, actions.CANCEL, Selection.of_ids([str(job)]), "test")
        assert planned.states == {"available": 1}
        assert hopper.claim("race-q", client) == [job]
        result = verbs.run(db, actions.CANCEL, planned)
    finally:
        db.close()
    assert result.ids == [str(job)]
    where, row = job_row(pg_schema, job)  # type: ignore[misc]
    assert where == "live" and row["state"] == "running" and row["cancel_requested_at"]
    assert hopper.finalize(job, client, "completed")  # its client's result still applies


def test_a_job_finished_between_plan_and_write_is_skipped(hopper: Worker, pg_schema: str) -> None:
    """A cancel planned over waiting jobs, one of which is gone by the write: the others
    are cancelled, that one counted under its reason, and the run goes on."""
    jobs = [hopper.insert("race.r", queue="race-r") for _ in range(3)]
    db = Database(PG_DSN, pg_schema)
    try:
        where = {"states": ["available"], "queues": ["race-r"]}
        planned = verbs.plan(db, actions.CANCEL, Selection(filter=where), "test")
        assert sorted(planned.ids) == sorted(map(str, jobs))
        hopper.conn.execute("DELETE FROM hopper_jobs WHERE id = %s", [jobs[0]])
        result = verbs.run(db, actions.CANCEL, planned)
    finally:
        db.close()
    assert result.done == 2 and result.skipped == {"gone": 1} and not result.stopped_part_way
    assert str(jobs[0]) not in result.ids


def test_queue_pause_resume_limit(
    hopper: Worker, qctl: Run, pg_schema: str, listen: psycopg.Connection[Any]
) -> None:
    """``queues pause|resume`` on the verb engine: hopper's QueuePause (a row made where
    there is none) and its notice, a second pause passed over keeping the first time; a
    queue hopper knows by its finished jobs alone."""
    hopper.dead("ops.first", OPS_Q, hopper.register())
    heard(listen, pg_schema)
    dry = data(qctl("queues", "pause", OPS_Q, "--dry-run", "-o", "json"))
    assert dry["ids"] == [OPS_Q] and dry["states"] == {"active": 1}
    assert dry["sample"][0]["label"] == "no queue row yet" and heard(listen, pg_schema) == []
    done = data(qctl("queues", "pause", OPS_Q, "--yes", "-o", "json"))
    assert (done["verb"], done["done"], done["ids"]) == ("queues pause", 1, [OPS_Q])
    assert heard(listen, pg_schema) == [("hopper_control", f"pause:{OPS_Q}")]
    first = data(qctl("queues", "list", "-o", "json"))
    [q] = [r for r in first if r["queue"] == OPS_Q]
    assert q["paused"] is True
    paused_at = reads.get_queue(Database(PG_DSN, pg_schema), OPS_Q).paused_at  # type: ignore[union-attr]
    again = qctl("queues", "pause", OPS_Q, "--yes")  # a second pause keeps the first time
    assert again.exit_code == 3 and "nothing to pause: skipped 1 (1 already paused)" in again.stderr
    kept = reads.get_queue(Database(PG_DSN, pg_schema), OPS_Q)
    assert kept is not None and kept.paused_at == paused_at
    # The stand-in claims as hopper's clients do: nothing of a paused queue.
    client = hopper.register()
    waiting = hopper.insert("paused.job", queue=OPS_Q)
    assert hopper.claim(OPS_Q, client, limit=10) == []
    heard(listen, pg_schema)
    assert qctl("queues", "resume", OPS_Q, "--yes").exit_code == 0
    assert hopper.claim(OPS_Q, client, limit=10) == [waiting]
    assert hopper.finalize(waiting, client, "completed")
    assert heard(listen, pg_schema) == [("hopper_control", f"resume:{OPS_Q}")]

    set_ = qctl("queues", "limit", OPS_Q, "--global", "5", "--rate", "2.5", "--burst", "3",
                "--aging", "90s", "--yes")  # fmt: skip
    assert set_.exit_code == 0, set_.output
    assert set_.stdout == (  # old → new, as DBOS's set-limits says it
        f"set the limits of hopper queue {OPS_Q}: global_limit: none → 5; rate_per_sec: none"
        " → 2.5; rate_burst: none → 3; aging_seconds: none → 90\n"
    )
    assert heard(listen, pg_schema) == [("hopper_control", f"limit:{OPS_Q}")]
    with psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={pg_schema}") as c:
        c.execute("UPDATE hopper_queues SET tokens = 1.5 WHERE name = %s", [OPS_Q])
        row = c.execute(
            "SELECT paused_at, global_limit, rate_per_sec, rate_burst, partition_limit,"
            " aging_seconds, tokens FROM hopper_queues WHERE name = %s",
            [OPS_Q],
        ).fetchone()
    assert row == (None, 5, 2.5, 3, None, 90, 1.5)
    # hopper's CLI: omitted limits are removed; the same rate keeps the bucket's tokens
    qctl("queues", "limit", OPS_Q, "--rate", "2.5", "--partition", "2", "--yes")
    with psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={pg_schema}") as c:
        row = c.execute(
            "SELECT global_limit, rate_per_sec, rate_burst, partition_limit, aging_seconds,"
            " tokens FROM hopper_queues WHERE name = %s",
            [OPS_Q],
        ).fetchone()
    assert row == (None, 2.5, None, 2, None, 1.5)
    bad = qctl("queues", "limit", OPS_Q, "--global", "-1", "--yes")
    assert bad.exit_code == 2


def test_read_only_refuses_every_write(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    job = hopper.insert("ro", queue="ro-q")
    before = snapshot(pg_schema)
    for args in (
        ("jobs", "cancel", str(job), "--yes"),
        ("jobs", "retry", str(job), "--yes"),
        ("queues", "pause", "ro-q", "--yes"),
        ("queues", "limit", "ro-q", "--global", "1", "--yes"),
    ):
        refused = qctl(*args, root=("--read-only",))
        assert refused.exit_code != 0 and "read-only" in refused.output, args
    assert snapshot(pg_schema) == before


def test_watch_prints_hopper_notifications(hopper: Worker, pg_schema: str) -> None:
    """``qctl watch`` (the installed command): a qctl pause, as hopper's clients hear it."""
    import json
    import signal
    import subprocess
    import sys
    from pathlib import Path

    qctl_bin = Path(sys.executable).with_name("qctl")
    args = ["--dsn", PG_DSN, "--schema", pg_schema]
    watcher = subprocess.Popen(
        [str(qctl_bin), *args, "watch", "--channel", "hopper_control"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        assert "watching" in watcher.stderr.readline()
        db = Database(PG_DSN, pg_schema)
        try:
            actions.PAUSE.write(db, ["watch-q"])
        finally:
            db.close()
        line = json.loads(watcher.stdout.readline())
        assert line["channel"] == "hopper_control" and line["payload"] == "pause:watch-q"
    finally:
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(20) == 0


def test_notifications_come_back_after_a_lost_connection(hopper: Worker, pg_schema: str) -> None:
    """``watch``'s stream: its connection ended by the server (a restart, a failover, an
    idle-session reaper), it listens again and says so, and hears what is sent after."""
    from qctl.core.sqldb import LISTENING

    db = Database(PG_DSN, pg_schema)
    stream = db.notifications(["hopper_control"], timeout=30)
    try:
        assert next(stream) == (LISTENING, "")
        with psycopg.connect(PG_DSN, autocommit=True) as admin:
            ended = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                [db.watch_name],
            ).fetchall()
        assert ended
        assert next(stream) == (LISTENING, "")  # listening again
        actions.PAUSE.write(db, ["watch-again"])
        heard = next(n for n in stream if n[1] == "pause:watch-again")
        assert heard == ("hopper_control", "pause:watch-again")
    finally:
        stream.close()
        db.close()


def test_retry_of_a_finished_batch_job_says_the_batch_counts_it_again(
    hopper: Worker, qctl: Run, pg_schema: str
) -> None:
    client = hopper.register()
    batch, (only,) = hopper.workflow("retry-batch", ["one"], [])
    assert hopper.claim("retry-batch", client) == [only]
    assert hopper.finalize(only, client, "discarded", error="x")
    dry = qctl("jobs", "retry", str(only), "--dry-run")
    assert dry.exit_code == 0
    assert f"batch {batch} counted it already" in dry.stdout
