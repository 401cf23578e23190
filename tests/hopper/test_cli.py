"""Detection, ``db status`` and the reads of a hopper database: ``jobs list|show`` over
live jobs and history together, ``queues list``, ``clients list``, ``stats``, the
periodic, subscription and workflow listings."""

from __future__ import annotations

import time
import uuid

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from qctl import systems
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.conftest import Run, data
from tests.hopper.worker import Worker


def test_detected_by_its_tables_in_the_schema(hopper: Worker, pg_schema: str) -> None:
    assert systems.detect(PG_DSN, pg_schema).name == "hopper"
    # hopper's default schema is "hopper" (Config.Schema): nothing there, so not hopper
    assert systems.detect(PG_DSN, "").name != "hopper"


def test_db_status_says_what_qctl_supports(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    report = data(qctl("db", "status", "-o", "json"))
    assert report["system"] == "hopper" and report["schema"] == pg_schema
    assert report["schema_version"] == 8 and report["applied_versions"] == list(range(1, 9))
    assert report["writable"] is True and report["unknown_versions"] == []
    assert "version 8" in report["supported"]
    refused = qctl("db", "migrate")
    assert refused.exit_code == 2 and "never migrates a hopper database" in refused.output


@pytest.fixture(scope="module")
def fleet(hopper: Worker) -> dict[str, uuid.UUID]:
    client = hopper.register("list-host")
    hopper.lead(client)
    done = hopper.insert("mail.send", {"to": "a"}, queue="list-q")
    assert hopper.claim("list-q", client) == [done]
    assert hopper.finalize(done, client, "completed", output={"sent": True})
    # hopper's ids are UUIDv7 to the millisecond (hopper_uuidv7): two inserts in one
    # millisecond have no order, so each of these comes a few milliseconds later.
    time.sleep(0.005)
    dead = hopper.dead("mail.dead", "list-dead", client, error="smtp [bold]421")
    time.sleep(0.005)
    waiting = hopper.insert("mail.send", {"to": "b"}, queue="list-q", priority=1)
    time.sleep(0.005)
    running = hopper.insert("report.build", queue="list-run")
    assert hopper.claim("list-run", client) == [running]
    return {"done": done, "dead": dead, "waiting": waiting, "running": running, "client": client}  # type: ignore[dict-item]


def test_jobs_list_reads_live_and_history_newest_first(
    fleet: dict[str, uuid.UUID], qctl: Run
) -> None:
    jobs = data(qctl("jobs", "list", "-o", "json"))
    ids = [j["id"] for j in jobs]
    mine = [str(fleet[k]) for k in ("running", "waiting", "dead", "done")]
    assert [i for i in ids if i in mine] == mine  # newest first, both tables
    by_id = {j["id"]: j for j in jobs}
    assert by_id[str(fleet["done"])]["state"] == "completed"
    assert by_id[str(fleet["done"])]["output"] == {"sent": True}
    assert by_id[str(fleet["dead"])]["last_error"] == "smtp [bold]421"
    assert by_id[str(fleet["running"])]["attempted_by"] == fleet["client"]
    # filters: state (one table or both), kind, queue
    only = data(qctl("jobs", "list", "--state", "discarded", "-o", "json"))
    assert [j["id"] for j in only] == [str(fleet["dead"])]
    mixed = data(qctl("jobs", "list", "--state", "available", "--state", "completed", "-o", "json"))
    assert {j["id"] for j in mixed} == {str(fleet["waiting"]), str(fleet["done"])}
    kind = data(qctl("jobs", "list", "--kind", "mail.send", "--queue", "list-q", "-o", "json"))
    assert [j["id"] for j in kind] == [str(fleet["waiting"]), str(fleet["done"])]
    bad = qctl("jobs", "list", "--state", "succeeded")
    assert bad.exit_code == 2 and "not a hopper job state" in bad.output


def test_jobs_list_pages_by_keyset(fleet: dict[str, uuid.UUID], qctl: Run) -> None:
    first = qctl("jobs", "list", "--limit", "2", "-o", "json")
    page = data(first)
    assert len(page) == 2
    cursor = first.stderr.split("--after ")[1].strip()
    assert cursor == page[-1]["id"]
    rest = data(qctl("jobs", "list", "--after", cursor, "-o", "json"))
    everything = data(qctl("jobs", "list", "-o", "json"))
    assert [j["id"] for j in page + rest] == [j["id"] for j in everything]
    assert qctl("jobs", "list", "--after", "nope").exit_code == 2


def test_jobs_show_by_prefix_with_errors(fleet: dict[str, uuid.UUID], qctl: Run) -> None:
    dead = str(fleet["dead"])
    job = data(qctl("jobs", "show", dead[:13], "-o", "json"))
    assert job["id"] == dead and job["state"] == "discarded" and job["finalized_at"]
    [error] = job["errors"]
    assert error["error"] == "smtp [bold]421" and error["attempt"] == 1 and error["at"]
    table = qctl("jobs", "show", dead)
    assert table.exit_code == 0 and "smtp [bold]421" in table.stdout
    missing = qctl("jobs", "show", "0" * 32)
    assert missing.exit_code == 3 and "no job " in missing.output
    assert qctl("jobs", "show", "not-hex").exit_code == 2


def test_an_ambiguous_prefix_lists_whole_ids_to_copy(hopper: Worker, qctl: Run) -> None:
    """hopper's ids are UUIDv7s: jobs made in the same minute share their first 8 hex
    characters. The error lists the ids whole, and each is what ``jobs show`` takes."""
    made = sorted(str(hopper.insert("amb.job", queue="amb-q")) for _ in range(7))
    prefix = made[0][:8]
    together = [m for m in made if m.startswith(prefix)]
    if len(together) < 7:  # a minute's edge fell between them
        pytest.skip("the jobs straddle a change of their ids' first 8 characters")
    result = qctl("jobs", "show", prefix)
    assert result.exit_code == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"qctl: error: job id prefix '{prefix}' is ambiguous: ")
    assert line.endswith(", ...")
    listed = line.split(" is ambiguous: ")[1].removesuffix(", ...").split(", ")
    assert len(set(listed)) == 5 and all(i.startswith(prefix) for i in listed)
    assert listed == sorted(listed)  # the module's other jobs may share the prefix too
    assert data(qctl("jobs", "show", listed[2], "-o", "json"))["id"] == listed[2]


