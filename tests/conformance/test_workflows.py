"""azync's ``RunWorkflowConformance`` (``driver/drivertest/workflow_conformance.go``) on both
backends, plus the
``list_workflow_executions`` extension.

One store per module, as in azync's suite: tests stay apart by unique workflow names,
and run in file order (the Vacuum test relies on every workflow job in the store being
exempt from ``vacuum_completed``).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from datetime import timedelta

import pytest

from qctl_kit.errors import Conflict, InvalidInput, NotFound
from qctl_store.types import (
    DequeueParams,
    JobFilter,
    JobState,
    ScheduleOperationParams,
    SignalParams,
    Source,
    WorkflowFilter,
    WorkflowStartParams,
    WorkflowState,
)
from tests.conformance.helpers import (
    AnyStore,
    dequeue_n,
    host_now,
    lease_one,
    list_ids,
    unique,
)

MINUTE = timedelta(minutes=1)


def start(store: AnyStore, name: str, **fields: object) -> uuid.UUID:
    """StartWorkflow with a fresh id; must be inserted (Go's ``startWAC``)."""
    p = WorkflowStartParams(name=name, **fields)  # type: ignore[arg-type]
    inserted, existing = store.start_workflow(p)
    assert inserted is True and existing is None
    return p.id


def lease_op(store: AnyStore, kind: str) -> tuple[uuid.UUID, uuid.UUID]:
    """DequeueBatch(workflow, {kind, 1, 1m, default 3, override}) of exactly one job."""
    leased = store.dequeue_batch(
        Source.WORKFLOW,
        DequeueParams(
            kind=kind, limit=1, lease=MINUTE, default_max_attempts=3, override_default=True
        ),
    )
    assert len(leased) == 1
    assert leased[0].lease_token is not None
    return leased[0].id, leased[0].lease_token


def test_start_and_get(store: AnyStore) -> None:
    id = start(store, "wfc_wac_start", version="1", input={"n": 1}, meta={"tenant": "t1"})
    view = store.get_workflow_execution(id)
    assert view.state == WorkflowState.RUNNING
    assert view.name == "wfc_wac_start"
    assert view.version == "1"
    assert view.input == {"n": 1}
    assert view.meta == {"tenant": "t1"}
    assert view.task_queue == "default"
    assert view.created_at is not None
    assert view.completed_at is None
    with pytest.raises(NotFound) as exc:
        store.get_workflow_execution(uuid.uuid4())
    assert exc.value.op == "get workflow execution"


def test_start_dedupe(store: AnyStore) -> None:
    def params() -> WorkflowStartParams:
        return WorkflowStartParams(name="wfc_wac_dedupe", business_idempotency_key="biz-1")

    first = params()
    assert store.start_workflow(first) == (True, None)
    assert store.start_workflow(params()) == (False, first.id)
    store.complete_workflow(first.id, None)
    inserted, _ = store.start_workflow(params())
    assert inserted is True, "a terminal workflow frees the business idempotency key"


def test_history(store: AnyStore) -> None:
    id = start(store, "wfc_wac_hist")
    assert store.append_history(id, "OperationScheduled", {"name": "op"}) == 2
    assert store.append_history(id, "OperationCompleted", {"name": "op", "ok": True}) == 3
    events = store.list_history(id)
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.type for e in events] == [
        "WorkflowStarted",
        "OperationScheduled",
        "OperationCompleted",
    ]
    assert events[2].payload == {"name": "op", "ok": True}
    assert all(e.workflow_id == id and e.created_at is not None for e in events)
    with pytest.raises(NotFound):
        store.append_history(uuid.uuid4(), "X", None)
    with pytest.raises(NotFound):
        store.list_history(uuid.uuid4())


def test_history_operation_result_dedupe(store: AnyStore) -> None:
    id = start(store, "wfc_wac_hist_dedupe")
    payload = {"name": "op", "version": "1", "execution_key": "exec-1", "result": "first"}
    seq1 = store.append_history(id, "OperationCompleted", payload)
    seq2 = store.append_history(id, "OperationCompleted", payload)
    assert seq1 == seq2
    completed = [e for e in store.list_history(id) if e.type == "OperationCompleted"]
    assert len(completed) == 1
    seq3 = store.append_history(
        id,
        "OperationCompleted",
        {"name": "op", "version": "1", "execution_key": "exec-2", "result": "second"},
    )
    assert seq3 != seq1
    # Only operation results dedupe: another type with the same key is a new record.
    assert store.append_history(id, "OperationScheduled", payload) == seq3 + 1


