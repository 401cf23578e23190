"""qctl beside real River clients (River v0.51.2): River's migrator made the schema,
River's client inserts, and River's producers fetch and work while qctl retries, cancels
and pauses. A cancel reaches a running job through River's control topic and its worker
stops; a paused queue's producer fetches nothing until resumed; a retried job is worked
again; no job is lost or run twice; qctl's counts are River's own (JobList)."""

from __future__ import annotations

import time
from collections import Counter

import psycopg
import pytest
from psycopg import sql

from qctl.core import verbs
from tests.conftest import PG_DSN
from tests.go.harness import Harness
from tests.river.conftest import Run, data, job, runs, until

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def working(river: Harness) -> Harness:
    """River's working client on the queues of this module's tests, stopped after the
    test."""
    river.call("start", queues=["blocking", "paused", "failing", "draining"])
    yield river  # type: ignore[misc]
    river.call("stop")


def test_a_cancel_reaches_a_running_job_through_river_control(working: Harness, qctl: Run) -> None:
    [id_] = working.call("insert", queue="blocking", mode="block")["ids"]
    working.call("wait_started", id=id_, seconds=10)
    assert job(working, id_)["state"] == "running"
    result = data(qctl("jobs", "cancel", str(id_), "--yes", "-o", "json"))
    assert result["done"] == 1
    # The worker blocks until its context is cancelled: only River's control
    # notification (its producer's cancel) ends it, then River finalizes it cancelled.
    until(lambda: job(working, id_)["state"] == "cancelled", 10)
    row = job(working, id_)
    assert "cancel_attempted_at" in row["metadata"] and row["attempt"] == 1
    assert runs(working)[id_] == 1


def test_a_paused_queue_is_not_fetched_until_resumed(working: Harness, qctl: Run) -> None:
    until(lambda: any(q["name"] == "paused" for q in working.call("queue_list")["queues"]))
    assert data(qctl("queues", "pause", "paused", "--yes", "-o", "json"))["done"] == 1
    assert {"name": "paused", "paused": True} in working.call("queue_list")["queues"]
    time.sleep(0.5)  # the notification reaches the producer
    ids = working.call("insert", queue="paused", n=5)["ids"]
    time.sleep(2)  # twenty fetch polls of River's producer
    listed = working.call("job_list", queue="paused")
    assert listed["counts"] == {"available": 5} and not set(ids) & set(runs(working))
    assert data(qctl("queues", "resume", "paused", "--yes", "-o", "json"))["done"] == 1
    until(lambda: working.call("job_list", queue="paused")["counts"] == {"completed": 5})
    assert [runs(working)[i] for i in ids] == [1] * 5


def test_a_retried_job_is_worked_again(working: Harness, qctl: Run) -> None:
    [id_] = working.call("insert", queue="failing", mode="fail", max_attempts=1)["ids"]
    until(lambda: job(working, id_)["state"] == "discarded")
    result = data(qctl("jobs", "retry", str(id_), "--yes", "-o", "json"))
    assert result["done"] == 1
    # River's JobRetry: max_attempts raised past the spent attempt, so it runs once more.
    until(lambda: job(working, id_)["attempt"] == 2 and job(working, id_)["state"] == "discarded")
    row = job(working, id_)
    assert (row["max_attempts"], row["errors"]) == (2, 2)
    assert runs(working)[id_] == 2
    history = data(qctl("jobs", "show", str(id_), "-o", "json"))["errors"]
    assert [(e["attempt"], e["error"]) for e in history] == [
        (1, "harness failure"),
        (2, "harness failure"),
    ]


