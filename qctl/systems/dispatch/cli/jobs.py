"""``qctl jobs`` on a dispatch database: list, show, cancel, retry."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common, complete
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import OutputFormat, emit_detail
from qctl.core import bulk
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import (
    Many,
    database,
    for_table,
    group,
    listing,
    writable,
)
from qctl_store.errors import InvalidInput

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


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One job: every column, its payload (JSON where it is JSON, escaped bytes
    otherwise) and its DLQ entries."""
    db = database(ctx)
    job = reads.get_job(db, reads.resolve_job(db, id))
    entries = [reads.as_record(e) for e in reads.dlq_of_job(db, job)]
    record = reads.as_record(job)
    emit_detail(output, for_table(record), {**record, "dlq": entries}, [(entries, DLQ_COLUMNS)])


OptionalIds = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="Job ids or unique prefixes; or select by filter."),
]


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    ids: OptionalIds = None,
    state: StateOpt = None,
    queue: QueueOpt = None,
    name: NameOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Cancel pending or retrying jobs, as dispatch's API does (state cancelled,
    completed_at now): by id, or every job the filters match (newest first, --max). A
    running job is refused: dispatch v0.1.0 cannot fence its worker."""
    db = writable(ctx, "jobs cancel", dry_run)
    bulk.select(ids, bool(state or queue or name), "jobs cancel", "job")
    if ids:
        targets = [reads.resolve_job(db, i) for i in ids]
    else:
        states = _states(state) or list(actions.CANCELLABLE)
        if not set(states) <= set(actions.CANCELLABLE):
            raise InvalidInput("--state: only pending or retrying jobs can be cancelled")
        found = reads.list_jobs(db, states, queue, name, max_targets + 1)
        targets = bulk.capped([j.id for j in found], max_targets, "jobs")

    def say(c: actions.Cancelled) -> str:
        return f"{'would cancel' if c.dry_run else 'cancelled'} dispatch job {c.job_id} ({c.state})"

    ask = f"Cancel {len(targets)} dispatch job(s)?"
    common.act_each(
        targets, lambda t, dry: actions.cancel(db, t, dry), say, ask, output, dry_run, yes
    )


def replayed(r: actions.Replayed) -> str:
    """A replay's outcome in words (``jobs retry`` and ``dlq replay``)."""
    new = f" as {r.new_job_id}" if r.new_job_id else ""
    return (
        f"{'would replay' if r.dry_run else 'replayed'} dispatch job {r.job_id}"
        f" from DLQ entry {r.entry_id}{new}"
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
    db = writable(ctx, "jobs retry", dry_run)
    targets = [reads.resolve_job(db, i) for i in ids]
    ask = f"Retry {len(targets)} dispatch job(s) from their DLQ entries?"
    common.act_each(
        targets, lambda t, dry: actions.retry(db, t, dry), replayed, ask, output, dry_run, yes
    )
