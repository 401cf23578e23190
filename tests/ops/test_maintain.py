"""``maintain.one_pass`` does what azync's engines do, and only that, on both backends."""

from __future__ import annotations

import time
from typing import Any

from qctl.systems.azync.ops import maintain as ops_maintain
from qctl_store.types import (
    DequeueParams,
    JobState,
    ScheduleOperationParams,
    Source,
    WorkflowStartParams,
)
from tests.conformance.helpers import REAP_LEASE, REAP_WAIT, enqueue_due, lease_one, unique


def test_an_expired_workflow_lease_is_left_alone(store: Any) -> None:
    """azync reaps only in its queue, event and DAG engines; a workflow task's lease is
    not heartbeated, so its lapse says nothing of its worker. Before, the pass reaped it
    (back to pending for a second worker, or dead after --max-reaps lapses)."""
    start = WorkflowStartParams(name=unique("wf"), version="v1", input={})
    store.start_workflow(start)
    op_kind = unique("op")
    meta = {"op_name": "charge", "op_version": "1", "workflow_name": start.name}
    op_id = store.schedule_operation(
        ScheduleOperationParams(workflow_id=start.id, kind=op_kind, meta=meta)
    )
    (op,) = store.dequeue_batch(
        Source.WORKFLOW, DequeueParams(kind=op_kind, limit=1, lease=REAP_LEASE)
    )
    queue_kind = unique("q")
    queue_id = enqueue_due(store, queue_kind)
    lease_one(store, Source.QUEUE, queue_kind, REAP_LEASE)
    time.sleep(REAP_WAIT)

    steps = ops_maintain.one_pass(store, list(Source), max_reaps=1)

    reaped = {s.source for s in steps if s.step == "reap_expired"}
    assert Source.WORKFLOW not in reaped and Source.QUEUE in reaped
    left = store.get_job(Source.WORKFLOW, op_id)
    assert (left.state, left.lease_token, left.reap_count) == (JobState.ACTIVE, op.lease_token, 0)
    assert store.get_job(Source.QUEUE, queue_id).state == JobState.DEAD
