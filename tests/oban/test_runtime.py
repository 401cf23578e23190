"""qctl beside a real oban-py 0.7.0 application (the partner, ``tests/oban/partner``):
oban-py installed the schema, inserts, and its producers fetch and work while qctl
cancels, retries, deletes, pauses, resumes and scales. A cancel of an executing job reaches
its worker through Oban's signal and qctl never writes an executing row; a paused queue's
producer fetches nothing until resumed; a scaled queue runs at its new limit; a retried job
is worked again; no job is lost or run twice; qctl's counts are oban-py's own. Each test
runs on oban-py's own schema and on Elixir Oban's that oban-py's install joined."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from qctl.core import verbs
from qctl.systems.oban.database import Database
from tests.conftest import PG_DSN
from tests.oban.conftest import Run, data
from tests.oban.harness import Partner, executing_writes, until, watch_executing_writes
from tests.oban.schemas import install_elixir

pytestmark = pytest.mark.timeout(300)
QUEUES = {"held": 1, "paused": 1, "scaled": 1, "failing": 1, "draining": 2, "counted": 1}


@pytest.fixture(scope="module", params=["oban-py", "elixir-v14"])
def partner(pg_schema: str, request: pytest.FixtureRequest) -> Iterator[Partner]:
    """oban-py on this module's schema, made afresh: oban-py's own install, on its own or
    over Elixir Oban's migrations to v14 (the schema an Elixir application shares with
    oban-py: ``errors`` a ``jsonb[]`` that oban-py's acks append to, ``oban_peers``); then
    a node working ``QUEUES``. Every write to an executing row by anyone but oban-py is
    recorded."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{pg_schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
    if request.param == "elixir-v14":
        install_elixir(PG_DSN, pg_schema, 14)
    p = Partner(PG_DSN, pg_schema)
    p.call("install")
    watch_executing_writes(PG_DSN, pg_schema)
    p.call("start", queues=QUEUES)
    yield p
    p.close()


def queue_row(qctl: Run, name: str) -> dict[str, Any]:
    [row] = [q for q in data(qctl("queues", "list", "-o", "json")) if q["queue"] == name]
    return row


def test_the_nodes_are_oban_py_s_producers_and_leader(partner: Partner, qctl: Run) -> None:
    until(lambda: any(n["leader"] for n in data(qctl("nodes", "list", "-o", "json"))))
    nodes = data(qctl("nodes", "list", "-o", "json"))
    checks = [partner.call("check", queue=q) for q in QUEUES]
    assert {(n["uuid"], n["queue"], n["local_limit"]) for n in nodes} == {
        (c["uuid"], c["queue"], c["limit"]) for c in checks
    }
    assert {n["node"] for n in nodes} == {"partner.1"} and all(n["leader"] for n in nodes)


def test_a_cancel_reaches_an_executing_job_through_oban_s_signal(
    partner: Partner, qctl: Run, pg_schema: str
) -> None:
    [id_] = partner.call("insert", worker="hold", queue="held")["ids"]
    until(lambda: id_ in partner.runs()["running"].get("held", []))
    assert partner.job(id_)["state"] == "executing"
    result = data(qctl("jobs", "cancel", str(id_), "--yes", "-o", "json"))
    assert result["done"] == 1
    # Only the pkill signal ends the worker: it answers Cancel, and oban-py acks it.
    until(lambda: partner.job(id_)["state"] == "cancelled")
    assert id_ in partner.runs()["cancelled"] and partner.runs()["started"][id_] == 1
    assert executing_writes(PG_DSN, pg_schema) == []


def test_a_paused_queue_fetches_nothing_until_resumed(partner: Partner, qctl: Run) -> None:
    assert data(qctl("queues", "pause", "paused", "--yes", "-o", "json"))["done"] == 1
    until(lambda: partner.call("check", queue="paused")["paused"])
    # The producer records its pause in its own row, which qctl reads back.
    until(lambda: queue_row(qctl, "paused")["paused"] is True)
    ids = partner.call("insert", worker="work", queue="paused", n=5)["ids"]
    woken = partner.runs()["woken"].get("paused", 0)
    # Three runs of oban-py's stager found the queue's jobs available and woke its producer.
    until(lambda: partner.runs()["woken"].get("paused", 0) >= woken + 3)
    assert partner.counts("paused") == {"available": 5}
    assert not set(ids) & set(partner.runs()["started"])
    assert data(qctl("queues", "resume", "paused", "--yes", "-o", "json"))["done"] == 1
    until(lambda: partner.counts("paused") == {"completed": 5})
    assert [partner.runs()["started"][i] for i in ids] == [1] * 5
    assert queue_row(qctl, "paused")["paused"] is False


def test_a_scaled_queue_runs_at_its_new_limit(partner: Partner, qctl: Run) -> None:
    result = data(qctl("queues", "scale", "scaled", "--limit", "3", "--yes", "-o", "json"))
    assert result["done"] == 1
    until(lambda: partner.call("check", queue="scaled")["limit"] == 3)
    until(lambda: queue_row(qctl, "scaled")["limits"] == [3])
    partner.call("insert", worker="hold", queue="scaled", n=6)
    until(lambda: len(partner.runs()["running"].get("scaled", [])) == 3)
    partner.call("release", queue="scaled")
    until(lambda: partner.counts("scaled") == {"completed": 6})
    assert partner.runs()["peak"]["scaled"] == 3


