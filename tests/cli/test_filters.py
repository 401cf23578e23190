"""The shared job filter on ``jobs list`` (payload containment, age, event, DAG run and
workflow execution, with the scan confirmation) and ``queues throughput`` / ``queues
daily``, on both backends."""

from __future__ import annotations

import time
import uuid
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from qctl_store import throughput
from qctl_store.types import (
    DAGParams,
    DAGTask,
    DequeueParams,
    PublishParams,
    Source,
    Subscriber,
    WorkflowStartParams,
)
from tests.cli.conftest import Run, enqueue, make_dead, out_json


def ids_of(result: Any) -> set[str]:
    return {row["id"] for row in out_json(result)}


def test_list_payload_contains(run: Run, st: Any, kind: str) -> None:
    (mine,) = enqueue(st, kind, payload={"customer": "42", "lines": [1, 2]})
    enqueue(st, kind, payload={"customer": "43"})
    enqueue(st, kind, payload={"customer": 42})
    got = run(
        "jobs", "list", "--kind", kind, "--payload-contains", '{"customer":"42"}', "-o", "json"
    )
    assert ids_of(got) == {str(mine)}
    nested = run(
        "jobs", "list", "--kind", kind, "--payload-contains", '{"lines":[2]}', "-o", "json"
    )
    assert ids_of(nested) == {str(mine)}
    bad = run("jobs", "list", "--payload-contains", "{nope")
    assert bad.exit_code == 2 and "--payload-contains" in bad.stderr and bad.stdout == ""


def test_payload_scan_asks_on_a_large_table(
    run: Run, st: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("qctl.systems.azync.cli.filters.SCAN_ASK", 0)
    (mine,) = enqueue(st, kind, payload={"x": 1})
    needle = ["--payload-contains", '{"x":1}']
    refused = run("jobs", "list", *needle)
    assert refused.exit_code == 4 and "scans" in refused.stderr and "--yes" in refused.stderr
    assert refused.stdout == ""
    assert str(mine) in ids_of(run("jobs", "list", *needle, "--yes", "-o", "json"))
    # A kind within a state is an index range: no question.
    narrowed = run("jobs", "list", *needle, "--kind", kind, "--state", "pending", "-o", "json")
    assert ids_of(narrowed) == {str(mine)}


def test_list_older_than(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 2)
    time.sleep(0.01)
    assert len(ids_of(run("jobs", "list", "--kind", kind, "--older-than", "0s", "-o", "json"))) == 2
    assert ids_of(run("jobs", "list", "--kind", kind, "--older-than", "1h", "-o", "json")) == set()
    bad = run("jobs", "list", "--older-than", "soon")
    assert bad.exit_code == 2 and "--older-than" in bad.stderr


def test_list_by_event_dag_and_run(run: Run, st: Any, kind: str) -> None:
    etype = f"evt.{kind}"
    st.register_subscriber(Subscriber(name=kind, event_type=etype, max_attempts=3))
    event = PublishParams(type=etype, payload={})
    st.publish(event)
    by_event = out_json(run("jobs", "list", "--event", str(event.id)[:13], "-o", "json"))
    assert [(r["source"], r["kind"]) for r in by_event] == [("event", kind)]

    dag = DAGParams(name=f"dag_{kind}", tasks=[DAGTask(key="a", kind=kind)])
    st.create_dag(dag)
    by_dag = out_json(run("jobs", "list", "--dag", str(dag.id), "-o", "json"))
    assert [(r["source"], r["dag_id"]) for r in by_dag] == [("dag", str(dag.id))]

    wf = WorkflowStartParams(id=uuid.uuid4(), name=f"wf_{kind}")
    st.start_workflow(wf)
    by_run = out_json(run("jobs", "list", "--run", str(wf.id)[:8], "-o", "json"))
    assert {r["run_id"] for r in by_run} == {str(wf.id)} and by_run

    missing = run("jobs", "list", "--dag", str(uuid.uuid4())[:8])
    assert missing.exit_code == 3


def test_queues_throughput(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 4)
    acked, dead, _ = st.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=3))
    st.ack(acked.id, acked.lease_token)
    st.dead(dead.id, dead.lease_token, "boom")
    rows = out_json(run("queues", "throughput", "--last", "1h", "--kind", kind, "-o", "json"))
    assert len(rows) == 60
    assert rows[-1]["start"].endswith(":00Z")
    totals = {m: sum(r[m] for r in rows) for m in ("enqueued", "processed", "failed", "reaped")}
    assert totals == {"enqueued": 4, "processed": 1, "failed": 1, "reaped": 0}

    hourly = out_json(
        run("queues", "throughput", "--last", "2h", "--by", "hour", "--per-kind", "-o", "json")
    )
    mine = [r for r in hourly if r["kind"] == kind]
    assert len(mine) == 2 and sum(r["enqueued"] for r in mine) == 4

    table = run("queues", "throughput", "--last", "5m", "--kind", kind)
    assert table.exit_code == 0 and "ENQUEUED" in table.stdout.upper()
    # PostgreSQL without `db tune`'s indexes leaves out the states no index holds: said.
    partial = "partial: enqueued leaves out jobs now paused, cancelled, uncertain, skipped"
    assert (partial in table.stderr) == (st.throughput_omits() != [])
    for bad in (["--by", "day"], ["--last", "0s"], ["--last", "30d"]):
        result = run("queues", "throughput", *bad)
        assert result.exit_code == 2 and result.stdout == "", bad


