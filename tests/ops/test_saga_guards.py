"""``dags compensate`` and ``dags cancel`` refuse what would strand a saga unless forced,
on both backends, and their plans name exactly the tasks they cancel and leave running
(azync's CompensateDAG and CancelDAG cancel every pending, scheduled, blocked, waiting or
paused task and leave active ones to settle, driver/azyncpgx/dag_store.go)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from qctl.core.errors import Strands
from qctl.systems.azync.ops import dags as ops_dags
from qctl_store.types import DAGDep, DAGParams, DAGState, JobState, OnFailurePolicy, Source
from tests.conformance.helpers import (
    apply_policy_for,
    dag_task_by_key,
    finish_wf_task,
    kill_wf_task,
    lease_one,
    token,
    unique,
    wf_task,
)


def states(store: Any, dag_id: uuid.UUID) -> dict[str, JobState]:
    return {t.task_key: t.state for t in store.dag_tasks(dag_id)}


def saga(store: Any) -> tuple[uuid.UUID, str]:
    """A running saga: ``a`` (undone by ``<p>_undo_a``) succeeded, ``b`` (undone by
    ``<p>_undo_b``) pending, ``c`` blocked on ``b``; the failure policy compensates."""
    p = unique("saga")
    params = DAGParams(
        name=p,
        tasks=[
            wf_task("a", f"{p}_a", compensation_kind=f"{p}_undo_a"),
            wf_task("b", f"{p}_b", compensation_kind=f"{p}_undo_b"),
            wf_task("c", f"{p}_c"),
        ],
        deps=[DAGDep("b", "a"), DAGDep("c", "b")],
        on_failure=OnFailurePolicy.CANCEL,
    )
    store.create_dag(params)
    finish_wf_task(store, f"{p}_a")
    store.promote_unblocked()
    return params.id, p


def test_compensate_plan_lists_what_it_cancels_and_undoes(store: Any) -> None:
    dag_id, _p = saga(store)
    plan = ops_dags.compensate(store, dag_id, dry_run=True)
    assert (plan.cancels, plan.left_running, plan.compensations) == (("b", "c"), (), ("comp:a",))
    assert plan.effects() == "cancels b, c; leaves running no task; inserts compensations comp:a"
    assert states(store, dag_id) == {"a": "succeeded", "b": "pending", "c": "blocked"}

    done = ops_dags.compensate(store, dag_id)
    assert done.cancels == ("b", "c") and not done.dry_run
    after = states(store, dag_id)
    assert (after["b"], after["c"], after["comp:a"]) == ("cancelled", "cancelled", "pending")
    assert store.get_dag(dag_id).state == DAGState.COMPENSATING


def test_compensate_refuses_while_an_original_task_runs(store: Any) -> None:
    dag_id, p = saga(store)
    running = lease_one(store, Source.DAG, f"{p}_b")
    for dry_run in (True, False):
        with pytest.raises(Strands, match=r"task\(s\) b \(active\) are running.*--force"):
            ops_dags.compensate(store, dag_id, dry_run=dry_run)
    assert store.get_dag(dag_id).state == DAGState.RUNNING
    assert states(store, dag_id) == {"a": "succeeded", "b": "active", "c": "blocked"}

    forced = ops_dags.compensate(store, dag_id, force=True)
    assert (forced.cancels, forced.left_running) == (("c",), ("b",))
    assert store.find_job(running.id).state == JobState.ACTIVE
    assert store.get_dag(dag_id).state == DAGState.COMPENSATING


def suspended_by_dead_compensation(store: Any) -> tuple[uuid.UUID, str]:
    """The saga with ``b`` succeeded too and ``c`` dead: compensating, ``comp:b`` dead,
    ``comp:a`` blocked behind it, so azync suspended it."""
    dag_id, p = compensating(store)
    kill_wf_task(store, f"{p}_undo_b")
    store.complete_dags()
    assert store.get_dag(dag_id).state == DAGState.SUSPENDED
    return dag_id, p


def compensating(store: Any) -> tuple[uuid.UUID, str]:
    """The saga with ``b`` succeeded and ``c`` dead: its policy inserted ``comp:b``
    (pending) and ``comp:a`` (blocked)."""
    dag_id, p = saga(store)
    finish_wf_task(store, f"{p}_b")
    store.promote_unblocked()
    c = lease_one(store, Source.DAG, f"{p}_c")
    store.dead(c.id, token(c), "boom")
    apply_policy_for(store, dag_id)
    assert store.get_dag(dag_id).state == DAGState.COMPENSATING
    return dag_id, p


def test_compensate_refuses_a_saga_suspended_by_a_dead_compensation(store: Any) -> None:
    dag_id, _p = suspended_by_dead_compensation(store)
    with pytest.raises(Strands) as refused:
        ops_dags.compensate(store, dag_id, dry_run=True)
    assert "comp:a (blocked), comp:b (dead)" in str(refused.value)
    assert f"`qctl dags retry {dag_id}` re-runs the dead step" in str(refused.value)
    with pytest.raises(Strands):
        ops_dags.compensate(store, dag_id)
    assert states(store, dag_id)["comp:a"] == JobState.BLOCKED

    plan = ops_dags.compensate(store, dag_id, dry_run=True, force=True)
    assert plan.effects() == (
        "cancels comp:a; leaves running no task; inserts no compensation (its chain exists already)"
    )
    ops_dags.compensate(store, dag_id, force=True)
    assert states(store, dag_id)["comp:a"] == JobState.CANCELLED


def test_cancel_refuses_to_cancel_pending_compensations(store: Any) -> None:
    dag_id, _p = compensating(store)
    for dry_run in (True, False):
        with pytest.raises(Strands, match=r"comp:a \(blocked\), comp:b \(pending\)"):
            ops_dags.cancel(store, dag_id, dry_run=dry_run)
    assert store.get_dag(dag_id).state == DAGState.COMPENSATING
    assert dag_task_by_key(store, dag_id, "comp:b").state == JobState.PENDING

    forced = ops_dags.cancel(store, dag_id, force=True)
    assert forced.cancels == ("comp:a", "comp:b")
    after = states(store, dag_id)
    assert (after["comp:a"], after["comp:b"]) == ("cancelled", "cancelled")


def test_cancel_of_a_running_saga_lists_the_tasks_and_acts(store: Any) -> None:
    dag_id, p = saga(store)
    lease_one(store, Source.DAG, f"{p}_b")
    plan = ops_dags.cancel(store, dag_id, dry_run=True)
    assert plan.effects() == "cancels c; leaves running b"
    ops_dags.cancel(store, dag_id)
    assert store.get_dag(dag_id).state == DAGState.CANCELLED
    assert states(store, dag_id) == {"a": "succeeded", "b": "active", "c": "cancelled"}
