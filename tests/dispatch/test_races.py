"""qctl's writes beside a running dispatch worker: a cancel never lands on a job the
worker claimed (dispatch's own cancel reads, then writes the whole row back, and can),
and concurrent replays of one DLQ entry enqueue it once."""

from __future__ import annotations

import threading

from qctl.core.errors import WrongState
from qctl.systems.dispatch import actions
from qctl.systems.dispatch.database import Database
from tests.conftest import PG_DSN, raw_pg
from tests.go.harness import Harness, pgx_dsn


def test_cancel_never_lands_on_a_claimed_job(dispatch: Harness, pg_schema: str) -> None:
    ids = [dispatch.call("enqueue", name="race", queue="race-c")["id"] for _ in range(60)]
    worker = Harness("dispatchd", pgx_dsn(pg_schema))
    claimed: list[str] = []

    def work() -> None:
        while jobs := worker.call("dequeue", queues=["race-c"], limit=2)["jobs"]:
            claimed.extend(j["id"] for j in jobs)

    db = Database(PG_DSN, pg_schema)
    cancelled, refused = [], []
    thread = threading.Thread(target=work)
    thread.start()
    try:
        for job_id in reversed(ids):  # from the far end: the two meet midway
            try:
                actions.cancel(db, job_id)
                cancelled.append(job_id)
            except WrongState:
                refused.append(job_id)
    finally:
        thread.join(60)
        worker.close()
        db.close()
    with raw_pg(pg_schema) as c:
        states = dict(
            c.execute("SELECT id, state FROM dispatch_jobs WHERE queue = 'race-c'").fetchall()
        )
    assert sorted(claimed + cancelled) == sorted(ids)  # each job to one side, none lost
    assert all(states[i] == "running" for i in claimed)
    assert all(states[i] == "cancelled" for i in cancelled)
    assert set(refused) <= set(claimed)


def test_concurrent_replays_enqueue_an_entry_once(dispatch: Harness, pg_schema: str) -> None:
    entries = []
    for _ in range(8):
        job_id = dispatch.call("enqueue", name="twice", queue="race-r", max_retries=0)["id"]
        dispatch.call("dequeue", queues=["race-r"], limit=1)
        dispatch.call("run", id=job_id, error="x")
    with raw_pg(pg_schema) as c:
        entries = [r[0] for r in c.execute("SELECT id FROM dispatch_dlq WHERE queue = 'race-r'")]
    done: list[str] = []
    barrier = threading.Barrier(3)

    def replayer() -> None:
        db = Database(PG_DSN, pg_schema)
        try:
            barrier.wait(10)
            for entry in entries:
                try:
                    outcome = actions.replay(db, entry)
                    assert outcome.new_job_id is not None
                    done.append(entry)
                except WrongState:
                    pass
        finally:
            db.close()

    threads = [threading.Thread(target=replayer) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(done) == sorted(entries)  # each entry replayed by exactly one of them
    with raw_pg(pg_schema) as c:
        pending = c.execute(
            "SELECT count(*) FROM dispatch_jobs WHERE queue = 'race-r' AND state = 'pending'"
        ).fetchone()[0]
    assert pending == len(entries)