def test_signal_dedupe(store: AnyStore) -> None:
    id = start(store, "wfc_wac_signal")
    sig = SignalParams(workflow_id=id, name="approved", message_id="m1", payload={"by": "ops"})
    assert store.signal_workflow(sig) is True
    assert store.signal_workflow(sig) is False
    sig.message_id = "m2"
    assert store.signal_workflow(sig) is True
    with pytest.raises(NotFound) as exc:
        store.signal_workflow(SignalParams(workflow_id=uuid.uuid4(), name="x"))
    assert exc.value.op == "signal workflow"
    # Each delivered signal is recorded and schedules a wake task.
    received = [e for e in store.list_history(id) if e.type == "SignalReceived"]
    assert [e.payload for e in received] == [{"name": "approved", "payload": {"by": "ops"}}] * 2
    assert len(list_ids(store, Source.WORKFLOW, "$wf:wfc_wac_signal", JobState.PENDING)) == 3


def test_complete(store: AnyStore) -> None:
    completed = start(store, "wfc_wac_complete")
    store.complete_workflow(completed, {"ok": True})
    v = store.get_workflow_execution(completed)
    assert v.state == WorkflowState.SUCCEEDED
    assert v.result == {"ok": True}
    assert v.completed_at is not None

    failed = start(store, "wfc_wac_fail")
    store.fail_workflow(failed, "boom")
    v = store.get_workflow_execution(failed)
    assert v.state == WorkflowState.FAILED
    assert v.failure_reason == "boom"

    cancelled = start(store, "wfc_wac_cancel")
    store.cancel_workflow_execution(cancelled)
    assert store.get_workflow_execution(cancelled).state == WorkflowState.CANCELLED
    with pytest.raises(NotFound):
        store.cancel_workflow_execution(cancelled)

    suspended = start(store, "wfc_wac_suspend")
    store.suspend_workflow(suspended, "manual review")
    v = store.get_workflow_execution(suspended)
    assert v.state == WorkflowState.SUSPENDED
    assert v.failure_reason == "manual review"

    for call in (
        lambda: store.complete_workflow(uuid.uuid4(), None),
        lambda: store.fail_workflow(uuid.uuid4(), "x"),
        lambda: store.suspend_workflow(uuid.uuid4(), "x"),
    ):
        with pytest.raises(NotFound):
            call()

    resumed = start(store, "wfc_wac_resume")
    store.suspend_workflow(resumed, "hold")
    store.resume_workflow(resumed)
    v = store.get_workflow_execution(resumed)
    assert v.state == WorkflowState.RUNNING
    assert v.failure_reason == ""
    with pytest.raises(NotFound):
        store.resume_workflow(resumed)  # only a suspended execution resumes


def test_operation_uncertain(store: AnyStore) -> None:
    id = start(store, "wfc_wac_op_uncertain")
    key = f"{id}:1"
    job_id = store.schedule_operation(
        ScheduleOperationParams(
            workflow_id=id,
            kind="$op:probe@1",
            payload={"name": "probe", "version": "1"},
            execution_key=key,
            meta={
                "execution_key": key,
                "workflow_name": "wfc_wac_op_uncertain",
                "op_name": "probe",
                "op_version": "1",
            },
            max_attempts=3,
        )
    )
    again = store.schedule_operation(
        ScheduleOperationParams(workflow_id=id, kind="$op:probe@1", payload={}, execution_key=key)
    )
    assert again == job_id

    leased_id, lease_token = lease_op(store, "$op:probe@1")
    assert leased_id == job_id
    store.mark_uncertain(job_id, lease_token, "ambiguous")
    assert store.get_workflow_execution(id).state == WorkflowState.SUSPENDED
    job = store.get_job(Source.WORKFLOW, job_id)
    assert job.state == JobState.UNCERTAIN
    assert job.last_error == "ambiguous"

    assert store.resolve_uncertain(job_id, "complete", {"ok": True}) == (
        id,
        "wfc_wac_op_uncertain",
    )
    assert store.get_workflow_execution(id).state == WorkflowState.RUNNING
    assert store.get_job(Source.WORKFLOW, job_id).state == JobState.SUCCEEDED


