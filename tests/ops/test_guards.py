"""azync's manager guards in the operations layer, on both backends: job verbs act on
the queue and event sources, and the verb engine passes a DAG task or a workflow
operation over under the verb that owns it (DAG verbs, workflow verbs). Each refusal
leaves the row as it was and no Go worker would lease it (azync's own dequeue
predicate, see conftest)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from qctl.core import verbs
from qctl.core.errors import NoSuchName, WrongState, WrongVerb
from qctl.core.verbs import Selection, Verb
from qctl.systems.azync.ops import dags as ops_dags
from qctl.systems.azync.ops import events as ops_events
from qctl.systems.azync.ops import jobs as ops_jobs
from qctl.systems.azync.ops import workflows as ops_wf
from qctl_kit.errors import InvalidInput
from qctl_store.types import (
    KIND_SLEEP,
    DAGParams,
    DAGState,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    JobSearch,
    JobState,
    OnFailurePolicy,
    PublishParams,
    ReplayFilter,
    ScheduleOperationParams,
    Source,
    Subscriber,
    UncertainDecision,
    WorkflowStartParams,
)
from tests.conformance.helpers import lease_one, token, unique
from tests.ops.conftest import go_would_lease


@pytest.fixture(scope="module")
def schema(module_db: tuple[str, str, Path]) -> str:
    return module_db[1]


def dead_dag_task(store: Any, policy: OnFailurePolicy) -> tuple[uuid.UUID, uuid.UUID, str]:
    """A one-task DAG whose task died and whose failure policy ran: (dag, task, kind)."""
    kind = unique("dagk")
    p = DAGParams(name=unique("dag"), tasks=[DAGTask("a", kind, max_attempts=1)], on_failure=policy)
    store.create_dag(p)
    job = lease_one(store, Source.DAG, kind)
    store.dead(job.id, token(job), "boom")
    store.apply_failure_policy()
    return p.id, job.id, kind


def by_ids(*ids: uuid.UUID) -> Selection:
    return Selection.of_ids([str(i) for i in ids])


def by_filter(search: JobSearch) -> Selection:
    return Selection(filter=ops_jobs.job_filter(search))


def act(store: Any, verb: Verb[Any], selection: Selection) -> verbs.Result:
    """The verb as both front ends run it: planned, then run."""
    return verbs.run(store, verb, verbs.plan(store, verb, selection, "guards"))


def test_job_verbs_pass_over_a_dag_task_naming_the_dag_verb(store: Any, schema: str) -> None:
    _dag_id, task_id, _kind = dead_dag_task(store, OnFailurePolicy.SUSPEND)
    owners = [
        (ops_jobs.RETRY, "dags retry"),
        (ops_jobs.PAUSE, "dags pause"),
        (ops_jobs.ARCHIVE, "dags cancel"),
        (ops_jobs.DELETE, "dags cancel"),
    ]
    for verb, owner in owners:
        with pytest.raises(WrongState) as refused:
            act(store, verb, by_ids(task_id))
        assert f"1 dag task: use {owner}" in str(refused.value)
        assert "\n" not in str(refused.value)
    assert store.find_job(task_id).state == JobState.DEAD
    assert not go_would_lease(store, schema, task_id)


def test_marked_queue_job_and_dag_tasks_retry_the_job_and_count_the_tasks(
    store: Any, schema: str
) -> None:
    """Marking 1 dead queue job and 2 dead DAG tasks and pressing retry retries the job
    and says why the tasks were not: before, they stayed dead without a word."""
    kind = unique("mixk")
    p = EnqueueParams(kind=kind, max_attempts=1)
    store.enqueue(p)
    job = lease_one(store, Source.QUEUE, kind)
    store.dead(job.id, token(job), "boom")
    tasks = [dead_dag_task(store, OnFailurePolicy.SUSPEND)[1] for _ in range(2)]
    marks = Selection.of_ids([str(i) for i in (p.id, *tasks)], by="marks")
    result = act(store, ops_jobs.RETRY, marks)
    assert (result.done, result.ids) == (1, [str(p.id)])
    assert result.skipped == {"dag task: use dags retry": 2}
    assert result.words(ops_jobs.RETRY).endswith("skipped 2 (2 dag task: use dags retry)")
    assert [store.find_job(t).state for t in tasks] == [JobState.DEAD, JobState.DEAD]
    assert not any(go_would_lease(store, schema, t) for t in tasks)


def test_retry_all_dead_skips_a_compensated_saga_task(store: Any, schema: str) -> None:
    """Without --source: the queue and event sources only. Before, the dead task of a
    failed (already compensated) saga was re-run."""
    dag_id, task_id, kind = dead_dag_task(store, OnFailurePolicy.CANCEL)
    assert store.get_dag(dag_id).state in (DAGState.FAILED, DAGState.COMPENSATING)
    for search in (JobSearch(kind=kind), JobSearch(source=Source.DAG, kind=kind)):
        with pytest.raises(WrongState, match="1 dag task: use dags retry"):
            act(store, ops_jobs.RETRY, by_filter(search))
    assert store.find_job(task_id).state == JobState.DEAD
    assert not go_would_lease(store, schema, task_id)
    with pytest.raises(WrongVerb, match="vacuum dags"):
        ops_jobs.vacuum_dead(store, timedelta(0), source=Source.DAG)
    assert ops_jobs.vacuum_dead(store, timedelta(0), kind=kind).count == 0
    assert store.find_job(task_id).state == JobState.DEAD


def test_resume_refuses_a_task_of_a_paused_dag(store: Any, schema: str) -> None:
    """Before, `jobs resume` made the task leasable while its DAG stayed paused."""
    kind = unique("pk")
    p = DAGParams(name=unique("dag"), tasks=[DAGTask("a", kind)])
    store.create_dag(p)
    ops_dags.pause(store, p.id, "look")
    (task,) = store.dag_tasks(p.id)
    assert task.state == JobState.PAUSED
    with pytest.raises(WrongState, match="1 dag task: use dags retry"):
        act(store, ops_jobs.RESUME, by_ids(task.id))
    assert store.find_job(task.id).state == JobState.PAUSED
    assert not go_would_lease(store, schema, task.id)
    assert store.get_dag(p.id).state == DAGState.PAUSED
    ops_dags.retry(store, p.id)  # the verb that owns it
    assert go_would_lease(store, schema, task.id)


def test_run_now_stays_allowed_on_a_dag_task(store: Any, schema: str) -> None:
    """As azync's dag/manager.go RunNow does."""
    kind = unique("rk")
    p = DAGParams(name=unique("dag"), tasks=[DAGTask("a", kind, max_attempts=3)])
    store.create_dag(p)
    job = lease_one(store, Source.DAG, kind)
    store.reschedule(job.id, token(job), timedelta(hours=1), "later")
    assert store.find_job(job.id).state == JobState.SCHEDULED
    assert not go_would_lease(store, schema, job.id)
    planned = verbs.plan(store, ops_jobs.RUN_NOW, by_ids(job.id), "guards")
    assert planned.states == {"scheduled": 1}
    assert verbs.run(store, ops_jobs.RUN_NOW, planned).ids == [str(job.id)]
    assert go_would_lease(store, schema, job.id)


