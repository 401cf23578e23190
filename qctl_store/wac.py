"""Workflow-as-code wire formats and edge checks shared by both backends.

The ``$wf:<name>`` task kind and the ``SignalReceived`` history payload are durable
formats of azync's workflow runtime: already-scheduled jobs and recorded histories
depend on them, so both backends build them here, in one place.
"""

from __future__ import annotations

from typing import Any

from qctl_store import validate
from qctl_store.errors import InvalidInput
from qctl_store.types import JSON, WORKFLOW_TASK_KIND_PREFIX, UncertainDecision, WorkflowState

OPERATION_RESULT_TYPES = frozenset({"OperationCompleted", "OperationFailed"})
"""History types deduplicated by their payload's ``execution_key``."""


def task_kind(name: str) -> str:
    """The fetch partition of a workflow's tasks."""
    return WORKFLOW_TASK_KIND_PREFIX + name


def json_or_null(value: JSON, what: str) -> str | None:
    """A JSON parameter as text; None (Go's nil RawMessage) stays SQL NULL."""
    return None if value is None else validate.json_text(value, what)


def decision(value: str) -> UncertainDecision:
    """An unknown decision is bad input (a plain error in Go), never not-found."""
    try:
        return UncertainDecision(value)
    except ValueError:
        raise InvalidInput(
            f"unknown uncertain decision {value!r} "
            f"(one of {', '.join(d.value for d in UncertainDecision)})"
        ) from None


def signal_history_payload(name: str, payload: JSON) -> dict[str, Any]:
    """azync's SignalReceived payload; ``payload`` is omitted when empty (omitempty)."""
    return {"name": name} if payload is None else {"name": name, "payload": payload}


def execution_key(type: str, payload: JSON) -> str:
    """The dedupe key of an operation-result history record, or ``""``."""
    if type not in OPERATION_RESULT_TYPES or not isinstance(payload, dict):
        return ""
    key = payload.get("execution_key")
    return key if isinstance(key, str) else ""


def state_filter(value: WorkflowState | str | None) -> str | None:
    """A listing's state filter as text (None matches every state)."""
    if not value:
        return None
    try:
        return WorkflowState(value).value
    except ValueError:
        raise InvalidInput(
            f"unknown workflow state {value!r} (one of {', '.join(s.value for s in WorkflowState)})"
        ) from None