def test_an_execution_key_held_by_another_workflow_is_a_conflict(store: AnyStore) -> None:
    first, second = start(store, "wfc_wac_key_a"), start(store, "wfc_wac_key_b")
    key = f"{first}:held"
    op = ScheduleOperationParams(
        workflow_id=first, kind="$op:held@1", payload={}, execution_key=key
    )
    store.schedule_operation(op)
    with pytest.raises(Conflict, match="is held by a live job of another workflow"):
        store.schedule_operation(
            ScheduleOperationParams(
                workflow_id=second, kind="$op:held@1", payload={}, execution_key=key
            )
        )
    jobs, total = store.list_jobs(Source.WORKFLOW, JobFilter(kind="$op:held@1"), 0, 0)
    assert (total, {j.run_id for j in jobs}) == (1, {first}), "the refused insert wrote nothing"


def test_resolve_uncertain_fencing(store: AnyStore) -> None:
    def schedule_and_mark_uncertain(name: str, kind: str) -> uuid.UUID:
        id = start(store, name)
        job_id = store.schedule_operation(
            ScheduleOperationParams(workflow_id=id, kind=kind, payload={}, max_attempts=3)
        )
        _, lease_token = lease_op(store, kind)
        store.mark_uncertain(job_id, lease_token, "ambiguous")
        return job_id

    with pytest.raises(NotFound) as exc:
        store.resolve_uncertain(uuid.uuid4(), "complete", {})
    assert exc.value.op == "resolve uncertain"

    job_id = schedule_and_mark_uncertain("wfc_wac_resolve_twice", "$op:twice@1")
    store.resolve_uncertain(job_id, "complete", {"n": 1})
    with pytest.raises(NotFound):
        store.resolve_uncertain(job_id, "complete", {"n": 2})
    job = store.get_job(Source.WORKFLOW, job_id)
    assert job.state == JobState.SUCCEEDED
    assert job.result == {"n": 1}

    job_id = schedule_and_mark_uncertain("wfc_wac_resolve_stale", "$op:stale@1")
    store.resolve_uncertain(job_id, "retry")
    _, lease_token = lease_op(store, "$op:stale@1")
    with pytest.raises(NotFound):
        store.resolve_uncertain(job_id, "complete", {"stale": True})
    job = store.get_job(Source.WORKFLOW, job_id)
    assert job.state == JobState.ACTIVE
    assert job.lease_token == lease_token


def test_resolve_unknown_decision_is_invalid_input(store: AnyStore) -> None:
    # A plain error in Go, not a not-found; checked before anything is read.
    with pytest.raises(InvalidInput):
        store.resolve_uncertain(uuid.uuid4(), "maybe")


def test_schedule_operation_defaults(store: AnyStore) -> None:
    name = unique("wfc_op_defaults")
    id = start(store, name)
    kind = f"$op:{name}@1"
    job_id = store.schedule_operation(ScheduleOperationParams(workflow_id=id, kind=kind))
    job = store.get_job(Source.WORKFLOW, job_id)
    assert (job.max_attempts, job.max_attempts_explicit, job.run_id) == (25, True, id)
    assert job.state == JobState.PENDING
    with pytest.raises(NotFound) as exc:
        store.schedule_operation(ScheduleOperationParams(workflow_id=uuid.uuid4(), kind=kind))
    assert exc.value.op == "schedule operation"


def test_schedule_task(store: AnyStore) -> None:
    name = unique("wfc_task")
    id = start(store, name)
    kind = f"$wf:{name}"
    store.schedule_task(id, kind)
    store.schedule_task(id, kind, host_now() + timedelta(hours=1))
    assert len(list_ids(store, Source.WORKFLOW, kind, JobState.PENDING)) == 2
    assert len(list_ids(store, Source.WORKFLOW, kind, JobState.SCHEDULED)) == 1
    with pytest.raises(NotFound) as exc:
        store.schedule_task(uuid.uuid4(), kind)
    assert exc.value.op == "schedule workflow task"