def test_run_now_refuses_a_sleep_timer_and_names_dags_signal(store: Any, schema: str) -> None:
    """Only a scheduled ``$sleep`` completes (azync's ``CompleteDueSleeps``); run-now
    would make it pending, which no worker runs, and strand its DAG. azync wakes a timer
    early with a signal of its name (``deliverSignalNowSQL``, driver/azyncpgx/dag_store.go)."""
    p = DAGParams(
        name=unique("dag"), tasks=[DAGTask("nap", KIND_SLEEP, sleep_for=timedelta(hours=1))]
    )
    store.create_dag(p)
    (timer,) = store.dag_tasks(p.id)
    assert timer.state == JobState.SCHEDULED
    for selection in (by_ids(timer.id), by_filter(JobSearch(dag_id=p.id))):
        with pytest.raises(WrongState, match="1 dag timer: use dags signal"):
            act(store, ops_jobs.RUN_NOW, selection)
    # The write refuses it too, whatever a plan said.
    assert store.run_now_jobs([timer.id], [Source.DAG]) == []
    assert store.find_job(timer.id).state == JobState.SCHEDULED
    ops_dags.signal(store, p.id, "nap")  # the verb that wakes it
    assert store.complete_due_sleeps() == 1
    assert store.find_job(timer.id).state == JobState.SUCCEEDED


