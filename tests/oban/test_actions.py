"""Oban's verbs with Oban's own effects, in both flavours: a cancel reaches an executing
job through the pkill signal (on oban-py its row is left to its node); retry raises
spent attempts and clears what upstream's retry clears; an executing job is never
retried or deleted; queue signals reach the producers of every node or of one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from qctl.core import verbs
from tests.oban import ddl
from tests.oban.conftest import Run, data
from tests.oban.standin import Producers


@pytest.fixture
def producers(oban: psycopg.Connection[Any], pg_schema: str) -> Iterator[Producers]:
    p = Producers(pg_schema)
    yield p
    p.close()


def row(conn: psycopg.Connection[Any], id_: int) -> dict[str, Any]:
    cur = conn.execute("SELECT *, state::text AS state FROM oban_jobs WHERE id = %s", (id_,))
    names = [c.name for c in cur.description or []]
    return dict(zip(names, cur.fetchone() or (), strict=False))


def test_cancel_signals_an_executing_job(
    oban: psycopg.Connection[Any], qctl: Run, producers: Producers, flavour: str
) -> None:
    running, waiting = ddl.insert(oban, "cancelled", 2)
    assert ddl.fetch(oban, "cancelled") == [running]
    result = data(qctl("jobs", "cancel", str(running), str(waiting), "--yes", "-o", "json"))
    assert result["done"] == 2 and result["skipped"] == {}
    producers.sync()
    assert producers.pkills == [running]  # only the executing one is signalled
    assert row(oban, waiting)["state"] == "cancelled" and row(oban, waiting)["cancelled_at"]
    if flavour == "oban-py":  # its node acks the cancel; qctl never writes the row
        assert row(oban, running)["state"] == "executing"
        assert row(oban, running)["cancelled_at"] is None
        assert "cancel_attempted_at" in row(oban, waiting)["meta"]
    else:  # Elixir's engine cancels the row in the statement that signals it
        assert row(oban, running)["state"] == "cancelled"


def test_retry_as_oban_retries(oban: psycopg.Connection[Any], qctl: Run, flavour: str) -> None:
    [spent] = ddl.insert(oban, "retried", max_attempts=1)
    ddl.fetch(oban, "retried")
    ddl.fail(oban, spent, "boom", discard=True)
    [executing] = ddl.insert(oban, "retried")
    ddl.fetch(oban, "retried")
    plan = data(qctl("jobs", "retry", str(spent), str(executing), "--dry-run", "-o", "json"))
    assert plan["skipped"] == {"executing (Oban never retries an executing job)": 1}
    result = data(qctl("jobs", "retry", "--queue", "retried", "--yes", "-o", "json"))
    assert result["ids"] == [str(spent)]
    after = row(oban, spent)
    assert (after["state"], after["attempt"], after["max_attempts"]) == ("available", 1, 2)
    assert after["discarded_at"] is None and after["scheduled_at"] >= after["attempted_at"]
    assert len(after["errors"]) == 1  # the attempt history is kept
    assert ("uniq_bmp" in after["meta"]) == (flavour == "oban-py")
    assert row(oban, executing)["state"] == "executing"


def test_delete_never_takes_an_executing_job(oban: psycopg.Connection[Any], qctl: Run) -> None:
    [executing] = ddl.insert(oban, "deleted")
    ddl.fetch(oban, "deleted")
    refused = qctl("jobs", "delete", str(executing), "--yes")
    assert refused.exit_code == 3 and "executing" in refused.stderr
    assert row(oban, executing)["state"] == "executing"


def test_queue_signals_reach_one_node_or_all(
    oban: psycopg.Connection[Any], qctl: Run, producers: Producers, flavour: str
) -> None:
    if flavour != "oban-py":
        pytest.skip("Elixir's nodes keep a queue's state in memory: no producer rows")
    producers.start("mailers", node="web.1")
    producers.start("mailers", node="web.2")
    data(qctl("queues", "pause", "mailers", "--node", "web.2", "--yes", "-o", "json"))
    producers.sync()
    nodes = {n["node"]: n for n in data(qctl("nodes", "list", "-o", "json"))}
    assert (nodes["web.1"]["paused"], nodes["web.2"]["paused"]) == (False, True)
    again = data(qctl("queues", "pause", "mailers", "--dry-run", "-o", "json"))
    assert again["states"] == {"mixed": 1}
    data(qctl("queues", "scale", "mailers", "--limit", "3", "--yes", "-o", "json"))
    data(qctl("queues", "resume", "mailers", "--yes", "-o", "json"))
    producers.sync()
    [queue] = [q for q in data(qctl("queues", "list", "-o", "json")) if q["queue"] == "mailers"]
    assert queue["paused"] is False and queue["limits"] == [3, 3]
    bad = qctl("queues", "scale", "mailers", "--yes")
    assert bad.exit_code == 2 and "Missing option '--limit'" in bad.stderr


def test_a_filter_pages_its_jobs_in_id_order(
    oban: psycopg.Connection[Any], qctl: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids of ten and eleven digits in pages of two: the keyset follows the ids, not their
    text (as text 9999999999 sorts before 10000000000 descending), so none is passed over."""
    oban.execute("SELECT setval(pg_get_serial_sequence('oban_jobs', 'id'), 9999999998, false)")
    ids = ddl.insert(oban, "paged", 4)
    monkeypatch.setattr(verbs, "BATCH", 2)
    plan = data(qctl("jobs", "cancel", "--queue", "paged", "--dry-run", "-o", "json"))
    assert plan["ids"] == [str(i) for i in sorted(ids, reverse=True)]
    assert min(ids) < 10**10 <= max(ids)
