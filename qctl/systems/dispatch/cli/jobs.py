"""``qctl jobs`` on a dispatch database: list, show, cancel, retry, errors."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common, complete, verbs
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_detail
from qctl.cli.triage import HELP as ERRORS_HELP
from qctl.cli.triage import emit_error_groups
from qctl.cli.verbs import job_command
from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import (
    Many,
    database,
    for_table,
    group,
    listing,
    writable,
)
from qctl_kit.errors import InvalidInput

app = group("jobs")

LIST_COLUMNS = [
    "id",
    "name",
    "queue",
    "state",
    "priority",
    "retry_count",
    "max_retries",
    "run_at",
    "created_at",
    "last_error",
]
DLQ_COLUMNS = ["id", "failed_at", "replayed_at", "error"]

IdArg = Annotated[
    str, typer.Argument(metavar="ID", help="Job id (job_...), with or without job_, or a prefix.")
]
IdsArg = Annotated[list[str], typer.Argument(metavar="ID...", help="Job ids or unique prefixes.")]
StateOpt = Annotated[
    Many,
    typer.Option(
        "--state",
        metavar="STATE",
        help="Job state (repeatable): " + ", ".join(reads.STATES) + ".",
        autocompletion=complete.choices(reads.STATES),
    ),
]
QueueOpt = Annotated[Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable).")]
NameOpt = Annotated[Many, typer.Option("--name", metavar="NAME", help="Job name (repeatable).")]


def _states(states: Many) -> list[str] | None:
    for state in states or []:
        if state not in reads.STATES:
            raise InvalidInput(f"--state: {state!r} is not a dispatch job state")
    return states


@app.command("list")
def list_jobs(
    ctx: typer.Context,
    state: StateOpt = None,
    queue: QueueOpt = None,
    name: NameOpt = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Jobs, newest first, one page at a time (keyset: ``--after`` the cursor the
    previous page printed)."""
    states = _states(state)
    db = database(ctx)
    listing(
        lambda n, at: reads.list_jobs(db, states, queue, name, n, at),
        LIST_COLUMNS,
        output,
        limit,
        after,
    )


@app.command(
    "errors",
    help="Failed jobs (or --state's), error-first triage. "
    + ERRORS_HELP.format(labels="their names")
    + " The dashboard's `g` on the jobs shows the same read.",
)
def errors(
    ctx: typer.Context,
    state: StateOpt = None,
    queue: QueueOpt = None,
    name: NameOpt = None,
    limit: common.PageLimit = 50,
    output: Output = OutputFormat.TABLE,
) -> None:
    found = reads.error_groups(database(ctx), _states(state), queue, name)
    emit_error_groups(found, "names", limit, output, "--queue or --name")


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One job: every column, its payload (JSON where it is JSON, escaped bytes
    otherwise) and its DLQ entries."""
    db = database(ctx)
    job = reads.get_job(db, reads.resolve_job(db, id))
    entries = [row_record(e) for e in reads.dlq_of_job(db, job)]
    record = row_record(job)
    emit_detail(output, for_table(record), {**record, "dlq": entries}, [(entries, DLQ_COLUMNS)])


OptionalIds = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="Job ids or unique prefixes; or select by filter."),
]


def _where(state: StateOpt = None, queue: QueueOpt = None, name: NameOpt = None) -> dict[str, Any]:
    return {"states": _states(state), "queues": queue, "names": name}


job_command(
    app,
    actions.CANCEL,
    writable,
    OptionalIds,
    reads.resolve_job,
    _where,
    """Cancel pending or retrying jobs, as dispatch's API does (state cancelled,
    completed_at now): by id, or every job the filters match. A running job is passed
    over: dispatch v0.1.0 cannot fence its worker.""",
)


@app.command("retry")
def retry(
    ctx: typer.Context,
    ids: IdsArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run failed jobs again: dispatch v0.1.0 does it only by replaying the job's DLQ
    entry, as a new job with a fresh id (the failed row stays); each entry once."""
    verbs.act(
        ctx,
        actions.REPLAY,
        lambda ctx, _, planning: writable(ctx, "jobs retry", planning),  # refused as typed
        lambda db: Selection.of_ids(
            actions.retry_entries(db, [reads.resolve_job(db, i) for i in ids])
        ),
        verbs.Run(dry_run=dry_run, yes=yes, output=output),
    )