def test_vacuum(store: AnyStore) -> None:
    id = start(store, "wfc_wac_vacuum")
    store.complete_workflow(id, {"ok": True})
    assert store.vacuum_workflows(timedelta(0)) == 0
    store.get_workflow_execution(id)

    time.sleep(0.020)
    jobs = dequeue_n(store, Source.WORKFLOW, "$wf:wfc_wac_vacuum", 1)
    if len(jobs) == 1:
        assert jobs[0].lease_token is not None
        store.ack(jobs[0].id, jobs[0].lease_token)
    assert store.vacuum_completed(Source.WORKFLOW, timedelta(milliseconds=1)) == 0

    assert store.vacuum_workflows(timedelta(milliseconds=1)) >= 1
    with pytest.raises(NotFound):
        store.get_workflow_execution(id)
    with contextlib.suppress(NotFound):
        assert store.list_history(id) == []


def test_list_stalled_workflows(store: AnyStore) -> None:
    start(store, "wfc_wac_stall_healthy")
    for name in ("wfc_wac_stall_gone", "wfc_wac_stall_recent"):
        start(store, name)
        jobs, _ = store.list_jobs(Source.WORKFLOW, JobFilter(kind=f"$wf:{name}"), 0, 10)
        assert len(jobs) == 1, "StartWorkflow must have scheduled exactly one task"
        store.delete_job(Source.WORKFLOW, jobs[0].id, jobs[0].state)

    names = {w.name for w in store.list_stalled_workflows(timedelta(0), 100)}
    assert "wfc_wac_stall_gone" in names
    assert "wfc_wac_stall_healthy" not in names
    names = {w.name for w in store.list_stalled_workflows(timedelta(hours=24), 100)}
    assert "wfc_wac_stall_gone" not in names
    # limit <= 0 means azync's default of 100, never "nothing".
    assert store.list_stalled_workflows(timedelta(0), 0)


def test_list_workflow_executions(store: AnyStore) -> None:
    name = unique("wfc_list")
    ids = []
    for _ in range(3):
        ids.append(start(store, name))
        time.sleep(0.004)
    store.fail_workflow(ids[0], "x")

    rows, total = store.list_workflow_executions(WorkflowFilter(name=name))
    assert total == 3
    assert [r.id for r in rows] == ids[::-1], "newest first"

    rows, total = store.list_workflow_executions(WorkflowFilter(name=name), offset=1, limit=1)
    assert (total, [r.id for r in rows]) == (3, [ids[1]])

    rows, total = store.list_workflow_executions(
        WorkflowFilter(name=name, state=WorkflowState.RUNNING)
    )
    assert (total, [r.id for r in rows]) == (2, [ids[2], ids[1]])

    rows, total = store.list_workflow_executions(WorkflowFilter(name=name), offset=10)
    assert (rows, total) == ([], 3)

    _, everything = store.list_workflow_executions(WorkflowFilter())
    assert everything >= 3


def test_workflow_task_is_a_plain_job(store: AnyStore) -> None:
    # The $wf task of a started workflow is leased and settled through the plain Store.
    name = unique("wfc_task_lease")
    id = start(store, name)
    job = lease_one(store, Source.WORKFLOW, f"$wf:{name}")
    assert job.run_id == id and job.source == Source.WORKFLOW
    assert job.lease_token is not None
    store.ack(job.id, job.lease_token)


