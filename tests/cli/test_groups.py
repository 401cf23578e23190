"""The other command groups on both backends: db, queues, events, subscribers, dags,
workflows, vacuum, maintain, replay, nuke, watch."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl_kit.errors import NotFound
from qctl_kit.streams import Subscription
from qctl_store.types import (
    DAGDep,
    DAGParams,
    DAGState,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    JobSearch,
    JobState,
    PublishParams,
    ScheduleOperationParams,
    Source,
    Subscriber,
    WorkflowStartParams,
    WorkflowState,
)
from tests.cli.conftest import Run, enqueue, make_dead, out_json
from tests.conftest import PG_DSN


def test_db(run: Run, backend: str) -> None:
    status = out_json(run("db", "status", "-o", "json"))
    assert status["backend"] == backend  # "postgres" or "sqlite", as DBOS's db status says
    assert status["applied_version"] == status["expected_version"] > 0
    assert status["pending_versions"] == []
    again = out_json(run("db", "migrate", "-o", "json"))
    assert again["applied"] == []
    dry = out_json(run("db", "migrate", "--dry-run", "-o", "json"))
    assert dry["pending_versions"] == []
    assert run("db", "migrate", root=["--read-only"]).exit_code == 4


def test_db_tune(run: Run, backend: str, db_args: list[str]) -> None:
    assert run("db", "tune", root=["--read-only"]).exit_code == 4
    states = ("paused", "cancelled", "uncertain", "skipped", "dead")
    want = [f"qctl_jobs_{s}_idx" for s in states] if backend == "postgres" else []
    dry = out_json(run("db", "tune", "--dry-run", "-o", "json"))
    assert dry == {"dry_run": True, "indexes": want}
    assert out_json(run("db", "status", "-o", "json"))["console_indexes"] == []
    done = run("db", "tune")
    assert done.exit_code == 0, done.stderr
    assert done.stdout == (f"created {', '.join(want)}\n" if want else "nothing to tune\n")
    assert out_json(run("db", "status", "-o", "json"))["console_indexes"] == sorted(want)
    again = run("db", "tune")
    present = ", ".join(sorted(want))
    assert again.stdout == (f"nothing to tune: {present} exist\n" if want else "nothing to tune\n")
    if want:  # the other tests of the module expect azync's indexes only
        with psycopg.connect(PG_DSN, options=f"-c search_path={db_args[3]}") as conn:
            for name in want:
                conn.execute(f"DROP INDEX {name}")


def test_db_status_says_when_no_autovacuum_reaches_the_job_table(
    run: Run, backend: str, db_args: list[str]
) -> None:
    if backend == "sqlite":  # no vacuum to report: the fields are empty, nothing is said
        res = run("db", "status", "-o", "json")
        assert res.exit_code == 0 and res.stderr == ""
        assert [out_json(res)[k] for k in ("autovacuum", "jobs_dead_rows")] == [None, None]
        return
    schema = db_args[3]
    with psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={schema}") as conn:
        server_on = conn.execute("SELECT current_setting('autovacuum')::bool").fetchone()
        conn.execute("ALTER TABLE azync_jobs SET (autovacuum_enabled = false)")
        try:
            off = run("db", "status", "-o", "json")
        finally:
            conn.execute("ALTER TABLE azync_jobs RESET (autovacuum_enabled)")
    assert off.exit_code == 0
    assert out_json(off)["autovacuum"] is False
    assert off.stderr.startswith("autovacuum is off for azync_jobs")
    assert f'run `VACUUM "{schema}".azync_jobs` regularly' in off.stderr
    assert len(off.stderr.splitlines()) == 1
    res = run("db", "status", "-o", "json")  # the server's own setting decides again
    assert out_json(res)["autovacuum"] is (server_on == (True,))
    assert ("autovacuum is off" in res.stderr) is (server_on != (True,))


def test_unmigrated_database_exit_5(tmp_path: Path, backend: str, request: Any) -> None:
    if backend == "postgres":
        fresh_pg_schema = request.getfixturevalue("fresh_pg_schema")
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
        root = ["--dsn", PG_DSN, "--schema", fresh_pg_schema]
    else:
        root = ["--dsn", f"sqlite:///{tmp_path}/empty.db"]
    res = CliRunner().invoke(app, [*root, "jobs", "list"])
    assert res.exit_code == 5, res.stderr
    assert "qctl db migrate" in res.stderr and res.stderr.count("\n") == 1


def test_db_status_exits_5_until_migrated_on_both_backends(
    tmp_path: Path, backend: str, request: Any
) -> None:
    # A database with no azync schema yet: a PostgreSQL schema that does not exist, a
    # SQLite file that does not exist, then an empty one.
    if backend == "postgres":
        roots = [["--dsn", PG_DSN, "--schema", request.getfixturevalue("fresh_pg_schema")]]
    else:
        roots = [["--dsn", f"sqlite:///{tmp_path}/absent.db"]]
        sqlite3.connect(tmp_path / "empty.db").close()
        roots.append(["--dsn", f"sqlite:///{tmp_path}/empty.db"])
    for root in roots:
        res = CliRunner().invoke(app, [*root, "db", "status", "-o", "json"])
        assert res.exit_code == 5, res.stderr
        assert "qctl db migrate" in res.stderr
        if res.stdout:  # the status is printed where there is a database to read
            assert json.loads(res.stdout)["applied_version"] == 0
    root = roots[-1]
    assert CliRunner().invoke(app, [*root, "db", "migrate"]).exit_code == 0
    res = CliRunner().invoke(app, [*root, "db", "status", "-o", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["pending_versions"] == []


def test_queues(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 2)
    enqueue(st, kind, 1, delay=timedelta(hours=1))
    rows = out_json(run("queues", "list", "--source", "queue", "-o", "json"))
    (row,) = [r for r in rows if r["kind"] == kind]
    assert (row["pending"], row["scheduled"], row["source"]) == (2, 1, "queue")
    assert isinstance(row["oldest_pending_age"], float)
    stats = out_json(run("queues", "stats", kind, "-o", "json"))
    assert stats["depths"]["pending"] == 2
    assert sum(d["enqueued"] for d in stats["daily"]) == 3
    assert run("queues", "stats", kind).exit_code == 0
    daily = out_json(run("queues", "daily", "--source", "queue", "-o", "json"))
    assert daily and daily[0]["source"] == "queue"
    assert kind in run("queue", "list").stdout
    # Nothing pending: no age (blank in tables and CSV, null in JSON: absent values are
    # null; the store's 0 would read as "just enqueued").
    idle = f"{kind}_idle"
    enqueue(st, idle, 1, delay=timedelta(hours=1))
    (csv_row,) = [
        r
        for r in csv.DictReader(io.StringIO(run("queues", "list", "-o", "csv").stdout))
        if r["kind"] == idle
    ]
    assert csv_row["oldest_pending_age"] == ""
    (json_row,) = [r for r in out_json(run("queues", "list", "-o", "json")) if r["kind"] == idle]
    assert json_row["oldest_pending_age"] is None


def test_events_and_subscribers(run: Run, st: Any, kind: str, tty: None) -> None:
    etype = f"ev.{kind}"
    sub = f"sub_{kind}"
    reg = run("subscribers", "register", sub, etype, "--max-attempts", "4")
    assert reg.exit_code == 0 and "registered" in reg.stdout
    views = out_json(run("subscribers", "list", "--event-type", etype, "-o", "json"))
    assert [(v["subscriber"], v["max_attempts"]) for v in views] == [(sub, 4)]

    pub = out_json(
        run(
            "events",
            "publish",
            etype,
            "--payload",
            '{"x": 1}',
            "--aggregate-type",
            "order",
            "--aggregate-id",
            "o1",
            "--meta",
            "m=1",
            "-o",
            "json",
        )
    )
    assert pub["deliveries"] == 1
    events = out_json(run("events", "list", "--type", etype, "-o", "json"))
    assert [e["id"] for e in events] == [pub["id"]] and "payload" not in events[0]
    shown = out_json(run("events", "show", pub["id"][:9], "-o", "json"))
    assert shown["payload"] == {"x": 1} and shown["aggregate_id"] == "o1"
    assert run("events", "list", "--since", "-1h", "--until", "+1h").exit_code == 0
    assert run("events", "list", "--since", "yesterday").exit_code == 2
    stats = out_json(run("events", "stats", "-o", "json"))
    assert stats["total_24h"] >= 1 and stats["subscribers"] >= 1

    dry = out_json(run("subscribers", "delete", sub, "--drain", "--dry-run", "-o", "json"))
    assert (dry["dry_run"], dry["count"], dry["drained"]) == (True, 1, 1)
    assert run("subscribers", "delete", sub, etype, "--drain").exit_code == 2
    assert run("subscribers", "delete", sub, "--drain", input="n\n").exit_code == 4
    done = out_json(run("subscribers", "delete", sub, "--drain", "--yes", "-o", "json"))
    assert (done["dry_run"], done["count"], done["drained"]) == (False, 1, 1)
    assert st.kind_depths(Source.EVENT).get(sub) is None or (
        st.kind_depths(Source.EVENT)[sub].pending == 0
    )


def test_replay_and_retain(run: Run, st: Any, kind: str) -> None:
    etype = f"ev.{kind}"
    sub = f"sub_{kind}"
    st.register_subscriber(Subscriber(name=sub, event_type=etype))
    p = PublishParams(type=etype, payload={"n": 1})
    st.publish(p)
    (delivery,) = st.dequeue_batch(Source.EVENT, DequeueParams(kind=sub, limit=1))
    st.ack(delivery.id, delivery.lease_token)

    dry = out_json(run("replay", "--event-type", etype, "--dry-run", "-o", "json"))
    assert dry == {"dry_run": True, "events": 1, "subscribers": 1, "deliveries": 1}
    assert run("replay", "--event-type", etype).exit_code == 4  # no terminal, no --yes
    done = out_json(run("replay", "--event-id", str(p.id), "--yes", "-o", "json"))
    assert done["deliveries"] == 1
    assert run("replay", "--event-id", str(uuid.uuid4()), "--yes").exit_code == 3

    (again,) = st.dequeue_batch(Source.EVENT, DequeueParams(kind=sub, limit=1))
    st.ack(again.id, again.lease_token)
    assert run("events", "retain", "--before", "+1m", "--dry-run").exit_code == 0
    kept = run("events", "retain", "--before", "-1h", "--yes", "-o", "json")
    assert out_json(kept)["count"] == 0
    gone = out_json(
        run("events", "retain", "--before", "+1m", "--yes", "--limit", "100000", "-o", "json")
    )
    assert gone["count"] >= 1
    with pytest.raises(NotFound):
        st.get_event(p.id)


def _dag(st: Any, name: str) -> uuid.UUID:
    p = DAGParams(
        name=name,
        tasks=[
            DAGTask(key="fetch", kind=f"{name}.fetch"),
            DAGTask(key="parse", kind=f"{name}.parse"),
            DAGTask(key="store", kind=f"{name}.store"),
        ],
        deps=[DAGDep("parse", "fetch"), DAGDep("store", "parse"), DAGDep("store", "fetch")],
        idempotency_key=f"key-{name}",
    )
    inserted, _ = st.create_dag(p)
    assert inserted
    return p.id


def test_dags(run: Run, st: Any, kind: str, tty: None) -> None:
    dag_id = _dag(st, kind)
    rows = out_json(run("dags", "list", "--name", kind, "-o", "json"))
    assert [r["id"] for r in rows] == [str(dag_id)]
    assert rows[0]["tasks"] == {"pending": 1, "blocked": 2}
    table = run("dags", "list", "--name", kind)
    assert "blocked:2 pending:1" in table.stdout
    counts = out_json(run("dags", "counts", "-o", "json"))
    assert {"name": kind, "running": 1} == {
        k: v
        for k, v in next(c for c in counts if c["name"] == kind).items()
        if k in ("name", "running")
    }
    shown = run("dags", "show", str(dag_id)[:8])
    assert shown.exit_code == 0
    assert "fetch [pending]" in shown.stdout and "store [blocked]" in shown.stdout
    detail = out_json(run("dags", "show", str(dag_id), "-o", "json"))
    assert detail["dag"]["state"] == "running" and len(detail["tasks"]) == 3
    assert {"task_key": "parse", "depends_on_key": "fetch"} in detail["deps"]
    found = out_json(run("dags", "find", kind, f"key-{kind}", "-o", "json"))
    assert found["id"] == str(dag_id)
    assert run("dags", "find", kind, "nope").exit_code == 3

    typo = run("dags", "signal", str(dag_id), "go", "--payload", "{}")
    assert typo.exit_code == 3 and "waits for a signal named 'go'" in typo.stderr

    assert run("dags", "pause", str(dag_id), "--reason", "look").exit_code == 0
    assert st.get_dag(dag_id).state == DAGState.PAUSED
    assert run("dag", "retry", str(dag_id), "--yes").exit_code == 0
    assert st.get_dag(dag_id).state == DAGState.RUNNING
    dry = out_json(run("dags", "cancel", str(dag_id), "--dry-run", "-o", "json"))
    assert (dry["dry_run"], dry["state"]) == (True, "running")
    assert run("dags", "cancel", str(dag_id), "--dry-run", root=["--read-only"]).exit_code == 0
    assert run("dags", "cancel", str(dag_id), input="n\n").exit_code == 4
    assert st.get_dag(dag_id).state == DAGState.RUNNING
    assert run("dags", "cancel", str(dag_id), input="y\n").exit_code == 0
    assert st.get_dag(dag_id).state == DAGState.CANCELLED
    assert run("dags", "cancel", str(dag_id), "--yes").exit_code == 3

    other = _dag(st, kind + "_c")
    assert run("dags", "compensate", str(other)).exit_code == 4  # asked; no answer
    assert run("dags", "compensate", str(other), "--yes").exit_code == 0
    assert st.get_dag(other).state in (DAGState.COMPENSATING, DAGState.FAILED)
    assert run("dags", "compensate", str(other), root=["--read-only"]).exit_code == 4


def test_workflows(run: Run, st: Any, kind: str, tty: None) -> None:
    p = WorkflowStartParams(name=kind, version="v1", input={"a": 1})
    st.start_workflow(p)
    rows = out_json(run("workflows", "list", "--name", kind, "-o", "json"))
    assert [r["id"] for r in rows] == [str(p.id)]
    assert out_json(run("workflows", "show", str(p.id), "-o", "json"))["workflow"]["state"] == (
        "running"
    )
    sig = out_json(
        run("workflows", "signal", str(p.id), "ping", "--message-id", "m1", "-o", "json")
    )
    assert (sig["delivered"], sig["deduplicated"]) == (1, False)
    dup = out_json(
        run("workflows", "signal", str(p.id), "ping", "--message-id", "m1", "-o", "json")
    )
    assert (dup["delivered"], dup["deduplicated"]) == (0, True)
    assert run("workflows", "suspend", str(p.id), "--reason", "hold").exit_code == 0
    assert st.get_workflow_execution(p.id).state == WorkflowState.SUSPENDED
    assert run("workflows", "resume", str(p.id)).exit_code == 0
    assert st.get_workflow_execution(p.id).state == WorkflowState.RUNNING
    task_kind = f"$wf:{kind}"
    assert st.search_jobs(JobSearch(source=Source.WORKFLOW, kind=task_kind))

    # An uncertain operation resolved as complete: history gets the outcome.
    op_kind = f"op_{kind}"
    op_id = st.schedule_operation(
        ScheduleOperationParams(
            workflow_id=p.id,
            kind=op_kind,
            meta={
                "op_name": "charge",
                "op_version": "1",
                "execution_key": "ek1",
                "workflow_name": kind,
            },
        )
    )
    (op,) = st.dequeue_batch(Source.WORKFLOW, DequeueParams(kind=op_kind, limit=1))
    assert op.id == op_id
    st.mark_uncertain(op.id, op.lease_token, "timeout")
    res = out_json(
        run(
            "workflows",
            "resolve",
            str(op_id),
            "complete",
            "--result",
            '{"ok": 1}',
            "--yes",
            "-o",
            "json",
        )
    )
    assert res["workflow_id"] == str(p.id)
    history = st.list_history(p.id)
    completed = [h for h in history if h.type == "OperationCompleted"]
    assert completed and completed[-1].payload == {
        "name": "charge",
        "version": "1",
        "execution_key": "ek1",
        "result": {"ok": 1},
    }
    assert run("workflows", "resolve", str(op_id), "complete", "--yes").exit_code == 3
    assert run("workflows", "resolve", str(op_id), "maybe").exit_code == 2

    assert run("workflows", "stalled", "--older-than", "1h", "-o", "json").exit_code == 0
    assert run("workflows", "cancel", str(p.id), input="y\n").exit_code == 0
    assert st.get_workflow_execution(p.id).state == WorkflowState.CANCELLED


def test_vacuum(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 2)
    dry = out_json(
        run(
            "vacuum",
            "dead",
            "--older-than",
            "0",
            "--kind",
            kind,
            "--source",
            "queue",
            "--dry-run",
            "-o",
            "json",
        )
    )
    assert dry == {
        "older_than": "0",
        "dry_run": True,
        "tables": [{"table": "dead.queue", "would_remove": 2}],
        "total": 2,
    }
    assert run("vacuum", "dead", "--older-than", "0", "--kind", kind).exit_code == 4
    rows = out_json(
        run(
            "vacuum",
            "dead",
            "--older-than",
            "0",
            "--kind",
            kind,
            "--source",
            "queue",
            "--yes",
            "-o",
            "json",
        )
    )
    assert rows == {
        "older_than": "0",
        "dry_run": False,
        "tables": [{"table": "dead.queue", "removed": 2}],
        "total": 2,
    }

    (done,) = enqueue(st, kind, 1)
    (job,) = st.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=1))
    st.ack(job.id, job.lease_token)
    time.sleep(0.05)
    plan = out_json(
        run(
            "vacuum",
            "all",
            "--older-than",
            "30d",
            "--completed",
            "1ms",
            "--stats",
            "90d",
            "--source",
            "queue",
            "--dry-run",
            "-o",
            "json",
        )
    )
    by_table = {r["table"]: r["would_remove"] for r in plan["tables"]}
    assert list(by_table) == [
        "completed.queue", "dead.queue", "stats.queue", "idempotency.queue", "dags", "workflows"
    ]  # fmt: skip
    assert by_table["completed.queue"] >= 1 and by_table["dags"] >= 0
    assert by_table["stats.queue"] is None and by_table["idempotency.queue"] is None
    assert plan["total"] == sum(n or 0 for n in by_table.values())
    st.get_job(Source.QUEUE, done)  # the dry run removed nothing
    for args in (
        ["completed", "--retention", "30d"],
        ["stats", "--retention", "90d"],
        ["idempotency"],
        ["dags", "--retention", "30d"],
        ["workflows", "--retention", "30d"],
    ):
        r = run("vacuum", *args, "--yes", "-o", "json")
        assert r.exit_code == 0, (args, r.stderr)
        result = json.loads(r.stdout)
        assert all(isinstance(row["removed"], int) for row in result["tables"])
        assert result["total"] == sum(row["removed"] for row in result["tables"])
        assert run("vacuum", *args, "--dry-run").exit_code == 0
    every = out_json(
        run(
            "vacuum",
            "all",
            "--older-than",
            "30d",
            "--completed",
            "1ms",
            "--source",
            "queue",
            "--yes",
            "-o",
            "json",
        )
    )
    assert every["tables"][0]["table"] == "completed.queue"
    assert every["tables"][0]["removed"] >= 1
    assert every["total"] == sum(t["removed"] for t in every["tables"])
    with pytest.raises(NotFound):
        st.get_job(Source.QUEUE, done)
    assert run("vacuum", "all", "--yes").exit_code == 2  # no --older-than
    for zero in (["all", "--older-than", "0"], ["completed", "--older-than", "0s"]):
        refused = run("vacuum", *zero, "--yes")
        assert refused.exit_code == 2 and refused.stderr.splitlines() == [
            "qctl: error: --older-than 0 would remove everything finished up to now;"
            " give a positive age"
        ]
    assert run("vacuum", "completed", "--retention", "1x", "--yes").exit_code == 2
    assert run("vacuum", "idempotency", "--yes", root=["--read-only"]).exit_code == 4


def test_maintain_once(run: Run, st: Any, kind: str) -> None:
    p = EnqueueParams(kind=kind, delay=timedelta(milliseconds=1))
    st.enqueue(p)
    time.sleep(0.05)
    rows = out_json(run("maintain", "--once", "-o", "json"))
    steps = [r["step"] for r in rows]
    assert steps[-5:] == [
        "promote_unblocked",
        "deliver_buffered_signals",
        "complete_due_sleeps",
        "apply_failure_policy",
        "complete_dags",
    ]
    assert "promote_due" in steps and "reap_expired" in steps
    assert st.get_job(Source.QUEUE, p.id).state == JobState.PENDING
    assert run("maintain", "--once", root=["--read-only"]).exit_code == 4
    assert run("maintain", "--interval", "0").exit_code == 2


def test_maintain_skips_without_leadership(run: Run, st: Any) -> None:
    lease, acquired = st.acquire_leadership_lease("maintain")
    assert acquired
    try:
        res = run("maintain", "--once", "-o", "json")
        assert res.exit_code == 0 and res.stdout == ""
        assert "another maintainer" in res.stderr
    finally:
        lease.release()


def test_nuke(run: Run, st: Any, kind: str, tty: None) -> None:
    enqueue(st, kind, 2)
    dry = out_json(run("nuke", "--source", "queue", "--dry-run", "-o", "json"))
    assert dry["jobs"] >= 2
    assert run("nuke", "--source", "queue", input="n\n").exit_code == 4
    assert st.count_jobs(JobSearch(source=Source.QUEUE, kind=kind), exact=True)[0] == 2
    assert run("nuke", input="n\n").exit_code == 4  # the queue by default, still asked
    done = out_json(run("nuke", "--source", "queue", "--yes", "-o", "json"))
    assert done["jobs"] >= 2 and done["source"] == "queue"
    assert st.count_jobs(JobSearch(source=Source.QUEUE, kind=kind), exact=True)[0] == 0


def test_watch(run: Run, st: Any, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hints arrive as JSON lines (a reset first); Ctrl-C ends the command with exit 0."""
    original = Subscription.get
    calls = {"n": 0, "got_job": False}

    def get(self: Subscription[Any], timeout: float | None = None) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            enqueue(st, kind, 1)
        if calls["got_job"] or calls["n"] > 80:
            raise KeyboardInterrupt
        item = original(self, 0.1)
        if item is not None and getattr(item, "kind", "") == kind:
            calls["got_job"] = True
        return item

    monkeypatch.setattr(Subscription, "get", get)
    res = run("watch", "--entity", "job")
    assert res.exit_code == 0, res.stderr
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert lines and lines[0]["entity"] == "reset"
    assert any(c["entity"] == "job" and c["kind"] == kind for c in lines)
    assert "Traceback" not in res.stderr


READ_VERBS = [
    ["jobs", "list"],
    ["queues", "list"],
    ["queues", "daily"],
    ["events", "list"],
    ["events", "stats"],
    ["subscribers", "list"],
    ["dags", "list"],
    ["dags", "counts"],
    ["workflows", "list"],
    ["workflows", "stalled"],
    ["db", "status"],
]


@pytest.mark.parametrize("verb", READ_VERBS, ids=" ".join)
def test_every_format(run: Run, st: Any, kind: str, verb: list[str]) -> None:
    enqueue(st, kind, 1)
    for fmt in ("table", "json", "jsonl", "csv"):
        res = run(*verb, "-o", fmt)
        assert res.exit_code == 0, (verb, fmt, res.stderr)
        if fmt == "json":
            json.loads(res.stdout)
        elif fmt == "jsonl":
            for line in res.stdout.splitlines():
                assert isinstance(json.loads(line), dict)
        elif fmt == "csv":
            rows = list(csv.reader(io.StringIO(res.stdout)))
            assert rows and len({len(r) for r in rows}) == 1
    assert run(*verb, "-o", "yaml").exit_code == 2