def test_queues_throughput_keeps_one_grid_across_sources(
    run: Run, st: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each source is read with the database's clock of that moment: a minute boundary
    # passing between two reads shifts one grid by a bucket (simulated here).
    real = throughput.series
    calls: list[datetime] = []

    def later_each_call(now: datetime, *args: Any, **kwargs: Any) -> Any:
        calls.append(now)
        return real(now + timedelta(minutes=len(calls) - 1), *args, **kwargs)

    monkeypatch.setattr(throughput, "series", later_each_call)
    rows = out_json(run("queues", "throughput", "--last", "1h", "--kind", kind, "-o", "json"))
    assert len(calls) > 1
    assert len(rows) == 60 and len({r["start"] for r in rows}) == 60


def test_queues_daily_prints_dates(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind)
    rows = out_json(run("queues", "daily", "--days", "2", "-s", "queue", "-o", "json"))
    assert len(rows) == 2
    assert [date.fromisoformat(r["date"]) for r in rows][1] - date.fromisoformat(
        rows[0]["date"]
    ) == timedelta(days=1)
    table = run("queues", "daily", "--days", "1", "-s", "queue").stdout
    assert "00:00:00" not in table and rows[-1]["date"] in table
    stats = out_json(run("queues", "stats", kind, "-o", "json"))
    assert "T" not in stats["daily"][-1]["date"] and stats["daily"][-1]["failed"] == 1


def test_events_list_by_aggregate_and_show_lists_deliveries(run: Run, st: Any, kind: str) -> None:
    etype = f"evt.{kind}"
    for name in (f"{kind}_mail", f"{kind}_audit"):
        st.register_subscriber(Subscriber(name=name, event_type=etype, max_attempts=3))
    mine = PublishParams(type=etype, payload={}, aggregate_type="order", aggregate_id=kind)
    st.publish(mine)
    st.publish(PublishParams(type=etype, payload={}, aggregate_type="invoice", aggregate_id=kind))
    st.publish(PublishParams(type=etype, payload={}, aggregate_type="order", aggregate_id="other"))
    typed = out_json(run("events", "list", "--aggregate", f"order:{kind}", "-o", "json"))
    assert [r["id"] for r in typed] == [str(mine.id)]
    assert len(out_json(run("events", "list", "--aggregate", kind, "-o", "json"))) == 2
    bad = run("events", "list", "--aggregate", "order:")
    assert bad.exit_code == 2 and "--aggregate" in bad.stderr

    (job,) = st.dequeue_batch(Source.EVENT, DequeueParams(kind=f"{kind}_mail", limit=1))
    st.dead(job.id, job.lease_token, "smtp down")
    shown = out_json(run("events", "show", str(mine.id)[:8], "-o", "json"))
    assert shown["id"] == str(mine.id) and shown["deliveries"] == 2
    states = {d["subscriber"]: d["state"] for d in shown["delivery_jobs"]}
    assert states == {f"{kind}_mail": "dead", f"{kind}_audit": "pending"}
    table = run("events", "show", str(mine.id)).stdout
    assert "SUBSCRIBER" in table and f"{kind}_audit" in table and "smtp down" in table


def test_dead_jobs_list_newest_first_by_default(run: Run, st: Any, kind: str) -> None:
    dead = []
    for _ in range(3):
        dead += make_dead(st, kind)
        time.sleep(0.01)

    def listed(*extra: str) -> list[str]:
        rows = out_json(
            run("jobs", "list", "--kind", kind, "--state", "dead", *extra, "-o", "json")
        )
        return [r["id"] for r in rows]

    oldest_first = [str(i) for i in dead]
    assert listed() == oldest_first[::-1] == listed("--sort", "newest")
    assert listed("--sort", "oldest") == oldest_first
    # The cursor of a page continues in the same direction.
    first = run("jobs", "list", "--kind", kind, "--state", "dead", "-n", "2", "-o", "json")
    cursor = first.stderr.split("--after ")[1].split()[0]
    rest = out_json(
        run("jobs", "list", "--kind", kind, "--state", "dead", "--after", cursor, "-o", "json")
    )
    assert [r["id"] for r in rest] == [oldest_first[0]]
    (first_pending,) = enqueue(st, kind)
    time.sleep(0.01)
    (second_pending,) = enqueue(st, kind)
    # Other states keep the store's order: pending oldest first.
    assert listed_state(run, kind, "pending") == [str(first_pending), str(second_pending)]
    bad = run("jobs", "list", "--sort", "sideways")
    assert bad.exit_code == 2 and "--sort" in bad.stderr


def listed_state(run: Run, kind: str, state: str) -> list[str]:
    rows = out_json(run("jobs", "list", "--kind", kind, "--state", state, "-o", "json"))
    return [r["id"] for r in rows]


def test_one_age_flag_across_verbs(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 1)
    for args in (
        ["vacuum", "completed", "--older-than", "1d"],
        ["vacuum", "completed", "--retention", "1d"],  # the earlier name
        ["vacuum", "dags", "--older-than", "30d"],
        ["jobs", "vacuum-dead", "--older-than", "7d"],
        ["events", "retain", "--older-than", "30d"],
        ["jobs", "retry", "--older-than", "0s", "--kind", kind],
    ):
        result = run(*args, "--dry-run", "-o", "json")
        assert result.exit_code == 0, (args, result.stderr)
        plan = out_json(result)
        assert all(r["dry_run"] for r in (plan if isinstance(plan, list) else [plan])), args
    both = run("events", "retain", "--older-than", "30d", "--before", "-1d", "--dry-run")
    assert both.exit_code == 2 and "one of them" in both.stderr
    neither = run("events", "retain", "--dry-run")
    assert neither.exit_code == 2


def test_every_job_verb_takes_the_same_filter_options() -> None:
    """One declaration (``filters.FILTERS``) serves `jobs list` and every bulk verb;
    `jobs delete` declares its own --state (required with filters, by its body)."""
    import typer.main

    from qctl.systems.azync.cli import filters
    from qctl.systems.azync.cli.jobs import app

    group = typer.main.get_group(app)
    names = {name for name, _, _ in filters.FILTERS}
    for verb in ["list", "retry", "run-now", "archive", "pause", "resume", "delete"]:
        command = group.commands[verb]
        params = {p.name for p in command.params}
        assert names <= params, verb
        opts = {o for p in command.params for o in p.opts}
        assert {"--error", "--payload-contains", "--older-than", "--run"} <= opts, verb
    state = next(p for p in group.commands["delete"].params if p.name == "state")
    assert state.opts == ["--state"]
