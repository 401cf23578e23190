"""``qctl workflows``: workflow-as-code executions."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Offset, Output, PageLimit, Yes
from qctl.cli.output import (
    OutputFormat,
    as_dict,
    emit_detail,
    emit_result,
    emit_rows,
    page_note,
    rows_of,
)
from qctl_store import wac
from qctl_store.errors import NotFound
from qctl_store.types import (
    JobState,
    SignalParams,
    Source,
    UncertainDecision,
    WorkflowFilter,
    WorkflowState,
)

if TYPE_CHECKING:
    from qctl.cli.context import AnyStore

app = common.app("workflows")

IdArg = Annotated[
    str, typer.Argument(metavar="ID", help="Workflow id or unique prefix (>= 8 hex chars).")
]
WORKFLOW = common.Target(
    "workflows", "workflow", "workflow", lambda s, i: s.get_workflow_execution(i)
)
WF_COLUMNS = [
    "id",
    "name",
    "version",
    "state",
    "task_queue",
    "created_at",
    "completed_at",
    "failure_reason",
]


@app.command("list")
def list_workflows(
    ctx: typer.Context,
    name: Annotated[str, typer.Option("--name", help="Only this workflow name.")] = "",
    state: Annotated[WorkflowState | None, typer.Option("--state", help="Execution state.")] = None,
    limit: PageLimit = 50,
    offset: Offset = 0,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Executions, newest first."""
    rows, total = common.store(ctx).list_workflow_executions(
        WorkflowFilter(name=name, state=state), offset, limit
    )
    emit_rows(rows_of(rows), WF_COLUMNS, output)
    page_note(len(rows), total, offset, output)


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One execution and its history."""
    store = common.store(ctx)
    wf_id = common.resolve(ctx, "workflow", id)
    execution = store.get_workflow_execution(wf_id)
    history = store.list_history(wf_id)
    emit_detail(
        output,
        as_dict(execution),
        {"workflow": execution, "history": history},
        [(rows_of(history), ["seq", "type", "created_at", "payload"])],
    )


@app.command("signal")
def signal(
    ctx: typer.Context,
    id: IdArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Signal name.")],
    payload: Annotated[str | None, typer.Option("--payload", "-p", help="JSON payload.")] = None,
    message_id: Annotated[str, typer.Option("--message-id", help="Dedupe id.")] = "",
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Send a signal to an execution."""
    store = common.writable(ctx, "workflows signal")
    wf_id = common.resolve(ctx, "workflow", id)
    recorded = store.signal_workflow(
        SignalParams(
            workflow_id=wf_id,
            name=name,
            message_id=message_id,
            payload=common.json_value(payload, "--payload"),
        )
    )
    emit_result(
        {"id": wf_id, "signal": name, "recorded": recorded},
        f"signal {name!r} to workflow {wf_id} "
        + ("recorded" if recorded else f"was a duplicate (message id {message_id!r})"),
        output,
    )


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    id: IdArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Cancel an execution."""
    common.act(
        ctx,
        WORKFLOW,
        id,
        "cancel",
        "cancelled",
        output,
        lambda s, i: s.cancel_workflow_execution(i),
        destructive=True,
        yes=yes,
        dry_run=dry_run,
    )


@app.command("suspend")
def suspend(
    ctx: typer.Context,
    id: IdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (shown on the execution).")],
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Suspend an execution until resumed."""
    common.act(
        ctx,
        WORKFLOW,
        id,
        "suspend",
        "suspended",
        output,
        lambda s, i: s.suspend_workflow(i, reason),
    )


@app.command("resume")
def resume(
    ctx: typer.Context, id: IdArg, yes: Yes = False, output: Output = OutputFormat.TABLE
) -> None:
    """Resume a suspended execution. Its workflow task is re-enqueued, as azync's
    workflow.Manager does: tasks that arrived while suspended were consumed."""

    def call(store: AnyStore, wf_id: uuid.UUID) -> None:
        name = store.get_workflow_execution(wf_id).name
        store.resume_workflow(wf_id)
        store.schedule_task(wf_id, wac.task_kind(name))

    common.act(ctx, WORKFLOW, id, "resume", "resumed", output, call)


@app.command("resolve")
def resolve(
    ctx: typer.Context,
    job_id: Annotated[
        str, typer.Argument(metavar="JOB_ID", help="Uncertain operation job id or prefix.")
    ],
    decision: Annotated[
        UncertainDecision, typer.Argument(metavar="DECISION", help="complete, fail or retry.")
    ],
    result: Annotated[
        str | None, typer.Option("--result", help="JSON result (with complete).")
    ] = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Settle an operation whose outcome is uncertain. As azync's workflow.Manager does:
    complete/fail record the outcome in the history and wake the workflow; retry
    re-queues the operation.

    \b
    Example:
      qctl workflows resolve 7c1d04aa complete --result '{"charged": true}'
    """
    store = common.writable(ctx, "workflows resolve")
    op_id = common.resolve(ctx, "job", job_id)
    job = store.find_job(op_id)
    if job.source != Source.WORKFLOW or job.state != JobState.UNCERTAIN:
        raise NotFound("resolve uncertain", f"job {op_id} is {job.source} {job.state}")
    value = common.json_value(result, "--result")
    wf_id, wf_name = store.resolve_uncertain(op_id, decision.value, value)
    if decision != UncertainDecision.RETRY:
        store.append_history(wf_id, *_outcome(job.meta, decision, value))
        store.schedule_task(wf_id, wac.task_kind(wf_name or job.meta.get("workflow_name", "")))
    emit_result(
        {"job_id": op_id, "decision": decision, "workflow_id": wf_id},
        f"resolved operation {op_id} as {decision} (workflow {wf_id})",
        output,
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


@app.command("stalled")
def stalled(
    ctx: typer.Context,
    older_than: Annotated[
        str, typer.Option("--older-than", metavar="DURATION", help="Idle for longer than.")
    ] = "15m",
    limit: Annotated[
        int, typer.Option("--limit", "-n", metavar="N", min=1, help="At most this many.")
    ] = 100,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Stuck running executions. Nothing scheduled, no progress for --older-than."""
    age = common.duration(older_than, "--older-than") or timedelta(0)
    rows = common.store(ctx).list_stalled_workflows(age, limit)
    emit_rows(rows_of(rows), ["id", "name"], output)