def test_a_retried_job_is_worked_again(partner: Partner, qctl: Run) -> None:
    [id_] = partner.call("insert", worker="fail", queue="failing", max_attempts=1)["ids"]
    until(lambda: partner.job(id_)["state"] == "discarded")
    assert data(qctl("jobs", "retry", str(id_), "--yes", "-o", "json"))["done"] == 1
    # oban-py's retry_many_jobs: max_attempts raised past the spent attempt, run once more.
    until(lambda: partner.job(id_)["attempt"] == 2 and partner.job(id_)["state"] == "discarded")
    row = partner.job(id_)
    assert (row["max_attempts"], len(row["errors"])) == (2, 2)
    assert partner.runs()["started"][id_] == 2
    history = data(qctl("jobs", "show", str(id_), "-o", "json"))["errors"]
    assert [e["attempt"] for e in history] == [1, 2]


def test_a_bulk_cancel_of_a_queue_oban_drains_loses_no_job(
    partner: Partner, qctl: Run, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel by filter while oban-py's producer fetches from the same queue, in small
    batches so the two interleave: every job ends completed (run once) or cancelled (never
    run, or signalled while running), none lost, and no executing row written by qctl."""
    monkeypatch.setattr(verbs, "BATCH", 5)
    ids = partner.call("insert", worker="work", queue="draining", n=200)["ids"]
    result = data(qctl("jobs", "cancel", "--queue", "draining", "--yes", "-o", "json"))
    until(lambda: set(partner.counts("draining")) <= {"completed", "cancelled"})
    assert sum(partner.counts("draining").values()) == len(ids)  # none lost
    started = partner.runs()["started"]
    assert all(started.get(i, 0) <= 1 for i in ids)  # none run twice
    states = {i: partner.job(i)["state"] for i in ids}
    cancelled = {int(i) for i in result["ids"]}
    assert {i for i in ids if states[i] == "cancelled"} <= cancelled
    assert all(started.get(i, 0) == 1 for i in ids if states[i] == "completed")
    assert result["done"] + sum(result["skipped"].values()) == result["selected"]
    assert executing_writes(PG_DSN, pg_schema) == []


def test_a_delete_passes_over_an_executing_job(partner: Partner, qctl: Run) -> None:
    [id_] = partner.call("insert", worker="hold", queue="held")["ids"]
    until(lambda: id_ in partner.runs()["running"].get("held", []))
    result = qctl("jobs", "delete", str(id_), "--yes", "-o", "json")
    assert result.exit_code == 3, result.output  # nothing actionable
    assert partner.job(id_)["state"] == "executing"
    partner.call("cancel", ids=[id_])  # oban-py's own cancel ends it
    until(lambda: partner.job(id_)["state"] == "cancelled")


def test_counts_equal_oban_py_s_own(partner: Partner, qctl: Run) -> None:
    partner.call("insert", worker="work", queue="counted", n=3)
    partner.call("insert", worker="work", queue="counted", n=2, scheduled_in=3600)
    [gone] = partner.call("insert", worker="work", queue="counted", scheduled_in=3600)["ids"]
    partner.call("cancel", ids=[gone])
    until(lambda: partner.counts("counted").get("completed") == 3)
    ours = data(qctl("jobs", "list", "--limit", "10000", "-o", "json"))
    assert Counter(j["state"] for j in ours) == Counter(partner.counts())
    for queue in data(qctl("queues", "list", "-o", "json")):
        theirs = partner.counts(queue["queue"])
        assert {s: queue[s] for s in theirs} == theirs, queue["queue"]
    shown = data(qctl("jobs", "list", "--queue", "counted", "--state", "scheduled", "-o", "json"))
    assert len(shown) == partner.counts("counted")["scheduled"] == 2


def test_the_change_feed_hears_oban_py_s_own_notifications(
    partner: Partner, pg_schema: str
) -> None:
    """oban-py's insert notice (plain JSON naming the queue) and its signals (base64 of
    gzip, as its notifier sends them) each reach qctl's feed."""
    db = Database(PG_DSN, pg_schema)
    feed = db.changes()
    assert feed is not None

    def hears(kind: str, *queues: str) -> None:
        deadline = time.monotonic() + 10
        while (hint := feed.get(timeout=max(deadline - time.monotonic(), 0))) is not None:
            if hint.kind == kind and hint.queue in queues:
                return
        pytest.fail(f"no {kind} hint for {queues} from oban-py")

    try:
        hears("reset", "")
        partner.call("insert", worker="work", queue="fed")
        hears("jobs", "fed")
        partner.call("pause", queue="fed")  # no producer runs it: the signal alone
        hears("queues", "fed", "")  # a compressed signal names no queue readable here
    finally:
        feed.close()
        db.close()
