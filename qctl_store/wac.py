"""Workflow-as-code wire formats and edge checks shared by both backends.

The ``$wf:<name>`` task kind and the ``SignalReceived`` history payload are durable
formats of azync's workflow runtime: already-scheduled jobs and recorded histories
depend on them, so both backends build them here, in one place, together with the
validated column values of each write (ids and instants stay with the backend, which
encodes them its own way).
"""

from __future__ import annotations

import uuid
from abc import abstractmethod
from typing import Any

from qctl_kit.errors import Conflict, InvalidInput, NotFound
from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.config import OPERATION_MAX_ATTEMPTS, STALLED_LIMIT, WORKFLOW_TASK_QUEUE
from qctl_store.types import (
    JSON,
    WORKFLOW_TASK_KIND_PREFIX,
    HistoryEvent,
    ScheduleOperationParams,
    SignalParams,
    UncertainDecision,
    WorkflowExecutionView,
    WorkflowStartParams,
)

OPERATION_RESULT_TYPES = frozenset({"OperationCompleted", "OperationFailed"})
"""History types deduplicated by their payload's ``execution_key``."""


def task_kind(name: str) -> str:
    """The fetch partition of a workflow's tasks."""
    return WORKFLOW_TASK_KIND_PREFIX + name


def json_or_null(value: JSON, what: str) -> str | None:
    """A JSON parameter as text; None (Go's nil RawMessage) stays SQL NULL."""
    return None if value is None else validate.json_text(value, what)


def start_fields(p: WorkflowStartParams) -> dict[str, Any]:
    """The new execution's columns, the id aside."""
    validate.kind(p.name, "workflow name")
    return {
        "name": p.name,
        "version": p.version,
        "biz_key": validate.idempotency_key(p.business_idempotency_key),
        "task_queue": p.task_queue or WORKFLOW_TASK_QUEUE,
        "input": json_or_null(p.input, "input"),
        "meta": validate.json_text(validate.meta(p.meta), "meta"),
    }


def signal_fields(p: SignalParams) -> tuple[dict[str, Any], str]:
    """The inbox row's columns (ids aside) and the ``SignalReceived`` history payload,
    azync's ``{"name", "payload"}`` with ``payload`` omitted when empty (omitempty)."""
    validate.kind(p.name, "signal name")
    history = {"name": p.name} if p.payload is None else {"name": p.name, "payload": p.payload}
    return (
        {
            "name": p.name,
            "message_id": p.message_id,
            "payload": json_or_null(p.payload, "payload"),
        },
        validate.json_text(history, "payload"),
    )


def operation_fields(p: ScheduleOperationParams) -> dict[str, Any]:
    """The operation job's columns, ids and run_at aside: the execution key rides in
    meta (the live-job unique index reads it there), attempts default to 25, explicit."""
    validate.kind(p.kind)
    meta = dict(validate.meta(p.meta))
    if p.execution_key:
        meta["execution_key"] = p.execution_key
    return {
        "kind": p.kind,
        "payload": json_or_null(p.payload, "payload"),
        "meta": validate.json_text(meta, "meta"),
        "max_attempts": p.max_attempts if p.max_attempts > 0 else OPERATION_MAX_ATTEMPTS,
        "execution_key": p.execution_key,
    }


def held_execution_key(key: str) -> Conflict:
    """The error of an operation insert refused by the live-job execution-key index: the
    index is global, so another workflow's live job holds the key."""
    return Conflict(
        f"schedule operation: execution key {key!r} is held by a live job of another workflow"
    )


def decision(value: str) -> UncertainDecision:
    """An unknown decision is bad input (a plain error in Go), never not-found."""
    try:
        return UncertainDecision(value)
    except ValueError:
        raise InvalidInput(
            f"unknown uncertain decision {value!r} "
            f"(one of {', '.join(d.value for d in UncertainDecision)})"
        ) from None


def execution_key(type: str, payload: JSON) -> str:
    """The dedupe key of an operation-result history record, or ``""``."""
    if type not in OPERATION_RESULT_TYPES or not isinstance(payload, dict):
        return ""
    key = payload.get("execution_key")
    return key if isinstance(key, str) else ""


def stalled_limit(limit: int) -> int:
    """``limit <= 0`` is azync's default of 100, never "nothing"."""
    return validate.limit(limit) if limit > 0 else STALLED_LIMIT


class ExecutionVerbs:
    """The state transitions of an execution, each one guarded statement of the backend's
    ``workflows.sql`` (azync's ``driver/azyncpgx/workflow_store.go``): complete and fail
    have no state guard, cancel and suspend refuse a terminal execution, resume needs a
    suspended one. Mixed into each backend's ``WorkflowMixin``, which runs them."""

    @abstractmethod
    def _settle(self, op: str, statement: str, id: uuid.UUID, **extra: Any) -> None:
        """Run ``workflows.sql``'s ``statement`` on ``id`` (plus ``extra`` parameters) in a
        transaction of its own; no row affected is ``NotFound(op)``."""

    def complete_workflow(self, id: uuid.UUID, result: JSON) -> None:
        self._settle(
            "complete workflow", "complete_execution", id, result=json_or_null(result, "result")
        )

    def fail_workflow(self, id: uuid.UUID, reason: str) -> None:
        self._settle("fail workflow", "fail_execution", id, reason=reason)

    def cancel_workflow_execution(self, id: uuid.UUID) -> None:
        self._settle("cancel workflow execution", "cancel_execution", id)

    def suspend_workflow(self, id: uuid.UUID, reason: str) -> None:
        self._settle("suspend workflow", "suspend_execution", id, reason=reason)

    def resume_workflow(self, id: uuid.UUID) -> None:
        self._settle("resume workflow", "resume_execution", id)


class ExecutionReads(StoreBase):
    """An execution and its history, read alike on both backends."""

    def get_workflow_execution(self, id: uuid.UUID) -> WorkflowExecutionView:
        q = self.queries("workflows.sql")
        with self.read() as cur:
            row = cur.execute(q.get_execution, {"id": self.dialect.arg_id(id, "id")}).fetchone()
        if row is None:
            raise NotFound("get workflow execution")
        return self.rows.workflow_execution(row)

    def list_history(self, workflow_id: uuid.UUID) -> list[HistoryEvent]:
        q = self.queries("workflows.sql")
        args = {"id": self.dialect.arg_id(workflow_id, "workflow_id")}
        with self.read() as cur:
            found = cur.execute(q.execution_exists, args).fetchone()
            if not found or not found["found"]:
                raise NotFound("list history")
            rows = cur.execute(q.list_history, args).fetchall()
        return [self.rows.history_event(r) for r in rows]
