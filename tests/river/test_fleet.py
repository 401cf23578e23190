"""qctl's fleet reads of a River database beside a running River client: ``metrics``
(OpenMetrics), ``queues throughput`` (finalized_at buckets), ``clients list`` and
``clients leader`` (River's elected leader, the client ids River writes in
attempted_by), each equal to what River's own client did and reports."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from qctl.systems.river.database import Database
from qctl.systems.river.tui import RIVER
from qctl.tui.app import QctlTop
from tests.conftest import PG_DSN
from tests.dbos.test_top import cells
from tests.go.harness import Harness
from tests.river.conftest import Run, data, job, until
from tests.tui.helpers import until as until_ui

pytestmark = pytest.mark.timeout(180)

MEASURES = ("completed", "cancelled", "discarded")


@pytest.fixture(scope="module")
def fleet(river: Harness) -> Iterator[dict[str, Any]]:
    """River's working client on fl-a and fl-b: three jobs completed, one discarded, one
    running (blocked until cancelled); one job cancelled in fl-idle, one waiting there."""
    river.call("start", queues=["fl-a", "fl-b"])
    done = river.call("insert", queue="fl-a", n=3)["ids"]
    [failed] = river.call("insert", queue="fl-b", mode="fail", max_attempts=1)["ids"]
    [blocked] = river.call("insert", queue="fl-b", mode="block")["ids"]
    until(lambda: all(job(river, i)["state"] == "completed" for i in done))
    until(lambda: job(river, failed)["state"] == "discarded")
    river.call("wait_started", id=blocked, seconds=10)
    [cancelled, waiting] = river.call("insert", queue="fl-idle", n=2)["ids"]
    river.call("cancel", id=cancelled)
    yield {"blocked": blocked, "waiting": waiting}
    river.call("stop")


def _samples(result: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    assert result.exit_code == 0, result.output
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(result.stdout)
        for s in f.samples
    }


def test_clients_and_the_leader(fleet: dict[str, Any], qctl: Run) -> None:
    until(lambda: data(qctl("clients", "leader", "-o", "json")) != [], 30)
    [leader] = data(qctl("clients", "leader", "-o", "json"))
    assert leader["name"] == "default" and leader["expired"] is False
    assert leader["elected_at"] < leader["expires_at"]
    clients = data(qctl("clients", "list", "-o", "json"))
    # The working client runs the blocked job and, the only started client, leads.
    running = [c for c in clients if c["running"]]
    assert [(c["queue"], c["running"]) for c in running] == [("fl-b", 1)]
    assert running[0]["client"] == leader["leader_id"] and running[0]["leader"] is True
    assert running[0]["expires_at"] == leader["expires_at"]
    assert table_ok(qctl("clients", "list"))


def table_ok(result: Any) -> bool:
    return bool(result.exit_code == 0 and result.stdout.split()[0] == "CLIENT")


def test_metrics_equal_queues_list_and_river(fleet: dict[str, Any], qctl: Run) -> None:
    until(lambda: data(qctl("clients", "leader", "-o", "json")) != [], 30)
    found = _samples(qctl("metrics"))
    queues = {q["queue"]: q for q in data(qctl("queues", "list", "-o", "json"))}
    for name, q in queues.items():
        for state in ("available", "running", "scheduled", "retryable", "pending"):
            labels = frozenset({"queue": name, "state": state}.items())
            assert found[("qctl_river_jobs", labels)] == q[state], (name, state)
        paused = ("qctl_river_queue_paused", frozenset({"queue": name}.items()))
        assert found[paused] == 0
    by_queue = {
        (name, *sorted(dict(labels).items())): n
        for (name, labels), n in found.items()
        if name.endswith(("_last_minute", "_failed_jobs"))
    }
    assert by_queue[("qctl_river_completed_last_minute", ("queue", "fl-a"))] == 3
    assert by_queue[("qctl_river_discarded_last_minute", ("queue", "fl-b"))] == 1
    failed = ("qctl_river_failed_jobs", ("bounded", "false"), ("queue", "fl-b"))
    assert by_queue[failed] == queues["fl-b"]["discarded"] == 1
    [leader] = data(qctl("clients", "leader", "-o", "json"))
    labels = frozenset({"leader_id": leader["leader_id"]}.items())
    lease = found[("qctl_river_leader_lease_seconds", labels)]
    assert lease > 0


def test_throughput_counts_what_river_finalized(fleet: dict[str, Any], qctl: Run) -> None:
    rows = data(qctl("queues", "throughput", "--by", "hour", "--per-queue", "-o", "json"))
    assert all(set(r) == {"start", "queue", *MEASURES} for r in rows), rows
    sums: dict[str, Counter[str]] = {}
    for r in rows:
        sums.setdefault(r["queue"], Counter()).update({m: r[m] for m in MEASURES})
    assert sums == {
        "fl-a": Counter(completed=3),
        "fl-b": Counter(discarded=1),
        "fl-idle": Counter(cancelled=1),
    }
    starts = [r["start"] for r in rows]
    assert starts == sorted(starts) and all(s.endswith(":00:00Z") for s in starts)
    total = data(qctl("queues", "throughput", "--last", "2h", "-o", "json"))
    assert all("queue" not in r for r in total)
    assert sum((Counter({m: r[m] for m in MEASURES}) for r in total), Counter()) == Counter(
        completed=3, discarded=1, cancelled=1
    )
    nothing = qctl("queues", "throughput", "--queue", "nosuch", "-o", "json")
    assert data(nothing) == [] and "no jobs were completed" in nothing.stderr
    bad = qctl("queues", "throughput", "--by", "fortnight")
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_clients_tab_shows_the_running_client_and_the_leader(
    fleet: dict[str, Any], qctl: Run, pg_schema: str
) -> None:
    until(lambda: data(qctl("clients", "leader", "-o", "json")) != [], 30)
    [leader] = data(qctl("clients", "leader", "-o", "json"))
    db = Database(PG_DSN, pg_schema)

    async def main() -> None:
        app = QctlTop(db, system=RIVER, location="test", poll_interval=0.5)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("3")
            await until_ui(pilot, lambda: bool(cells(app, "river-clients")), 10)
            [row] = [r for r in cells(app, "river-clients").values() if r[1] == "fl-b"]
            assert (row[0], row[2]) == (leader["leader_id"], "1")
            assert row[4] and row[5]  # elected, lease

    try:
        asyncio.run(main())
    finally:
        db.close()
