"""Workflow-as-code executions (``driver.WorkflowStore``) on PostgreSQL.

Semantics follow azync's ``driver/azyncpgx/workflow_store.go``:
start, signal and schedule calls insert their ``$wf:<name>`` task in the same
transaction as their own effect, and wake workers after commit. The state transitions
are ``wac.ExecutionVerbs`` over ``_settle``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl_kit import errors, values
from qctl_kit.postgres.connect import Cursor
from qctl_store import validate
from qctl_store.listing import WorkflowListing
from qctl_store.postgres.base import PgBase, queries
from qctl_store.postgres.rows import ROWS
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


def _value(cur: Cursor, sql: str, params: dict[str, Any]) -> Any:
    """The first column of a statement that always returns one row."""
    row = cur.execute(sql, params).fetchone()
    assert row is not None
    return next(iter(row.values()))


class WorkflowMixin(WorkflowListing, ExecutionReads, ExecutionVerbs, PgBase):
    # --- start / get / list ---------------------------------------------------------

    def start_workflow(self, p: WorkflowStartParams) -> tuple[bool, uuid.UUID | None]:
        params = {**start_fields(p), "id": p.id}
        kind = task_kind(p.name)
        with self.tx() as cur:
            if cur.execute(Q.insert_execution, params).fetchone() is None:
                # Only a non-empty key can conflict, so a live holder existed; it may
                # have settled since (Go returns an error then too).
                row = cur.execute(Q.find_live_execution, params).fetchone()
                if row is None:
                    raise errors.Conflict(
                        "start workflow: the execution holding the business key settled "
                        "meanwhile; retry"
                    )
                return False, row["id"]
            cur.execute(Q.insert_started_history, params)
            self._insert_task(cur, p.id, kind, None)
        self.notify_after_commit(Source.WORKFLOW, [kind])
        return True, None

    # --- history --------------------------------------------------------------------

    def append_history(self, workflow_id: uuid.UUID, type: str, payload: JSON) -> int:
        validate.kind(type, "history event type")
        params: dict[str, Any] = {
            "id": workflow_id,
            "type": type,
            "payload": json_or_null(payload, "payload"),
        }
        with self.tx() as cur:
            if cur.execute(Q.lock_execution, params).fetchone() is None:
                raise errors.NotFound("append history")
            params["seq"] = _value(cur, Q.next_history_seq, params)
            if cur.execute(Q.insert_history, params).rowcount == 1:
                return int(params["seq"])
            # Only an operation result with an execution_key conflicts: the retried
            # append returns the seq already recorded.
            row = cur.execute(
                Q.find_history_by_exec_key,
                {**params, "execution_key": execution_key(type, payload)},
            ).fetchone()
            if row is None:
                raise errors.Conflict(f"append history: {type} conflicted without an execution_key")
            return int(row["seq"])

    # --- signals --------------------------------------------------------------------

    def signal_workflow(self, p: SignalParams) -> bool:
        fields, history_payload = signal_fields(p)
        signal = {**fields, "id": uuid.uuid4(), "workflow_id": p.workflow_id}
        wake_kind = ""
        with self.tx() as cur:
            header = cur.execute(Q.lock_execution, {"id": p.workflow_id}).fetchone()
            if header is None:
                raise errors.NotFound("signal workflow")
            if cur.execute(Q.insert_signal, signal).fetchone() is None:
                return False  # a repeated message id
            history: dict[str, Any] = {
                "id": p.workflow_id,
                "type": "SignalReceived",
                "payload": history_payload,
            }
            history["seq"] = _value(cur, Q.next_history_seq, history)
            cur.execute(Q.insert_history, history)
            if WorkflowState(header["state"]) not in WORKFLOW_TERMINAL_STATES:
                wake_kind = task_kind(header["name"])
                self._insert_task(cur, p.workflow_id, wake_kind, None)
        if wake_kind:
            self.notify_after_commit(Source.WORKFLOW, [wake_kind])
        return True

    # --- state transitions ----------------------------------------------------------

    def _settle(self, op: str, statement: str, id: uuid.UUID, **extra: Any) -> None:
        """The statement commits either way, as azync's autocommit one does: it matters
        for mark_uncertain, whose job update stands even when the execution was not there
        to suspend."""
        with self.tx() as cur:
            row = cur.execute(Q[statement], {"id": id, **extra}).fetchone()
        if row is None:
            raise errors.NotFound(op)

    # --- operations -----------------------------------------------------------------

    def schedule_operation(self, p: ScheduleOperationParams) -> uuid.UUID:
        fields = operation_fields(p)
        run_at = validate.instant(p.run_at, "run_at")
        lookup = {"workflow_id": p.workflow_id, "execution_key": p.execution_key}
        with self.read() as cur:
            found = cur.execute(Q.execution_exists, {"id": p.workflow_id}).fetchone()
            if not found or not found["found"]:
                raise errors.NotFound("schedule operation")
            if p.execution_key:
                # Fast path only; the unique index is the real guarantee (below).
                row = cur.execute(Q.find_live_operation, lookup).fetchone()
                if row is not None:
                    return uuid.UUID(str(row["id"]))
        params = {**fields, "id": uuid.uuid4(), "workflow_id": p.workflow_id, "run_at": run_at}
        try:
            with self.tx() as cur:
                job_id = _value(cur, Q.insert_operation, params)
                self.bump_stat(cur, Source.WORKFLOW, p.kind, "enqueued")
        except errors.UniqueViolation:
            # A concurrent scheduler of the same execution key won: return its job.
            row = None
            if p.execution_key:
                with self.read() as cur:
                    row = cur.execute(Q.find_live_operation, lookup).fetchone()
            if row is None:
                raise held_execution_key(p.execution_key) from None
            return uuid.UUID(str(row["id"]))
        if run_at is None or run_at <= datetime.now(UTC):
            self.notify_after_commit(Source.WORKFLOW, [p.kind])
        return uuid.UUID(str(job_id))

    def mark_uncertain(
        self, operation_job_id: uuid.UUID, lease_token: uuid.UUID, reason: str
    ) -> None:
        self._settle(
            "mark uncertain",
            "mark_uncertain",
            operation_job_id,
            lease_token=lease_token,
            reason=reason,
        )

    def resolve_uncertain(
        self, operation_job_id: uuid.UUID, decision: str, result: JSON = None
    ) -> tuple[uuid.UUID, str]:
        d = parse_decision(decision)
        params = {"id": operation_job_id, "result": json_or_null(result, "result")}
        with self.tx() as cur:
            row = cur.execute(_RESOLVE[d], params).fetchone()
            if row is None:
                raise errors.NotFound("resolve uncertain")
            cur.execute(Q.resume_after_resolve, {"id": row["run_id"]})
        if d == UncertainDecision.RETRY:
            self.notify_after_commit(Source.WORKFLOW, [row["kind"]])
        return row["run_id"], row["workflow_name"]

    # --- tasks and maintenance ------------------------------------------------------

    def _insert_task(
        self, cur: Cursor, workflow_id: uuid.UUID, kind: str, run_at: datetime | None
    ) -> None:
        cur.execute(
            Q.insert_task,
            {"id": uuid.uuid4(), "kind": kind, "workflow_id": workflow_id, "run_at": run_at},
        )
        self.bump_stat(cur, Source.WORKFLOW, kind, "enqueued")

    def schedule_task(
        self, workflow_id: uuid.UUID, kind: str, run_at: datetime | None = None
    ) -> None:
        validate.kind(kind)
        run_at = validate.instant(run_at, "run_at")
        with self.tx() as cur:
            found = cur.execute(Q.execution_exists, {"id": workflow_id}).fetchone()
            if not found or not found["found"]:
                raise errors.NotFound("schedule workflow task")
            self._insert_task(cur, workflow_id, kind, run_at)
        if run_at is None or run_at <= datetime.now(UTC):
            self.notify_after_commit(Source.WORKFLOW, [kind])

    def vacuum_workflows(self, retention: timedelta) -> int:
        if not validate.retention(retention):
            return 0
        with self.tx() as cur:
            return cur.execute(
                Q.vacuum_executions, {"retention": retention.total_seconds()}
            ).rowcount

    def list_stalled_workflows(
        self, older_than: timedelta, limit: int = 0
    ) -> list[StalledWorkflow]:
        values.duration(older_than, "older_than")
        params = {
            "older_than": older_than.total_seconds(),
            "limit": stalled_limit(limit),
        }
        with self.read() as cur:
            rows = cur.execute(Q.list_stalled, params).fetchall()
        return [ROWS.stalled_workflow(r) for r in rows]
