"""Workflow-as-code executions (``driver.WorkflowStore``) on SQLite.

The same semantics as the PostgreSQL backend (azync's
``driver/azyncpgx/workflow_store.go``). ``BEGIN IMMEDIATE`` serialises writers, which
takes the place of PostgreSQL's header row locks when history sequence numbers are
assigned.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from qctl_kit import errors, values
from qctl_store import validate
from qctl_store.listing import WorkflowListing
from qctl_store.sqlite.base import SqliteBase, Tx, queries, td_us, to_us, uid
from qctl_store.sqlite.rows import ROWS
from qctl_store.types import (
    JSON,
    WORKFLOW_TERMINAL_STATES,
    ScheduleOperationParams,
    SignalParams,
    Source,
    StalledWorkflow,
    UncertainDecision,
    WorkflowStartParams,
    WorkflowState,
)
from qctl_store.wac import (
    ExecutionReads,
    ExecutionVerbs,
    execution_key,
    held_execution_key,
    json_or_null,
    operation_fields,
    signal_fields,
    stalled_limit,
    start_fields,
    task_kind,
)
from qctl_store.wac import decision as parse_decision

Q = queries("workflows.sql")

_RESOLVE = {
    UncertainDecision.COMPLETE: Q.resolve_complete,
    UncertainDecision.FAIL: Q.resolve_fail,
    UncertainDecision.RETRY: Q.resolve_retry,
}


def _exists(t: Tx, workflow_id: uuid.UUID) -> bool:
    return t.one(Q.get_header, {"id": str(workflow_id)}) is not None


class WorkflowMixin(WorkflowListing, ExecutionReads, ExecutionVerbs, SqliteBase):
    # --- start / get / list ---------------------------------------------------------

    def start_workflow(self, p: WorkflowStartParams) -> tuple[bool, uuid.UUID | None]:
        params = {**start_fields(p), "id": str(p.id)}
        kind = task_kind(p.name)
        with self.tx() as t:
            params["now"] = t.now
            if t.one(Q.insert_execution, params) is None:
                # Only a non-empty key can conflict, and BEGIN IMMEDIATE keeps the
                # live holder from settling meanwhile.
                row = t.one(Q.find_live_execution, params)
                assert row is not None
                return False, uuid.UUID(row["id"])
            t.execute(Q.insert_started_history, params)
            self._insert_task(t, p.id, kind, None)
        return True, None

    # --- history --------------------------------------------------------------------

    def append_history(self, workflow_id: uuid.UUID, type: str, payload: JSON) -> int:
        validate.kind(type, "history event type")
        params: dict[str, Any] = {
            "id": str(workflow_id),
            "type": type,
            "payload": json_or_null(payload, "payload"),
        }
        with self.tx() as t:
            if not _exists(t, workflow_id):
                raise errors.NotFound("append history")
            params["now"] = t.now
            params["seq"] = self._next_seq(t, workflow_id)
            if t.execute(Q.insert_history, params).rowcount == 1:
                return int(params["seq"])
            # Only an operation result with an execution_key conflicts: the retried
            # append returns the seq already recorded.
            row = t.one(
                Q.find_history_by_exec_key,
                {**params, "execution_key": execution_key(type, payload)},
            )
            if row is None:
                raise errors.Conflict(f"append history: {type} conflicted without an execution_key")
            return int(row["seq"])

    def _next_seq(self, t: Tx, workflow_id: uuid.UUID) -> int:
        row = t.one(Q.next_history_seq, {"id": str(workflow_id)})
        assert row is not None
        return int(row["seq"])

    # --- signals --------------------------------------------------------------------

    def signal_workflow(self, p: SignalParams) -> bool:
        fields, history_payload = signal_fields(p)
        signal = {**fields, "id": str(uuid.uuid4()), "workflow_id": str(p.workflow_id)}
        with self.tx() as t:
            header = t.one(Q.get_header, {"id": str(p.workflow_id)})
            if header is None:
                raise errors.NotFound("signal workflow")
            if t.one(Q.insert_signal, {**signal, "now": t.now}) is None:
                return False  # a repeated message id
            t.execute(
                Q.insert_history,
                {
                    "id": str(p.workflow_id),
                    "seq": self._next_seq(t, p.workflow_id),
                    "type": "SignalReceived",
                    "payload": history_payload,
                    "now": t.now,
                },
            )
            if WorkflowState(header["state"]) not in WORKFLOW_TERMINAL_STATES:
                self._insert_task(t, p.workflow_id, task_kind(header["name"]), None)
        return True

    # --- state transitions ----------------------------------------------------------

    def _settle(self, op: str, statement: str, id: uuid.UUID, **extra: Any) -> None:
        with self.tx() as t:
            if t.execute(Q[statement], {"id": str(id), "now": t.now, **extra}).rowcount == 0:
                raise errors.NotFound(op)

    # --- operations -----------------------------------------------------------------

    def schedule_operation(self, p: ScheduleOperationParams) -> uuid.UUID:
        fields = operation_fields(p)
        run_at = validate.instant(p.run_at, "run_at")
        job_id = uuid.uuid4()
        params = {
            **fields,
            "id": str(job_id),
            "workflow_id": str(p.workflow_id),
            "run_at": to_us(run_at),
        }
        # One write transaction: the dedupe lookup and the insert cannot interleave with
        # another writer, so a unique violation can only be another workflow's key.
        try:
            with self.tx() as t:
                if not _exists(t, p.workflow_id):
                    raise errors.NotFound("schedule operation")
                if p.execution_key:
                    row = t.one(Q.find_live_operation, params)
                    if row is not None:
                        return uuid.UUID(row["id"])
                t.execute(Q.insert_operation, {**params, "now": t.now})
                self.bump_stat(t, Source.WORKFLOW, p.kind, "enqueued")
        except errors.UniqueViolation:
            raise held_execution_key(p.execution_key) from None
        return job_id

    def mark_uncertain(
        self, operation_job_id: uuid.UUID, lease_token: uuid.UUID, reason: str
    ) -> None:
        # Like azync's single CTE statement, the job update stands even when the
        # execution is no longer running or suspended; only then is it not-found.
        suspended = False
        with self.tx() as t:
            params = {
                "id": str(operation_job_id),
                "lease_token": str(lease_token),
                "reason": reason,
                "now": t.now,
            }
            job = t.one(Q.mark_job_uncertain, params)
            if job is not None and job["run_id"] is not None:
                suspended = (
                    t.execute(Q.suspend_for_uncertain, {**params, "run_id": job["run_id"]}).rowcount
                    == 1
                )
        if not suspended:
            raise errors.NotFound("mark uncertain")

    def resolve_uncertain(
        self, operation_job_id: uuid.UUID, decision: str, result: JSON = None
    ) -> tuple[uuid.UUID, str]:
        d = parse_decision(decision)
        params = {"id": str(operation_job_id), "result": json_or_null(result, "result")}
        with self.tx() as t:
            row = t.one(_RESOLVE[d], {**params, "now": t.now})
            if row is None:
                raise errors.NotFound("resolve uncertain")
            t.execute(Q.resume_after_resolve, {"id": row["run_id"], "now": t.now})
        return uuid.UUID(row["run_id"]), row["workflow_name"]

    # --- tasks and maintenance ------------------------------------------------------

    def _insert_task(
        self, t: Tx, workflow_id: uuid.UUID, kind: str, run_at: datetime | None
    ) -> None:
        t.execute(
            Q.insert_task,
            {
                "id": str(uuid.uuid4()),
                "kind": kind,
                "workflow_id": uid(workflow_id),
                "run_at": to_us(run_at),
                "now": t.now,
            },
        )
        self.bump_stat(t, Source.WORKFLOW, kind, "enqueued")

    def schedule_task(
        self, workflow_id: uuid.UUID, kind: str, run_at: datetime | None = None
    ) -> None:
        validate.kind(kind)
        run_at = validate.instant(run_at, "run_at")
        with self.tx() as t:
            if not _exists(t, workflow_id):
                raise errors.NotFound("schedule workflow task")
            self._insert_task(t, workflow_id, kind, run_at)

    def vacuum_workflows(self, retention: timedelta) -> int:
        if not validate.retention(retention):
            return 0
        with self.tx() as t:
            return t.execute(
                Q.vacuum_executions, {"now": t.now, "retention": td_us(retention)}
            ).rowcount

    def list_stalled_workflows(
        self, older_than: timedelta, limit: int = 0
    ) -> list[StalledWorkflow]:
        values.duration(older_than, "older_than")
        with self.read() as t:
            found = t.all(
                Q.list_stalled,
                {
                    "now": t.now,
                    "older_than": td_us(older_than),
                    "limit": stalled_limit(limit),
                },
            )
        return [ROWS.stalled_workflow(r) for r in found]