def uncertain_operation(store: Any) -> tuple[uuid.UUID, uuid.UUID, str]:
    name = unique("wf")
    start = WorkflowStartParams(name=name, version="v1", input={})
    store.start_workflow(start)
    kind = unique("op")
    meta = {"op_name": "charge", "op_version": "1", "workflow_name": name}
    op_id = store.schedule_operation(
        ScheduleOperationParams(workflow_id=start.id, kind=kind, meta=meta, max_attempts=1)
    )
    (op,) = store.dequeue_batch(Source.WORKFLOW, DequeueParams(kind=kind, limit=1))
    store.mark_uncertain(op.id, op.lease_token, "timeout")
    return start.id, op_id, kind


def test_a_resolved_failed_operation_is_never_re_run(store: Any, schema: str) -> None:
    """Before, `retry --all-dead` re-ran an operation resolved as failed: its side
    effect would run twice."""
    _wf_id, op_id, kind = uncertain_operation(store)
    ops_wf.resolve(store, op_id, UncertainDecision.FAIL)
    state = store.find_job(op_id).state
    assert state not in (JobState.PENDING, JobState.UNCERTAIN)
    for search in (JobSearch(kind=kind), JobSearch(source=Source.WORKFLOW)):
        with pytest.raises(WrongState):
            act(store, ops_jobs.RETRY, by_filter(search))
    assert store.find_job(op_id).state == state
    if state == JobState.DEAD:
        with pytest.raises(WrongState, match="workflow job: use workflows resolve"):
            act(store, ops_jobs.RETRY, by_ids(op_id))
    assert not go_would_lease(store, schema, op_id)


def test_resolve_appends_history_and_schedules_the_workflow_task(store: Any) -> None:
    wf_id, op_id, _ = uncertain_operation(store)
    plan = ops_wf.resolve(store, op_id, UncertainDecision.COMPLETE, {"ok": 1}, dry_run=True)
    assert (plan.dry_run, plan.history_event) == (True, "OperationCompleted")
    assert store.find_job(op_id).state == JobState.UNCERTAIN  # the dry run wrote nothing
    done = ops_wf.resolve(store, op_id, UncertainDecision.COMPLETE, {"ok": 1})
    assert done.workflow_id == wf_id
    history = store.list_history(wf_id)
    assert history[-1].type == "OperationCompleted"
    assert history[-1].payload == {"name": "charge", "version": "1", "result": {"ok": 1}}
    tasks = store.search_jobs(JobSearch(source=Source.WORKFLOW, run_id=wf_id))
    assert any(j.kind.startswith("$wf:") and j.state == JobState.PENDING for j in tasks)


def test_resolve_given_a_workflow_id_names_the_operation(store: Any) -> None:
    wf_id, op_id, _ = uncertain_operation(store)
    with pytest.raises(WrongVerb) as refused:
        ops_wf.resolve(store, wf_id, UncertainDecision.RETRY)
    assert "is a workflow execution, not an operation" in str(refused.value)
    assert str(op_id) in str(refused.value)
    assert store.find_job(op_id).state == JobState.UNCERTAIN


def test_state_refusals_say_why(store: Any) -> None:
    kind = unique("sk")
    p = EnqueueParams(kind=kind)
    store.enqueue(p)
    job = lease_one(store, Source.QUEUE, kind)
    store.ack(job.id, token(job))
    with pytest.raises(WrongState) as refused:
        act(store, ops_jobs.PAUSE, by_ids(p.id))
    assert str(refused.value) == "nothing to pause: skipped 1 (1 succeeded)"
    with pytest.raises(WrongState, match="nothing to retry: skipped 1 \\(1 succeeded\\)"):
        act(store, ops_jobs.RETRY, by_ids(p.id))


