"""qctl reads a dispatch v0.1.0 database whose rows dispatch itself wrote: detection,
``db status``, job listings with filters and keyset pages, show, queues, DLQ, cron and
workers."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from qctl.systems import detect
from tests.conftest import PG_DSN
from tests.dispatch.conftest import Run, data
from tests.go.harness import Harness


@pytest.fixture(scope="module")
def jobs(dispatch: Harness) -> dict[str, Any]:
    """A small fleet's history: mail jobs (one dead after its retries, one done, one
    running), report jobs, a cron entry and a second worker."""
    ids: dict[str, Any] = {}
    ids["mail"] = [
        dispatch.call("enqueue", name="email.send", queue="mail", payload={"n": n}, max_retries=0)[
            "id"
        ]
        for n in range(5)
    ]
    ids["report"] = [
        dispatch.call("enqueue", name="report.build", queue="reports", priority=5)["id"]
        for _ in range(2)
    ]
    # The worker claims the oldest mail jobs first (equal priority: run_at ascending).
    claimed = [j["id"] for j in dispatch.call("dequeue", queues=["mail"], limit=3)["jobs"]]
    assert claimed == ids["mail"][:3]
    dispatch.call("run", id=claimed[0], error="smtp: 550 mailbox unavailable")
    dispatch.call("run", id=claimed[1])
    dispatch.call("cron", name="nightly-report", schedule="0 3 * * *", job_name="report.build")
    ids["worker"] = dispatch.call("worker", hostname="host-b", queues=["mail"], limit=4)["id"]
    return ids


def test_detection_and_db_status(jobs: dict[str, Any], pg_schema: str, qctl: Run) -> None:
    assert detect(PG_DSN, pg_schema).name == "dispatch"
    status = data(qctl("db", "status", "-o", "json"))
    assert status["system"] == "dispatch" and status["schema"] == pg_schema
    assert status["migration_versions"] == [f"2024010112000{n}" for n in range(7)]
    assert status["supported"] is True and status["unknown_versions"] == []
    # v0.1.0 has neither lease_epoch nor replayed_job_id: the capabilities they gate are off.
    assert status["capability_fenced_cancel"].startswith("no: needs dispatch_jobs.lease_epoch")
    assert status["capability_dlq_claim"].startswith("no: needs dispatch_dlq.replayed_job_id")
    migrate = qctl("db", "migrate")
    assert migrate.exit_code == 2 and "never migrates a dispatch database" in migrate.output


def test_jobs_list_newest_first_with_filters(jobs: dict[str, Any], qctl: Run) -> None:
    listed = data(qctl("jobs", "list", "-o", "json"))
    assert [j["id"] for j in listed] == list(reversed(jobs["mail"] + jobs["report"]))
    mail = jobs["mail"]
    states = {j["id"]: j["state"] for j in listed}
    assert [states[i] for i in mail] == ["failed", "completed", "running", "pending", "pending"]

    failed = data(qctl("jobs", "list", "--state", "failed", "-o", "json"))
    assert [j["id"] for j in failed] == [mail[0]]
    assert failed[0]["last_error"] == "smtp: 550 mailbox unavailable"
    assert failed[0]["payload"] == {"n": 0} and failed[0]["timeout"] == 300_000_000_000
    both = data(qctl("jobs", "list", "--state", "pending", "--state", "running", "-o", "json"))
    assert {j["id"] for j in both} == set(mail[2:]) | set(jobs["report"])
    reports = data(qctl("jobs", "list", "--queue", "reports", "-o", "json"))
    assert {j["id"] for j in reports} == set(jobs["report"])
    assert all(j["priority"] == 5 for j in reports)
    named = data(qctl("jobs", "list", "--name", "email.send", "--state", "pending", "-o", "json"))
    assert [j["id"] for j in named] == [mail[4], mail[3]]
    assert qctl("jobs", "list", "--state", "dead").exit_code == 2


def test_jobs_list_keyset_pages(jobs: dict[str, Any], qctl: Run) -> None:
    seen: list[str] = []
    after: list[str] = []
    while True:
        page = qctl("jobs", "list", "--limit", "3", "-o", "json", *after)
        got = [j["id"] for j in data(page)]
        seen += got
        if "next page: --after " not in page.stderr:
            break
        after = ["--after", page.stderr.split("next page: --after ")[1].split()[0]]
    assert seen == list(reversed(jobs["mail"] + jobs["report"]))
    assert qctl("jobs", "list", "--after", "not-a-cursor").exit_code == 2


def test_jobs_show_by_prefix(jobs: dict[str, Any], qctl: Run) -> None:
    dead = jobs["mail"][0]
    shown = data(qctl("jobs", "show", dead.removeprefix("job_")[:20], "-o", "json"))
    assert shown["id"] == dead and shown["state"] == "failed" and shown["retry_count"] == 1
    assert [e["job_id"] for e in shown["dlq"]] == [dead]
    table = qctl("jobs", "show", dead)
    assert table.exit_code == 0 and "timeout" in table.stdout and "5m" in table.stdout
    assert qctl("jobs", "show", "job_zzzz").exit_code == 3
    assert qctl("jobs", "show", "job_").exit_code == 2  # every job: ambiguous


def test_queues_dlq_cron_workers(jobs: dict[str, Any], qctl: Run) -> None:
    queues = {q["queue"]: q for q in data(qctl("queues", "list", "-o", "json"))}
    assert {k: queues["mail"][k] for k in ("pending", "running", "completed", "failed")} == {
        "pending": 2,
        "running": 1,
        "completed": 1,
        "failed": 1,
    }
    assert queues["reports"]["pending"] == 2 and queues["mail"]["oldest_pending_age"] >= 0

    [entry] = data(qctl("dlq", "list", "-o", "json"))
    assert entry["job_id"] == jobs["mail"][0] and entry["replayed_at"] is None
    assert entry["error"] == "smtp: 550 mailbox unavailable" and entry["payload"] == {"n": 0}
    assert data(qctl("dlq", "list", "--replayed", "-o", "json")) == []
    assert data(qctl("dlq", "list", "--queue", "reports", "-o", "json")) == []
    assert data(qctl("dlq", "show", entry["id"][:12], "-o", "json"))["id"] == entry["id"]

    [cron] = data(qctl("cron", "list", "-o", "json"))
    assert (cron["name"], cron["schedule"], cron["job_name"], cron["enabled"]) == (
        "nightly-report",
        "0 3 * * *",
        "report.build",
        True,
    )
    assert cron["next_run_at"] is not None
    workers = data(qctl("workers", "list", "-o", "json"))
    assert [(w["id"], w["hostname"], w["queues"]) for w in workers] == [
        (jobs["worker"], "host-b", ["mail"])
    ]
    for noun in ("queues", "dlq", "cron", "workers"):
        assert qctl(noun, "list", "-o", "csv").exit_code == 0


def test_payloads_decode_as_json_or_escaped_bytes() -> None:
    from qctl_kit.decode import json_value

    assert json_value(b'{"to": ["ops"]}') == {"to": ["ops"]}
    assert json_value(b"null") is None and json_value(None) is None
    assert json_value(b"\x00\xffraw") == "b'\\x00\\xffraw'"
    assert json_value(b"not json") == "b'not json'"


def test_metrics_equal_queues_list(jobs: dict[str, Any], qctl: Run) -> None:
    result = qctl("metrics")
    assert result.exit_code == 0, result.output
    found = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(result.stdout)
        for s in f.samples
    }
    queues = data(qctl("queues", "list", "-o", "json"))
    assert queues
    for q in queues:
        for state in ("pending", "retrying", "running", "completed", "failed", "cancelled"):
            labels = frozenset({"queue": q["queue"], "state": state}.items())
            assert found[("qctl_dispatch_jobs", labels)] == q[state]
        failed = ("qctl_dispatch_failed_jobs", frozenset({"queue": q["queue"]}.items()))
        assert found[failed] == q["failed"]
    # DLQ entries not replayed: the mail job dead after its retries, counted whole
    waiting = {
        dict(labels)["queue"]: (dict(labels)["bounded"], n)
        for (name, labels), n in found.items()
        if name == "qctl_dispatch_dlq_waiting"
    }
    assert waiting == {"mail": ("false", 1)}
