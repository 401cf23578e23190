"""The demo's workflow worker writes what azync's writes (workflow/operation.go,
workflow/worker.go) and settles as it does, on both backends: an operation job carries
``op_name``/``op_version``, so resolving it records the operation's name, and after
``resolve … fail`` the execution fails (before, it stayed running)."""

from __future__ import annotations

from typing import Any

from qctl.systems.azync.demo import Demo
from qctl.systems.azync.ops import workflows as ops_wf
from qctl_store.types import JobSearch, Source, UncertainDecision, WorkflowState

TASK, OP = "$wf:checkout", "$op:charge@1"


def step(demo: Demo) -> None:
    """One pass of the demo's workflow worker over its workflow tasks."""
    for job in demo._lease(Source.WORKFLOW, TASK):
        demo._workflow_step(job, OP)


def test_a_resolved_failed_charge_fails_the_execution(store: Any) -> None:
    demo = Demo(store, seed=1, maintain=False)
    demo._start_workflow()
    step(demo)
    (op,) = demo._lease(Source.WORKFLOW, OP)
    assert op.run_id is not None and op.lease_token is not None
    key = op.meta["execution_key"]
    assert op.meta == {
        "execution_key": key,
        "workflow_name": "checkout",
        "op_name": "charge",
        "op_version": "1",
    }
    scheduled = [h for h in store.list_history(op.run_id) if h.type == "OperationScheduled"]
    assert key == f"{op.run_id}:{scheduled[0].seq}"
    assert scheduled[0].payload["job_id"] == str(op.id)
    store.mark_uncertain(op.id, op.lease_token, "charge timed out")

    ops_wf.resolve(store, op.id, UncertainDecision.FAIL, {"error": "card declined"})
    failed = store.list_history(op.run_id)[-1]
    assert (failed.type, failed.payload["name"], failed.payload["version"]) == (
        "OperationFailed",
        "charge",
        "1",
    )
    step(demo)
    execution = store.get_workflow_execution(op.run_id)
    assert execution.state == WorkflowState.FAILED
    last = store.list_history(op.run_id)[-1]
    assert (last.type, last.payload) == ("WorkflowFailed", {"reason": "card declined"})
    left = store.search_jobs(JobSearch(source=Source.WORKFLOW, run_id=op.run_id, kind=TASK))
    assert all(j.state != "pending" for j in left)
