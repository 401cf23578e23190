"""Property tests of the DAG scheduler on both backends (hypothesis).

Random acyclic DAG shapes with random outcomes per task (succeed, skip, dead), random
compensations, random ``ignore_dead_deps`` and a random policy are driven by workers
and scheduler passes until nothing changes. Whatever the shape:

- the DAG ends terminal or suspended (never stuck running or compensating);
- no task is ever leased before its dependencies are satisfied;
- a compensation runs only for a task that succeeded (never a skipped or dead one);
- compensations run in reverse completion order of the tasks they undo;
- a DAG whose tasks all succeeded or skipped ends succeeded;
- a signal sent before its task waits is delivered once the task is promoted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from qctl_store.types import (
    KIND_SIGNAL,
    KIND_SLEEP,
    TASK_KEY_COMPENSATION_PREFIX,
    DAGDep,
    DAGParams,
    DAGSignalParams,
    DAGState,
    Job,
    JobState,
    OnFailurePolicy,
    Source,
)
from tests.conformance.helpers import AnyStore, dequeue_n, token, wf_task

# Weighted so that chains of several compensations behind a failure are common.
# "signal" and "sleep" tasks are the internal kinds: a $signal task whose signal is
# sent right after creation (buffered while the task is blocked, delivered at once
# when it already waits) and a zero-length $sleep.
OUTCOMES = ("succeed", "succeed", "skip", "dead", "dead", "signal", "sleep")
INTERNAL = {"signal": KIND_SIGNAL, "sleep": KIND_SLEEP}
SETTLED_OK = {JobState.SUCCEEDED, JobState.SKIPPED}
MAX_ROUNDS = 60


@dataclass
class Shape:
    outcomes: list[str]
    compensates: list[bool]
    tolerant: list[bool]
    edges: list[tuple[int, int]]
    """(task, depends_on) with depends_on < task: acyclic by construction."""
    policy: OnFailurePolicy
    comp_fails: bool
    operator_compensates: bool


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    n = draw(st.integers(min_value=1, max_value=6))
    pairs = [(j, i) for j in range(n) for i in range(j)]
    edges = [pair for pair in pairs if draw(st.booleans())] if pairs else []
    return Shape(
        outcomes=draw(st.lists(st.sampled_from(OUTCOMES), min_size=n, max_size=n)),
        compensates=draw(st.lists(st.sampled_from((True, True, False)), min_size=n, max_size=n)),
        tolerant=draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        edges=edges,
        policy=draw(st.sampled_from(list(OnFailurePolicy))),
        comp_fails=draw(st.sampled_from((False, False, True))),
        operator_compensates=draw(st.booleans()),
    )


@dataclass
class Run:
    dag_id: uuid.UUID
    shape: Shape
    prefix: str
    comp_order: list[str] = field(default_factory=list)
    """Original task keys, in the order their compensations were leased."""


def create(store: AnyStore, shape: Shape) -> Run:
    prefix = f"prop_{uuid.uuid4().hex[:10]}"
    tasks = [
        wf_task(
            f"t{i}",
            INTERNAL.get(outcome, f"{prefix}_t{i}"),
            payload=None if outcome in INTERNAL else {},
            signal_name=f"sig_t{i}" if outcome == "signal" else "",
            max_attempts=1,
            compensation_kind=f"{prefix}_undo_t{i}" if shape.compensates[i] else "",
            compensation_payload={"undo": i} if shape.compensates[i] else None,
            ignore_dead_deps=shape.tolerant[i],
        )
        for i, outcome in enumerate(shape.outcomes)
    ]
    p = DAGParams(
        name=prefix,
        tasks=tasks,
        deps=[DAGDep(f"t{a}", f"t{b}") for a, b in shape.edges],
        on_failure=shape.policy,
    )
    assert store.create_dag(p) == (True, None)
    for i, outcome in enumerate(shape.outcomes):
        if outcome == "signal":
            _, dedup = store.signal(
                DAGSignalParams(dag_id=p.id, name=f"sig_t{i}", payload={"i": i})
            )
            assert dedup is False
    return Run(dag_id=p.id, shape=shape, prefix=prefix)


def satisfied(task: Job, dep: Job) -> bool:
    if dep.state in SETTLED_OK:
        return True
    return task.ignore_dead_deps and dep.state in (JobState.DEAD, JobState.CANCELLED)


def completed_at(task: Job) -> datetime:
    assert task.completed_at is not None, f"{task.task_key} is {task.state} with no completed_at"
    return task.completed_at


def check_lease(store: AnyStore, run: Run, job: Job) -> None:
    tasks = {t.task_key: t for t in store.dag_tasks(run.dag_id)}
    task = tasks[job.task_key]
    for edge in store.dag_deps(run.dag_id):
        if edge.task_key == job.task_key:
            dep = tasks[edge.depends_on_key]
            assert satisfied(task, dep), (
                f"{job.task_key} leased while its dependency {dep.task_key} is {dep.state}"
            )
    if job.task_key.startswith(TASK_KEY_COMPENSATION_PREFIX):
        original = tasks[job.task_key.removeprefix(TASK_KEY_COMPENSATION_PREFIX)]
        assert original.state == JobState.SUCCEEDED, (
            f"compensation {job.task_key} runs for a task that is {original.state}"
        )


def work(store: AnyStore, run: Run) -> int:
    """Lease and settle every runnable task of the DAG once; returns how many ran."""
    ran = 0
    for i, outcome in enumerate(run.shape.outcomes):
        kinds = [(f"{run.prefix}_undo_t{i}", True)]
        if outcome not in INTERNAL:
            kinds.insert(0, (f"{run.prefix}_t{i}", False))
        for kind, is_comp in kinds:
            for job in dequeue_n(store, Source.DAG, kind, 10):
                ran += 1
                check_lease(store, run, job)
                if is_comp:
                    run.comp_order.append(f"t{i}")
                    if run.shape.comp_fails:
                        store.dead(job.id, token(job), "undo failed")
                    else:
                        store.ack_task_result(job.id, token(job), None)
                elif outcome == "succeed":
                    store.ack_task_result(job.id, token(job), {"i": i})
                elif outcome == "skip":
                    store.skip(job.id, token(job), "nothing to do")
                else:
                    store.dead(job.id, token(job), "boom")
    return ran


def scheduler_pass(store: AnyStore) -> None:
    store.promote_unblocked()
    store.deliver_buffered_signals()
    store.complete_due_sleeps()
    store.apply_failure_policy()
    store.complete_dags()


def snapshot(store: AnyStore, run: Run) -> tuple[object, ...]:
    tasks = sorted((t.task_key, t.state) for t in store.dag_tasks(run.dag_id))
    return (store.get_dag(run.dag_id).state, *tasks)


def drive(store: AnyStore, run: Run) -> None:
    before = snapshot(store, run)
    for _ in range(MAX_ROUNDS):
        ran = work(store, run)
        scheduler_pass(store)
        after = snapshot(store, run)
        if not ran and after == before:
            return
        before = after
    raise AssertionError(f"DAG {run.dag_id} did not quiesce: {before}")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(shape=shapes())
def test_dags_always_quiesce_safely(store: AnyStore, shape: Shape) -> None:
    run = create(store, shape)
    drive(store, run)
    view = store.get_dag(run.dag_id)
    if view.state == DAGState.SUSPENDED and shape.operator_compensates:
        store.compensate_dag(run.dag_id)
        drive(store, run)
        view = store.get_dag(run.dag_id)

    assert view.state in (
        DAGState.SUCCEEDED,
        DAGState.FAILED,
        DAGState.CANCELLED,
        DAGState.SUSPENDED,
    ), f"DAG stuck in {view.state}"
    event(f"ends {view.state}")

    tasks = {t.task_key: t for t in store.dag_tasks(run.dag_id)}
    originals = [t for k, t in tasks.items() if not k.startswith(TASK_KEY_COMPENSATION_PREFIX)]
    if all(t.state in SETTLED_OK for t in originals):
        assert view.state == DAGState.SUCCEEDED
    if view.state == DAGState.SUCCEEDED:
        assert all(t.state in SETTLED_OK for t in tasks.values())
    for i, outcome in enumerate(shape.outcomes):
        if outcome == "signal" and tasks[f"t{i}"].state == JobState.SUCCEEDED:
            assert tasks[f"t{i}"].result == {"i": i}, "the signal payload is the result"

    # Compensations: only for succeeded tasks that declared one, newest completion first.
    comps = [k for k in tasks if k.startswith(TASK_KEY_COMPENSATION_PREFIX)]
    for key in comps:
        original = tasks[key.removeprefix(TASK_KEY_COMPENSATION_PREFIX)]
        assert original.state == JobState.SUCCEEDED
        assert original.compensation_kind
    done = {t.task_key: t for t in originals if t.state == JobState.SUCCEEDED}
    assert set(run.comp_order) <= set(done)
    chain = sorted((completed_at(t) for t in done.values() if t.compensation_kind), reverse=True)
    ran = [completed_at(done[k]) for k in run.comp_order]
    event(f"comps ran {len(ran)} of {len(chain)}")
    assert ran == chain[: len(ran)], "compensations must run newest completion first"
    if comps and not shape.comp_fails:
        assert len(ran) == len(chain), "every compensation ran"
