"""qctl's writes beside a running dispatch worker: a bulk cancel never lands on a job the
worker claimed (dispatch's own cancel reads, then writes the whole row back, and can),
and concurrent replays of one DLQ entry enqueue it once."""

from __future__ import annotations

import threading

import pytest

from qctl.core import verbs
from qctl.core.errors import WrongState
from qctl.core.verbs import Selection
from qctl.systems.dispatch import actions
from qctl.systems.dispatch.database import Database
from tests.conftest import PG_DSN, raw_pg
from tests.go.harness import Harness, pgx_dsn


def test_a_bulk_cancel_on_a_queue_a_worker_drains(
    dispatch: Harness, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel by filter of a whole queue while dispatch's worker claims from it, in
    small batches so the two interleave: every job ends cancelled or claimed, never
    both, none lost; a job claimed after the plan is counted as running, and the run
    goes on."""
    monkeypatch.setattr(verbs, "BATCH", 5)
    ids = [dispatch.call("enqueue", name="race", queue="race-c")["id"] for _ in range(60)]
    worker = Harness("dispatchd", pgx_dsn(pg_schema))
    claimed: list[str] = []

    def work() -> None:
        while jobs := worker.call("dequeue", queues=["race-c"], limit=2)["jobs"]:
            claimed.extend(j["id"] for j in jobs)

    db = Database(PG_DSN, pg_schema)
    thread = threading.Thread(target=work)
    try:
        planned = verbs.plan(db, actions.CANCEL, Selection(filter={"queues": ["race-c"]}), "t")
        thread.start()
        result = verbs.run(db, actions.CANCEL, planned)
    finally:
        thread.join(60)
        worker.close()
        db.close()
    with raw_pg(pg_schema) as c:
        states = dict(
            c.execute("SELECT id, state FROM dispatch_jobs WHERE queue = 'race-c'").fetchall()
        )
    assert sorted(claimed + result.ids) == sorted(ids)  # each job to one side, none lost
    assert all(states[i] == "running" for i in claimed)
    assert all(states[i] == "cancelled" for i in result.ids)
    assert result.done + sum(result.skipped.values()) == len(planned.ids)
    assert set(result.skipped) <= {actions.CANCEL.reason("running")}


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
                    planned = verbs.plan(db, actions.REPLAY, Selection.of_ids([entry]), "t")
                    done.extend(verbs.run(db, actions.REPLAY, planned).ids)
                except WrongState:  # another replayed it before this plan
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
