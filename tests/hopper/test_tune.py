"""``qctl db tune`` on a hopper database (``qctl.systems.hopper.tune``): qctl's one
opt-in index, and the queue depths read on it (``reads.sql`` queue_depths_indexed) equal
to the depths read from the live table (queue_depths), state by state."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from qctl.systems.hopper import reads, tune
from qctl.systems.hopper.database import Database
from tests.conftest import PG_DSN
from tests.hopper.conftest import Run, data, snapshot
from tests.hopper.worker import Worker


@pytest.fixture(scope="module")
def backlog(hopper: Worker) -> None:
    """Live jobs in every live state over three queues, completions in the last
    minute, a paused queue with no job, and a queue with jobs and no queue row."""
    client = hopper.register("tune-host")
    for i in range(3):
        hopper.insert("t.now", queue="tune-a", priority=1 + i % 4)
        hopper.insert("t.later", queue="tune-a", scheduled_at="2999-01-01T00:00:00Z")
        hopper.insert("t.now", queue="tune-b")
    done = hopper.insert("t.done", queue="tune-b")
    assert hopper.claim("tune-b", client, limit=4)  # the three waiting and this one
    assert hopper.finalize(done, client, "completed")
    again = hopper.insert("t.retry", queue="tune-c")
    assert hopper.claim("tune-c", client) == [again]
    assert hopper.finalize(again, client, "retryable", error="later", delay=0)
    hopper.workflow("tune-c", ["first", "then"], [(1, 0)])  # one pending
    hopper.conn.execute("INSERT INTO hopper_queues (name, paused_at) VALUES ('tune-idle', now())")


def _counts(depths: list[reads.QueueDepth]) -> list[reads.QueueDepth]:
    return [replace(d, oldest_available=None) for d in depths]


def _both(db: Database) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both statements in one transaction: one now() for the ages."""
    q = reads.queries("reads.sql")
    with db.transaction():
        return db.all(q.queue_depths), db.all(q.queue_depths_indexed)


def test_tune_adds_the_index_and_the_depths_read_on_it_are_the_same(
    hopper: Worker, backlog: None, qctl: Run, pg_schema: str
) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        assert tune.present(db) == []
        before = snapshot(pg_schema)
        dry = qctl("db", "tune", "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert "would create qctl_hopper_jobs_queue_state; nothing was changed" in dry.output
        refused = qctl("db", "tune", root=("--read-only",))
        assert refused.exit_code == 4 and "read-only" in refused.output
        assert tune.present(db) == [] and snapshot(pg_schema) == before

        ran: list[str] = []
        db_all = db.all

        def spy(text: str, params: Any = ()) -> list[dict[str, Any]]:
            ran.append(text)
            return db_all(text, params)

        db.all = spy  # type: ignore[method-assign]
        untuned = reads.queue_depths(db)
        assert reads.queries("reads.sql").queue_depths in ran

        created = data(qctl("db", "tune", "-o", "json"))
        assert created == {"dry_run": False, "indexes": [tune.QUEUE_STATE]}
        assert tune.present(db) == [tune.QUEUE_STATE]
        assert snapshot(pg_schema) == before  # an index: no row of hopper's changed
        ran.clear()
        assert _counts(reads.queue_depths(db)) == _counts(untuned)  # ages: _both
        assert reads.queries("reads.sql").queue_depths_indexed in ran
        again = qctl("db", "tune")
        assert again.exit_code == 0 and "nothing to tune: qctl_hopper_jobs_queue_state exists" in (
            again.output
        )
        status = data(qctl("db", "status", "-o", "json"))
        assert status["console_indexes"] == [tune.QUEUE_STATE]

        plain, indexed = _both(db)
        assert indexed == plain
        by_queue = {r["queue"]: r for r in indexed}
        assert {q: by_queue[q] for q in ("tune-a", "tune-b", "tune-c", "tune-idle")} == {
            "tune-a": by_queue["tune-a"] | {"available": 3, "scheduled": 3, "running": 0},
            "tune-b": by_queue["tune-b"] | {"available": 0, "running": 3},
            "tune-c": by_queue["tune-c"] | {"pending": 1, "available": 1, "retryable": 1},
            "tune-idle": by_queue["tune-idle"] | {"available": 0, "oldest_available": None},
        }
        assert by_queue["tune-b"]["completed_last_minute"] == 1
        assert by_queue["tune-a"]["oldest_available"] is not None
        assert by_queue["tune-idle"]["paused"] is True and by_queue["tune-a"]["paused"] is None
    finally:
        db.close()