def test_bad_input_is_rejected_before_writing(store: AnyStore) -> None:
    with pytest.raises(InvalidInput):
        store.list_workflow_executions(WorkflowFilter(state="sleeping"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.start_workflow(WorkflowStartParams(name=""))
    with pytest.raises(InvalidInput):
        store.start_workflow(WorkflowStartParams(name=unique("wfc_bad"), input={1, 2}))


def test_mark_uncertain_on_a_settled_execution(store: AnyStore) -> None:
    # azync's one autocommit statement: the fenced job update stands, but with no
    # running or suspended execution to suspend the call is not-found.
    name = unique("wfc_uncertain_settled")
    id = start(store, name)
    kind = f"$op:{name}@1"
    job_id = store.schedule_operation(ScheduleOperationParams(workflow_id=id, kind=kind))
    _, lease_token = lease_op(store, kind)
    store.complete_workflow(id, None)
    with pytest.raises(NotFound) as exc:
        store.mark_uncertain(job_id, lease_token, "late")
    assert exc.value.op == "mark uncertain"
    assert store.get_job(Source.WORKFLOW, job_id).state == JobState.UNCERTAIN
    assert store.get_workflow_execution(id).state == WorkflowState.SUCCEEDED


def test_negative_durations_are_rejected(store: AnyStore) -> None:
    # Negative durations are bad input everywhere in qctl_store (a retention of zero
    # still "removes nothing", as the contract says).
    id = start(store, unique("wfc_negative"))
    store.complete_workflow(id, None)
    with pytest.raises(InvalidInput, match="retention"):
        store.vacuum_workflows(-MINUTE)
    with pytest.raises(InvalidInput, match="older_than"):
        store.list_stalled_workflows(-MINUTE, 1)
    assert store.vacuum_workflows(timedelta(0)) == 0
    store.get_workflow_execution(id)


def _enqueued(store: AnyStore, kind: str) -> int:
    _, days = store.stats(Source.WORKFLOW, kind)
    return sum(d.enqueued for d in days)


def test_enqueued_stats(store: AnyStore) -> None:
    # azync counts as enqueued: a start, the signal wake task, operations and tasks;
    # mark_uncertain and resolve_uncertain bump nothing.
    name = unique("wfc_stats")
    wf_kind, op_kind = f"$wf:{name}", f"$op:{name}@1"
    id = start(store, name)
    assert _enqueued(store, wf_kind) == 1
    assert store.signal_workflow(SignalParams(workflow_id=id, name="go"))
    assert _enqueued(store, wf_kind) == 2
    store.schedule_task(id, wf_kind)
    assert _enqueued(store, wf_kind) == 3
    job_id = store.schedule_operation(ScheduleOperationParams(workflow_id=id, kind=op_kind))
    assert _enqueued(store, op_kind) == 1
    _, lease_token = lease_op(store, op_kind)
    store.mark_uncertain(job_id, lease_token, "?")
    store.resolve_uncertain(job_id, "retry")
    _, days = store.stats(Source.WORKFLOW, op_kind)
    totals = [
        sum(getattr(d, c) for d in days) for c in ("enqueued", "processed", "failed", "reaped")
    ]
    assert totals == [1, 0, 0, 0]
    # A signal to a settled execution records it but schedules no task.
    store.complete_workflow(id, None)
    assert store.signal_workflow(SignalParams(workflow_id=id, name="late"))
    assert _enqueued(store, wf_kind) == 3


def test_start_workflow_wakes_workers(store: AnyStore) -> None:
    sub = store.wake()
    assert sub is not None
    name = unique("wfc_wake")
    try:
        # The PostgreSQL listener may not be up yet when the first start commits, and
        # wakes carry no opening signal: start until one wake arrives.
        for _ in range(20):
            start(store, name)
            wake = sub.get(timeout=0.5)
            while wake is not None and wake.kind != f"$wf:{name}":
                wake = sub.get(timeout=0.5)
            if wake is not None:
                assert wake.source == Source.WORKFLOW
                return
        pytest.fail("start_workflow never woke the $wf partition")
    finally:
        sub.close()


def test_vacuum_cascades_to_the_runs_jobs(store: AnyStore) -> None:
    name = unique("wfc_vacuum_cascade")
    id = start(store, name)
    store.signal_workflow(SignalParams(workflow_id=id, name="s", message_id="m"))
    store.cancel_workflow_execution(id)
    time.sleep(0.005)
    assert store.vacuum_workflows(timedelta(milliseconds=1)) >= 1
    jobs, total = store.list_jobs(Source.WORKFLOW, JobFilter(kind=f"$wf:{name}"), 0, 10)
    assert (jobs, total) == ([], 0)