def test_a_bulk_cancel_of_a_queue_river_drains_loses_no_job(
    working: Harness, qctl: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel by filter while River's producer fetches from the same queue, in small
    batches so the two interleave: every job ends completed (run once) or cancelled
    (never run, or asked while running and finished as River decides), none lost."""
    monkeypatch.setattr(verbs, "BATCH", 5)
    ids = working.call("insert", queue="draining", n=200)["ids"]
    result = data(qctl("jobs", "cancel", "--queue", "draining", "--yes", "-o", "json"))
    until(lambda: not {"available", "running"} & set(
        working.call("job_list", queue="draining")["counts"]
    ))  # fmt: skip
    listed = working.call("job_list", queue="draining")
    assert sorted(listed["ids"]) == sorted(ids)  # none lost
    assert set(listed["counts"]) <= {"completed", "cancelled"}
    started = runs(working)
    assert all(started.get(i, 0) <= 1 for i in ids)  # none run twice
    cancelled = {int(i) for i in result["ids"]}
    states = {i: job(working, i)["state"] for i in ids}
    # Cancelled only by qctl, and those never started were never run; a job asked while
    # running finished as River decides (completed: its worker returned no error).
    assert {i for i in ids if states[i] == "cancelled"} <= cancelled
    assert all(started.get(i, 0) == 1 for i in ids if states[i] == "completed")
    assert result["done"] + sum(result["skipped"].values()) == result["selected"]
    assert cancelled and len(cancelled) < len(ids), "the cancel and the producer interleave"


def test_counts_equal_river_job_list(river: Harness, qctl: Run) -> None:
    river.call("insert", queue="counted", n=3)
    river.call("insert", queue="counted", n=2, seconds=3600)  # scheduled
    [gone] = river.call("insert", queue="counted")["ids"]
    river.call("cancel", id=gone)
    listed = river.call("job_list")
    ours = data(qctl("jobs", "list", "--limit", "1000", "-o", "json"))
    assert sorted(j["id"] for j in ours) == sorted(listed["ids"])
    assert Counter(j["state"] for j in ours) == Counter(listed["counts"])
    for queue in data(qctl("queues", "list", "-o", "json")):
        river_counts = river.call("job_list", queue=queue["queue"])["counts"]
        ours_counts = {s: queue[s] for s in river_counts}
        assert ours_counts == river_counts, queue["queue"]
        assert sum(queue[s] for s in ("available", "running", "scheduled", "retryable",
                                      "pending", "completed", "cancelled", "discarded")) == sum(
            river_counts.values()
        )  # fmt: skip
    counted = river.call("job_list", queue="counted", states=["scheduled"])
    shown = data(qctl("jobs", "list", "--queue", "counted", "--state", "scheduled", "-o", "json"))
    assert sorted(j["id"] for j in shown) == sorted(counted["ids"])


def test_a_retry_never_breaks_a_unique_key(river: Harness, qctl: Run) -> None:
    """River's JobRetry fails with a unique violation where another job holds the key;
    qctl leaves that job as it is and says why."""
    [first] = river.call("insert", queue="unique", unique=True, note="u")["ids"]
    river.call("cancel", id=first)
    [second] = river.call("insert", queue="unique", unique=True, note="u")["ids"]
    assert second != first
    result = qctl("jobs", "retry", str(first), "--yes", "-o", "json")
    assert result.exit_code == 3, result.output
    assert "unique key held by another job" in result.stderr
    assert job(river, first)["state"] == "cancelled"


def test_a_filter_pages_its_jobs_in_id_order(
    river: Harness, qctl: Run, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids of ten and eleven digits in pages of two: the keyset follows the ids, not their
    text (as text 9999999999 sorts before 10000000000 descending), so none is passed over."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(pg_schema)))
        conn.execute("SELECT setval(pg_get_serial_sequence('river_job', 'id'), 9999999998, false)")
    ids = river.call("insert", queue="paged", n=4)["ids"]
    monkeypatch.setattr(verbs, "BATCH", 2)
    plan = data(qctl("jobs", "cancel", "--queue", "paged", "--dry-run", "-o", "json"))
    assert plan["ids"] == [str(i) for i in sorted(ids, reverse=True)]
    assert min(ids) < 10**10 <= max(ids)
