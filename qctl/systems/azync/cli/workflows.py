"""``qctl workflows``: workflow-as-code executions."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Annotated

import typer

from qctl.cli import common
from qctl.cli.common import After, DryRun, Output, PageLimit, Yes
from qctl.cli.output import (
    OutputFormat,
    as_dict,
    emit_detail,
    emit_rows,
    page_note,
    rows_of,
    stream_listing,
)
from qctl.core import parse
from qctl.core.parse import IdNotFound
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.act import act
from qctl.systems.azync.ops import workflows as ops_wf
from qctl_store.types import (
    UncertainDecision,
    WorkflowFilter,
    WorkflowState,
)

if TYPE_CHECKING:
    pass

app = common.app("workflows", SYSTEM.commands["workflows"].help)

IdArg = Annotated[
    str, typer.Argument(metavar="ID", help="Workflow id or unique prefix (>= 8 hex chars).")
]
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
    after: After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Executions, newest first."""
    store = options.store(ctx)
    flt = WorkflowFilter(name=name, state=state)
    fetch, totals = options.counted_first(
        lambda n, at: store.list_workflow_executions(flt, 0, n, at),
        lambda n, at: store.execution_page(flt, n, at),
        output == OutputFormat.TABLE,
    )

    shown, position = stream_listing(
        fetch, options.newest_first, as_dict, WF_COLUMNS, output, limit, options.cursor(after)
    )
    total = totals[0] if totals else None
    page_note(output, shown, total, parse.cursor_text(position) if position else None)


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One execution and its history."""
    store = options.store(ctx)
    execution = options.found(ctx, "workflow", id, store.get_workflow_execution)
    history = store.list_history(execution.id)
    emit_detail(
        output,
        as_dict(execution),
        {"workflow": execution, "history": history},
        [(rows_of(history), ["seq", "type", "created_at", "payload"])],
    )


@app.command("signal")
@common.writes
def signal(
    ctx: typer.Context,
    id: IdArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Signal name.")],
    payload: Annotated[str | None, typer.Option("--payload", "-p", help="JSON payload.")] = None,
    message_id: Annotated[str, typer.Option("--message-id", help="Dedupe id.")] = "",
    output: Output = OutputFormat.TABLE,
) -> None:
    """Send a signal to an execution."""
    store = options.writable(ctx, "workflows signal")
    wf_id = options.resolve(ctx, "workflow", id)
    sent = ops_wf.signal(store, wf_id, name, common.json_value(payload, "--payload"), message_id)
    common.done(
        sent,
        f"signal {name!r} to workflow {wf_id} "
        + (f"was a duplicate (message id {message_id!r})" if sent.deduplicated else "recorded"),
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
    act(
        ctx,
        "workflows",
        "workflow",
        id,
        "cancel",
        "cancelled",
        output,
        ops_wf.cancel,
        destructive=True,
        yes=yes,
        dry_run=dry_run,
    )


@app.command("suspend")
@common.writes
def suspend(
    ctx: typer.Context,
    id: IdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (shown on the execution).")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """Suspend an execution until resumed."""
    act(
        ctx,
        "workflows",
        "workflow",
        id,
        "suspend",
        "suspended",
        output,
        lambda s, i, dry: ops_wf.suspend(s, i, reason, dry),
    )


@app.command("resume")
@common.writes
def resume(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """Resume a suspended execution. Its workflow task is re-enqueued, as azync's
    workflow.Manager does: tasks that arrived while suspended were consumed."""
    act(ctx, "workflows", "workflow", id, "resume", "resumed", output, ops_wf.resume)


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
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Settle an operation whose outcome is uncertain. As azync's workflow.Manager does:
    complete/fail record the outcome in the history and wake the workflow; retry
    re-queues the operation. Irreversible: confirms (or --yes).

    \b
    Example:
      qctl workflows resolve 7c1d04aa complete --result '{"charged": true}' --yes
    """
    if not dry_run:
        common.cli(ctx).require_writable("workflows resolve")
    store = options.store(ctx)
    try:
        op_id = options.resolve(ctx, "job", job_id)
    except IdNotFound:
        # A workflow id instead: the refusal names its uncertain operations.
        op_id = options.resolve(ctx, "workflow", job_id)
    value = common.json_value(result, "--result")
    plan = ops_wf.resolve(store, op_id, decision, value, dry_run=True)
    what = f"operation {op_id} as {decision} (workflow {plan.workflow_id})"
    if common.proceed(dry_run, yes, output, plan, f"would resolve {what}", f"Resolve {what}?"):
        done = ops_wf.resolve(store, op_id, decision, value)
        common.done(done, f"resolved {what}", output)


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
    rows = options.store(ctx).list_stalled_workflows(age, limit)
    emit_rows(rows_of(rows), ["id", "name"], output)