def test_delete_refuses_active_jobs(store: Any, schema: str) -> None:
    """A running job's row belongs to its worker (azync's queue/manager.go Delete).
    Before, `jobs delete ID --state active` deleted it, and so did the bulk form."""
    kind = unique("del_active")
    p = EnqueueParams(kind=kind)
    store.enqueue(p)
    job = lease_one(store, Source.QUEUE, kind)
    with pytest.raises(InvalidInput, match="does not delete active jobs"):
        ops_jobs.deleting([JobState.ACTIVE])
    for verb in (ops_jobs.DELETE, ops_jobs.deleting([JobState.PENDING])):
        with pytest.raises(WrongState, match="1 active: a worker holds it"):
            act(store, verb, by_ids(p.id))
    # A job leased between the plan and the write is left to its worker.
    assert store.delete_jobs([p.id], [Source.QUEUE], [JobState.PENDING]) == []
    got = store.find_job(p.id)
    assert (got.state, got.lease_token) == (JobState.ACTIVE, job.lease_token)


def test_typos_are_not_silent_success(store: Any) -> None:
    kind = unique("tk")
    p = DAGParams(name=unique("dag"), tasks=[DAGTask("a", kind)])
    store.create_dag(p)
    with pytest.raises(NoSuchName, match="waits for a signal named 'wrongname'"):
        ops_dags.signal(store, p.id, "wrongname")
    with pytest.raises(NoSuchName, match="no subscriber named 'nosuch'"):
        ops_events.replay(store, ReplayFilter(subscriber="nosuch"))
    with pytest.raises(NoSuchName, match="no subscriber named"):
        ops_events.delete_subscriber(store, unique("nosub"))


def test_state_refusal_names_the_wanted_states_in_their_enum_order() -> None:
    """One check serves job, DAG, workflow and DBOS verbs: a set of states reads in the
    enum's order, plain strings in the order given."""
    from qctl.core.errors import require_state

    require_state("cancel dag", "DAG 1234abcd", DAGState.RUNNING, {DAGState.RUNNING}, "cancel")
    with pytest.raises(WrongState) as dag:
        require_state(
            "pause dag",
            "DAG 1234abcd",
            DAGState.SUSPENDED,
            frozenset({DAGState.PAUSED, DAGState.RUNNING}),
            "pause",
        )
    assert str(dag.value) == "DAG 1234abcd is suspended; pause needs running or paused"
    assert dag.value.op == "pause dag"
    with pytest.raises(WrongState) as dbos:
        require_state("resume", "workflow w1", "SUCCESS", ("CANCELLED", "ERROR"), "resume")
    assert str(dbos.value) == "workflow w1 is SUCCESS; resume needs CANCELLED or ERROR"


def test_drain_deletes_paused_deliveries_too(store: Any) -> None:
    """As azync's event/manager.go DrainSubscriber: pending, scheduled and paused (a
    paused delivery kept would pin its event in the ledger, Retain skipping it)."""
    sub, etype = unique("sub"), unique("ev")
    store.register_subscriber(Subscriber(name=sub, event_type=etype))
    for _ in range(2):
        store.publish(PublishParams(type=etype, payload={}))
    first, _second = store.search_jobs(JobSearch(source=Source.EVENT, kind=sub), limit=2)
    store.pause_job(Source.EVENT, first.id)
    plan = ops_events.delete_subscriber(store, sub, drain=True, dry_run=True)
    assert plan.drained == 2
    done = ops_events.delete_subscriber(store, sub, drain=True)
    assert (done.count, done.drained) == (1, 2)
    assert store.search_jobs(JobSearch(source=Source.EVENT, kind=sub), limit=5) == []


def test_a_filter_matching_only_dag_tasks_names_the_dag_verb(store: Any) -> None:
    """By id and by filter alike the refusal names the DAG verb (before, a filter said
    "would retry 0")."""
    _dag_id, task_id, kind = dead_dag_task(store, OnFailurePolicy.SUSPEND)
    with pytest.raises(WrongState, match="skipped 1 \\(1 dag task: use dags retry\\)"):
        act(store, ops_jobs.RETRY, by_filter(JobSearch(kind=kind)))
    assert store.find_job(task_id).state == JobState.DEAD
    with pytest.raises(WrongState, match=r"^nothing to retry$"):
        act(store, ops_jobs.RETRY, by_filter(JobSearch(kind=unique("none"))))
