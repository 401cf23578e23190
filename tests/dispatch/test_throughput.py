"""``qctl queues throughput`` on a dispatch database whose jobs dispatch's own Go code
enqueued, ran, failed into the DLQ (and qctl cancelled): the counts per bucket, the
queue filter, the partial note, and the TypeID bound the read relies on."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from qctl.systems.dispatch.reads import typeid_floor
from tests.dispatch.conftest import Run, data, row
from tests.go.harness import Harness

MEASURES = ("enqueued", "completed", "failed", "cancelled")


@pytest.fixture(scope="module")
def fleet(dispatch: Harness) -> dict[str, list[str]]:
    """tp-a: five jobs, one completed, two failed into the DLQ, one cancelled, one
    pending; tp-b: two pending."""
    a = [
        dispatch.call("enqueue", name="tp.job", queue="tp-a", payload={"n": n}, max_retries=0)["id"]
        for n in range(5)
    ]
    b = [dispatch.call("enqueue", name="tp.job", queue="tp-b")["id"] for _ in range(2)]
    claimed = [j["id"] for j in dispatch.call("dequeue", queues=["tp-a"], limit=3)["jobs"]]
    assert claimed == a[:3]
    assert dispatch.call("run", id=a[0])["job"]["state"] == "completed"
    for job_id in a[1:3]:
        assert dispatch.call("run", id=job_id, error="boom")["job"]["state"] == "failed"
    return {"a": a, "b": b}


def _sums(rows: list[dict[str, Any]], key: str = "queue") -> dict[Any, Counter[str]]:
    sums: dict[Any, Counter[str]] = {}
    for r in rows:
        sums.setdefault(r.get(key), Counter()).update({m: r[m] for m in MEASURES})
    return sums


def test_counts_per_queue(fleet: dict[str, list[str]], pg_schema: str, qctl: Run) -> None:
    cancel = qctl("jobs", "cancel", fleet["a"][3], "--yes")
    assert cancel.exit_code == 0, cancel.output
    result = qctl("queues", "throughput", "--by", "hour", "--per-queue", "-o", "json")
    rows = data(result)
    assert all(set(r) == {"start", "queue", *MEASURES} for r in rows), rows
    assert _sums(rows) == {
        "tp-a": Counter(enqueued=5, completed=1, failed=2, cancelled=1),
        "tp-b": Counter(enqueued=2),
    }
    assert "partial: completed and cancelled count jobs enqueued since" in result.stderr
    # Every start is a whole hour, and the rows are oldest first.
    starts = [r["start"] for r in rows]
    assert starts == sorted(starts) and all(s.endswith(":00:00Z") for s in starts)

    total = data(qctl("queues", "throughput", "--last", "2h", "-o", "json"))
    assert all("queue" not in r for r in total)
    assert sum((Counter({m: r[m] for m in MEASURES}) for r in total), Counter()) == Counter(
        enqueued=7, completed=1, failed=2, cancelled=1
    )
    only_b = data(qctl("queues", "throughput", "--queue", "tp-b", "--per-queue", "-o", "json"))
    assert set(_sums(only_b)) == {"tp-b"}


def test_a_window_after_everything_is_empty(fleet: dict[str, list[str]], qctl: Run) -> None:
    result = qctl("queues", "throughput", "--queue", "nosuch", "-o", "json")
    assert data(result) == []
    assert "no jobs were enqueued" in result.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--by", "day"], "--by: 'day' is not minute or hour"),
        (["--last", "0s"], "--last: must be more than 0"),
        (["--last", "1000d", "--by", "minute"], "buckets (at most 10000)"),
    ],
)
def test_bad_windows_exit_2(args: list[str], error: str, qctl: Run) -> None:
    result = qctl("queues", "throughput", *args)
    assert result.exit_code == 2 and error in result.output, result.output


def test_a_job_id_is_the_typeid_of_its_creation(
    fleet: dict[str, list[str]], pg_schema: str
) -> None:
    """What the read's primary key range stands on: dispatch's ids (go.jetify.com/typeid
    over UUIDv7) begin with the millisecond they were made, which the producer also
    writes as created_at."""
    for job_id in fleet["a"] + fleet["b"]:
        created = row(pg_schema, "dispatch_jobs", job_id)["created_at"]
        ms = timedelta(milliseconds=1)
        assert typeid_floor("job", created - ms) <= job_id < typeid_floor("job", created + ms)
