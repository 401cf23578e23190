"""``qctl queues throughput`` on a hopper database: enqueued by the time in each job's
UUIDv7 id, completed, failed (discarded) and cancelled by finalized_at, per bucket."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from qctl.systems.hopper.reads import first_uuid7
from tests.conftest import raw_pg
from tests.hopper.conftest import Run, data
from tests.hopper.worker import Worker


def _finalized(schema: str, queue: str, state: str, made: datetime, done: datetime) -> None:
    """A history row whose id was made at ``made`` and which finalized at ``done``."""
    job_id = uuid.UUID(int=first_uuid7(made).int | (uuid.uuid4().int & ((1 << 80) - 1)))
    with raw_pg(schema) as c:
        c.execute(
            "INSERT INTO hopper_job_history (id, seq, kind, queue, state, priority, attempt,"
            " max_attempts, scheduled_at, args, metadata, errors, await, created_at,"
            " finalized_at) VALUES (%s, 1, 'k', %s, %s::hopper_job_state, 2, 1, 25, %s, '{}',"
            " '{}', '[]', false, %s, %s)",
            (job_id, queue, state, made, made, done),
        )


def test_throughput_buckets_each_measure(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    with raw_pg(pg_schema) as c:
        now: datetime = c.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    minute = now.replace(second=0, microsecond=0)
    two_ago, one_ago = minute - timedelta(minutes=2), minute - timedelta(minutes=1)
    for state in ("completed", "completed", "completed", "discarded"):
        _finalized(pg_schema, "tq-a", state, two_ago + timedelta(seconds=5), two_ago)
    _finalized(pg_schema, "tq-b", "cancelled", one_ago, one_ago + timedelta(seconds=1))
    _finalized(pg_schema, "tq-a", "completed", now - timedelta(hours=3), now - timedelta(hours=3))
    hopper.insert("k", {}, queue="tq-b")
    hopper.insert("k", {}, queue="tq-a")

    rows = data(qctl("queues", "throughput", "--last", "5m", "-o", "json"))
    assert len(rows) == 5  # every bucket, zero or not (the newest the current minute)
    by_start: dict[str, Any] = {r["start"][11:16]: r for r in rows}
    at = {k: by_start[t.strftime("%H:%M")] for k, t in (("two", two_ago), ("one", one_ago))}
    assert (at["two"]["completed"], at["two"]["failed"], at["two"]["enqueued"]) == (3, 1, 4)
    assert (at["one"]["cancelled"], at["one"]["enqueued"]) == (1, 1)
    assert sum(r["completed"] for r in rows) == 3  # the 3-hour-old one is outside
    assert sum(r["enqueued"] for r in rows) == 7  # with the two live jobs, made now

    per = data(qctl("queues", "throughput", "--last", "5m", "--per-queue", "-o", "json"))
    assert {(r["queue"], r["completed"], r["failed"]) for r in per if r["queue"] == "tq-a"} >= {
        ("tq-a", 3, 1)
    }
    only_b = data(qctl("queues", "throughput", "--last", "5m", "-q", "tq-b", "-o", "json"))
    assert sum(r["cancelled"] for r in only_b) == 1 and sum(r["completed"] for r in only_b) == 0
    assert sum(r["enqueued"] for r in only_b) == 2


def test_throughput_refuses_a_bad_window(hopper: Worker, qctl: Run) -> None:
    for args in (("--by", "day"), ("--last", "30s"), ("--last", "nonsense")):
        bad = qctl("queues", "throughput", *args)
        assert bad.exit_code == 2 and "Traceback" not in bad.output, bad.output
