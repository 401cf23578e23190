"""Workflow verbs of azync (``workflow/manager.go``): signal, cancel, suspend, resume,
and the resolution of an uncertain operation."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from qctl.core.errors import WrongVerb, require_state
from qctl.systems.azync.ops.results import ResolveOutcome, RunOutcome, SignalOutcome
from qctl_kit.errors import NotFound
from qctl_store import wac
from qctl_store.types import (
    JSON,
    WORKFLOW_TERMINAL_STATES,
    JobSearch,
    JobState,
    SignalParams,
    Source,
    UncertainDecision,
    WorkflowState,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

LIVE_STATES = frozenset(WorkflowState) - WORKFLOW_TERMINAL_STATES


def _act(
    store: ConsoleStore,
    id: uuid.UUID,
    action: str,
    needs: Collection[WorkflowState],
    call: Callable[[str], None],
    dry_run: bool,
) -> RunOutcome:
    execution = store.get_workflow_execution(id)
    require_state(f"{action} workflow", f"workflow {str(id)[:8]}", execution.state, needs, action)
    if not dry_run:
        call(execution.name)
    return RunOutcome(execution.id, execution.name, action, execution.state, dry_run)


def cancel(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> RunOutcome:
    return _act(
        store, id, "cancel", LIVE_STATES, lambda _: store.cancel_workflow_execution(id), dry_run
    )


def suspend(store: ConsoleStore, id: uuid.UUID, reason: str, dry_run: bool = False) -> RunOutcome:
    return _act(
        store,
        id,
        "suspend",
        {WorkflowState.RUNNING},
        lambda _: store.suspend_workflow(id, reason),
        dry_run,
    )


def resume(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> RunOutcome:
    """Resume a suspended execution and re-enqueue its workflow task, as azync's
    ``Manager.Resume`` does: tasks that arrived while suspended were consumed."""

    def call(name: str) -> None:
        store.resume_workflow(id)
        store.schedule_task(id, wac.task_kind(name))

    return _act(store, id, "resume", {WorkflowState.SUSPENDED}, call, dry_run)


def signal(
    store: ConsoleStore, id: uuid.UUID, name: str, payload: JSON = None, message_id: str = ""
) -> SignalOutcome:
    store.get_workflow_execution(id)  # not found before anything is written
    recorded = store.signal_workflow(SignalParams(id, name, message_id, payload))
    return SignalOutcome(id, name, int(recorded), not recorded, message_id)


def resolve(
    store: ConsoleStore,
    job_id: uuid.UUID,
    decision: UncertainDecision,
    result: JSON = None,
    dry_run: bool = False,
) -> ResolveOutcome:
    """Settle an operation whose outcome is uncertain, as azync's
    ``Manager.ResolveUncertain`` does: complete and fail record the outcome in the
    history and schedule the workflow task; retry re-queues the operation."""
    try:
        job = store.find_job(job_id)
    except NotFound:
        raise _not_an_operation(store, job_id) from None
    if job.source != Source.WORKFLOW or job.run_id is None:
        raise WrongVerb(
            f"job {str(job_id)[:8]} is a {job.source} job, not a workflow operation; "
            "resolve takes the id of an uncertain operation (`qctl workflows show ID`)"
        )
    require_state(
        "resolve uncertain",
        f"operation {str(job_id)[:8]}",
        job.state,
        {JobState.UNCERTAIN},
        "resolve",
    )
    decision = UncertainDecision(decision)
    event = "" if decision == UncertainDecision.RETRY else _outcome(job.meta, decision, result)[0]
    if dry_run:
        return ResolveOutcome(job.id, decision, job.run_id, event, True)
    wf_id, wf_name = store.resolve_uncertain(job.id, decision.value, result)
    if decision != UncertainDecision.RETRY:
        store.append_history(wf_id, *_outcome(job.meta, decision, result))
        store.schedule_task(wf_id, wac.task_kind(wf_name or job.meta.get("workflow_name", "")))
    return ResolveOutcome(job.id, decision, wf_id, event)


def _not_an_operation(store: ConsoleStore, id: uuid.UUID) -> Exception:
    """The refusal of ``resolve`` on an id that is no job: a workflow id names the
    uncertain operations to pass instead."""
    try:
        store.get_workflow_execution(id)
    except NotFound:
        return NotFound("resolve uncertain", f"no job {id}")
    ops = store.search_jobs(
        JobSearch(source=Source.WORKFLOW, state=JobState.UNCERTAIN, run_id=id), limit=10
    )
    if not ops:
        return WrongVerb(
            f"{str(id)[:8]} is a workflow execution, not an operation; "
            "it has no uncertain operation to resolve"
        )
    names = ", ".join(f"{o.id} ({o.kind})" for o in ops)
    return WrongVerb(
        f"{str(id)[:8]} is a workflow execution, not an operation; "
        f"pass its uncertain operation instead: {names}"
    )


def _outcome(
    meta: dict[str, str], decision: UncertainDecision, result: Any
) -> tuple[str, dict[str, Any]]:
    """The history event azync's runtime replays for a resolved operation (its durable
    wire format: empty fields omitted)."""
    payload: dict[str, Any] = {
        "name": meta.get("op_name", ""),
        "version": meta.get("op_version", ""),
    }
    if meta.get("execution_key"):
        payload["execution_key"] = meta["execution_key"]
    if decision == UncertainDecision.COMPLETE:
        if result is not None:
            payload["result"] = result
        return "OperationCompleted", payload
    error = result.get("error") if isinstance(result, dict) else None
    payload["error"] = error if isinstance(error, str) and error else "uncertain: fail"
    return "OperationFailed", payload
