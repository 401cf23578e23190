"""The job verbs over a filter (retry, run-now, pause, resume, archive, delete) on both
backends, through the verb engine: one filter set, a dry run that is the plan (counts by
state, a sample, every id), one confirmation that says how many, the manager guards,
and only the matching jobs written."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from qctl_store.types import (
    DAGParams,
    DAGTask,
    DequeueParams,
    JobSearch,
    JobState,
    PublishParams,
    Source,
    Subscriber,
)
from tests.cli.conftest import Run, enqueue, make_dead, out_json


def states(st: Any, ids: list[Any]) -> list[JobState]:
    return [st.find_job(i).state for i in ids]


def test_pause_and_resume_a_whole_kind(run: Run, st: Any, kind: str) -> None:
    pending = enqueue(st, kind, 2)
    scheduled = enqueue(st, kind, 1, delay=timedelta(hours=1))
    (other,) = enqueue(st, kind + "_other")
    done = run("jobs", "pause", "--kind", kind, "--yes")
    assert done.exit_code == 0 and "paused 3 azync jobs" in done.stdout
    assert states(st, pending + scheduled) == [JobState.PAUSED] * 3
    assert st.find_job(other).state == JobState.PENDING
    row = next(
        r for r in out_json(run("queues", "list", "-s", "queue", "-o", "json")) if r["kind"] == kind
    )
    assert (row["paused"], row["status"]) == (3, "3 held")
    # azync has no kind-level pause: a job enqueued now runs, and no kind reads "paused".
    (later,) = enqueue(st, kind)
    assert st.find_job(later).state == JobState.PENDING
    st.delete_job(Source.QUEUE, later, JobState.PENDING)
    help_text = run("jobs", "pause", "--help").stdout
    assert "new jobs of the kind still run" in " ".join(help_text.split())

    resumed = out_json(run("jobs", "resume", "--kind", kind, "--yes", "-o", "json"))
    assert (resumed["verb"], resumed["system"], resumed["done"]) == ("jobs resume", "azync", 3)
    assert sorted(resumed["ids"]) == sorted(str(i) for i in pending + scheduled)
    assert (resumed["selected"], resumed["skipped"], resumed["batches"]) == (3, {}, 1)
    assert states(st, pending) == [JobState.PENDING] * 2
    assert states(st, scheduled) == [JobState.SCHEDULED]
    row = next(
        r for r in out_json(run("queues", "list", "-s", "queue", "-o", "json")) if r["kind"] == kind
    )
    assert row["status"] == ""


def test_dry_run_counts_samples_and_writes_nothing(run: Run, st: Any, kind: str) -> None:
    mine = enqueue(st, kind, 7, payload={"customer": "42"})
    enqueue(st, kind, 2, payload={"customer": "7"})
    args = ["jobs", "archive", "--kind", kind, "--payload-contains", '{"customer":"42"}']
    plan = out_json(run(*args, "--dry-run", "-o", "json"))
    assert (plan["selected"], plan["dry_run"], plan["states"]) == (7, True, {"pending": 7})
    assert sorted(plan["ids"]) == sorted(str(i) for i in mine)
    assert len(plan["sample"]) == 5 and {s["id"] for s in plan["sample"]} <= {str(i) for i in mine}
    table = run(*args, "--dry-run")
    assert table.stdout.startswith(
        "dry run: jobs archive will move to dead without running them: 7 azync jobs (7 pending)"
    )
    assert plan["sample"][0]["id"] in table.stdout
    csv = run(*args, "--dry-run", "-o", "csv").stdout.splitlines()
    assert len(csv) == 2 and csv[0].startswith("verb,system,target,")  # one record
    assert states(st, mine) == [JobState.PENDING] * 7


def test_one_confirmation_says_how_many(run: Run, st: Any, kind: str, monkeypatch: Any) -> None:
    ids = enqueue(st, kind, 2)
    refused = run("jobs", "archive", "--kind", kind)
    assert refused.exit_code == 4 and "--yes" in refused.stderr and refused.stdout == ""
    monkeypatch.setattr("qctl.cli.common.stdin_is_tty", lambda: True)
    declined = run("jobs", "archive", "--kind", kind, input="n\n")
    assert declined.exit_code == 4 and "Archive 2 azync jobs (2 pending: " in declined.stderr
    assert states(st, ids) == [JobState.PENDING] * 2
    done = run("jobs", "archive", "--kind", kind, input="y\n")
    assert done.exit_code == 0 and "archived 2 azync jobs" in done.stdout
    assert states(st, ids) == [JobState.DEAD] * 2


def test_retry_and_delete_only_the_matching_dead_jobs(run: Run, st: Any, kind: str) -> None:
    disk = make_dead(st, kind, 2, error="disk full")
    other = make_dead(st, kind, 2, error="timeout")
    done = out_json(run("jobs", "retry", "--kind", kind, "--error", "DISK", "--yes", "-o", "json"))
    assert (done["done"], sorted(done["ids"])) == (2, sorted(str(i) for i in disk))
    assert states(st, disk) == [JobState.PENDING] * 2
    assert states(st, other) == [JobState.DEAD] * 2
    needs_filter = run("jobs", "delete", "--state", "dead", "--yes")
    assert needs_filter.exit_code == 2 and "filter options or --plan" in needs_filter.stderr
    deleted = run(
        "jobs", "delete", "--state", "dead", "--kind", kind, "--older-than", "0s", "--yes"
    )
    assert deleted.exit_code == 0 and "deleted 2 azync jobs" in deleted.stdout
    assert st.search_jobs(_search(kind, JobState.DEAD)) == []
    assert states(st, disk) == [JobState.PENDING] * 2


def _search(kind: str, state: JobState) -> JobSearch:
    return JobSearch(kind=kind, state=state)


def test_run_now_by_age_and_retry_by_event(run: Run, st: Any, kind: str) -> None:
    scheduled = enqueue(st, kind, 2, delay=timedelta(hours=1))
    young = run("jobs", "run-now", "--kind", kind, "--older-than", "1h", "--yes")
    assert young.exit_code == 3 and "nothing to run-now" in young.stderr
    done = run("jobs", "run-now", "--kind", kind, "--yes")
    assert done.exit_code == 0 and "expedited 2 azync jobs" in done.stdout
    assert states(st, scheduled) == [JobState.PENDING] * 2

    etype = f"evt.{kind}"
    st.register_subscriber(Subscriber(name=kind + "_sub", event_type=etype, max_attempts=1))
    first, second = PublishParams(type=etype, payload={}), PublishParams(type=etype, payload={})
    st.publish(first)
    st.publish(second)
    for job in st.dequeue_batch(Source.EVENT, DequeueParams(kind=kind + "_sub", limit=2)):
        st.dead(job.id, job.lease_token, "boom")
    retried = out_json(run("jobs", "retry", "--event", str(first.id)[:8], "--yes", "-o", "json"))
    assert retried["done"] == 1 and retried["selected"] == 1
    by_event = {j.event_id: j.state for j in st.search_jobs(_search(kind + "_sub", JobState.DEAD))}
    assert by_event == {second.id: JobState.DEAD}


def test_a_filter_matching_nothing_asks_nothing(run: Run, st: Any, kind: str) -> None:
    (job,) = enqueue(st, kind)
    # Off a terminal and without --yes: nothing to confirm, so no refusal (exit 4) but
    # the verb's own: nothing to act on (exit 3), before any question.
    none = run("jobs", "pause", "--kind", kind + "_none")
    assert (none.exit_code, none.stdout) == (3, "")
    assert "nothing to pause" in none.stderr and "--yes" not in none.stderr
    passed = run("jobs", "retry", "--kind", kind, "-o", "json")
    assert passed.exit_code == 3 and "nothing to retry" in passed.stderr
    assert st.find_job(job).state == JobState.PENDING


def test_guards_and_bad_filters_write_nothing(run: Run, st: Any, kind: str) -> None:
    (job,) = enqueue(st, kind)
    wrong_state = run("jobs", "retry", "--kind", kind, "--state", "pending", "--yes")
    assert wrong_state.exit_code == 2 and "acts on dead jobs" in wrong_state.stderr
    dag = DAGParams(name=f"dag_{kind}", tasks=[DAGTask(key="a", kind=kind)])
    st.create_dag(dag)
    owned = run("jobs", "pause", "--dag", str(dag.id), "--yes")
    assert owned.exit_code == 3 and "1 dag task: use dags pause" in owned.stderr
    both = run("jobs", "pause", str(job), "--kind", kind)
    assert both.exit_code == 2 and "not both" in both.stderr
    read_only = run("jobs", "pause", "--kind", kind, "--yes", root=["--read-only"])
    assert read_only.exit_code == 4
    dry = run("jobs", "pause", "--kind", kind, "--dry-run", root=["--read-only"])
    assert dry.exit_code == 0 and "will pause (held out of the ready set): 1" in dry.stdout
    assert st.find_job(job).state == JobState.PENDING
    assert st.search_jobs(_search(kind, JobState.PAUSED)) == []