def test_queues_clients_stats(fleet: dict[str, uuid.UUID], qctl: Run, pg_schema: str) -> None:
    queues = {q["queue"]: q for q in data(qctl("queues", "list", "-o", "json"))}
    assert queues["list-q"]["available"] == 1 and queues["list-q"]["completed_last_minute"] == 1
    assert queues["list-run"]["running"] == 1 and queues["list-q"]["paused"] is None
    clients = data(qctl("clients", "list", "-o", "json"))
    [me] = [c for c in clients if c["id"] == fleet["client"]]
    assert me["live"] is True and me["leader"] is True and me["running"] == 1
    stats = data(qctl("stats", "-o", "json"))
    assert stats["leader"] == fleet["client"] and stats["live_clients"] >= 1
    assert {q["queue"] for q in stats["queues"]} >= {"list-q", "list-run"}


def test_periodic_subscriptions_workflows(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    with raw_pg(pg_schema) as c:
        c.execute("INSERT INTO hopper_periodic VALUES ('nightly', now())")
        c.execute("INSERT INTO hopper_subscriptions (name, pattern, kind, queue) VALUES"
                  " ('audit', 'orders.#', 'audit.log', 'audit')")  # fmt: skip
    assert [p["name"] for p in data(qctl("periodic", "list", "-o", "json"))] == ["nightly"]
    [sub] = data(qctl("subscriptions", "list", "-o", "json"))
    assert sub["pattern"] == "orders.#"
    batch, ids = hopper.workflow("wf-read", ["a", "b"], [(1, 0)])
    listed = data(qctl("workflows", "list", "-o", "json"))
    assert listed[0]["id"] == str(batch) and listed[0]["total"] == 2
    shown = data(qctl("workflows", "show", str(batch)[:12], "-o", "json"))
    assert [j["id"] for j in shown["jobs"]] == [str(i) for i in ids]
    assert shown["jobs"][1]["depends_on"] == str(ids[0]) and shown["jobs"][1]["state"] == "pending"
    deps = data(qctl("jobs", "show", str(ids[1]), "-o", "json"))["deps"]
    assert deps == [{"job_id": str(ids[1]), "depends_on": str(ids[0]), "on_failure": "cancel"}]


def test_a_noun_hopper_lacks_says_what_to_use(hopper: Worker, qctl: Run) -> None:
    lacking = qctl("dlq", "list")
    assert lacking.exit_code == 2
    assert "hopper databases have no dlq" in lacking.output
    assert "--state discarded" in lacking.output


def test_metrics_equal_queues_list(fleet: dict[str, uuid.UUID], qctl: Run, pg_schema: str) -> None:
    with raw_pg(pg_schema) as c:  # a queue paused by hopper's QueuePause
        c.execute("INSERT INTO hopper_queues (name, paused_at) VALUES ('list-paused', now())")
    try:
        result = qctl("metrics")
        queues = data(qctl("queues", "list", "-o", "json"))
    finally:
        with raw_pg(pg_schema) as c:
            c.execute("DELETE FROM hopper_queues WHERE name = 'list-paused'")
    assert result.exit_code == 0, result.output
    found = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(result.stdout)
        for s in f.samples
    }
    assert any(q["queue"] == "list-q" for q in queues)
    assert found[("qctl_hopper_queue_paused", frozenset({"queue": "list-paused"}.items()))] == 1
    for q in queues:
        for state in ("pending", "available", "scheduled", "retryable", "running"):
            labels = frozenset({"queue": q["queue"], "state": state}.items())
            assert found[("qctl_hopper_jobs", labels)] == q[state]
        done = ("qctl_hopper_completed_last_minute", frozenset({"queue": q["queue"]}.items()))
        assert found[done] == q["completed_last_minute"]
        paused = ("qctl_hopper_queue_paused", frozenset({"queue": q["queue"]}.items()))
        assert found[paused] == (1 if q["paused"] else 0)
    # the discarded jobs, per queue: one in list-dead, counted whole (bounded=false)
    failed = {
        dict(labels)["queue"]: (dict(labels)["bounded"], n)
        for (name, labels), n in found.items()
        if name == "qctl_hopper_failed_jobs"
    }
    assert failed == {"list-dead": ("false", 1)}


def test_failure_count_reads_a_bounded_part_of_history(
    fleet: dict[str, uuid.UUID], pg_schema: str
) -> None:
    from qctl.systems.hopper import reads
    from qctl.systems.hopper.database import Database

    db = Database(PG_DSN, pg_schema)
    try:
        assert reads.discarded(db) == ({"list-dead": 1}, False)
        counts, bounded = reads.discarded(db, cap=1)  # one row read of history's failed part
        assert bounded and sum(counts.values()) <= 1
    finally:
        db.close()
