"""``qctl jobs`` on an Oban database: list, show, errors, retry, cancel, delete."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_detail, page_note, stream_listing
from qctl.cli.verbs import job_command
from qctl.core.parse import parse_fragment
from qctl.core.sqldb import row_record
from qctl.systems.oban import actions, reads
from qctl.systems.oban.cli import Many, database, group, writable
from qctl.systems.oban.database import STATES, Database

app = group("jobs")

LIST_COLUMNS = [
    "id",
    "state",
    "queue",
    "worker",
    "priority",
    "attempt",
    "max_attempts",
    "scheduled_at",
    "attempted_by",
    "tags",
    "error_count",
]
ERROR_COLUMNS = ["attempt", "at", "error"]
FAILURE_COLUMNS = ["id", "state", "queue", "worker", "attempt", "at", "error"]

IdArg = Annotated[str, typer.Argument(metavar="ID", help="Oban job id (a number).")]
OptionalIds = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="Oban job ids; or select by filter."),
]
StateOpt = Annotated[
    Many,
    typer.Option(
        "--state", metavar="STATE", help="Job state (repeatable): " + ", ".join(STATES) + "."
    ),
]
QueueOpt = Annotated[Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable).")]
WorkerOpt = Annotated[Many, typer.Option("--worker", metavar="WORKER", help="Worker (repeatable).")]
CONTAINS_HELP = (
    " (PostgreSQL's @>: nested objects and arrays contained; repeatable, merged; KEY=VALUE:"
    " one key of a string, KEY:=JSON: of any value)."
)
ArgsOpt = Annotated[
    Many,
    typer.Option(
        "--args", metavar="JSON", help="Jobs whose args contain this JSON object" + CONTAINS_HELP
    ),
]
MetaOpt = Annotated[
    Many,
    typer.Option(
        "--meta", metavar="JSON", help="Jobs whose meta contain this JSON object" + CONTAINS_HELP
    ),
]


def _after(text: str | None) -> int | None:
    return None if text is None else reads.parse_id(text, "--after")


@app.command("list")
def list_jobs(
    ctx: typer.Context,
    state: StateOpt = None,
    queue: QueueOpt = None,
    worker: WorkerOpt = None,
    args: ArgsOpt = None,
    meta: MetaOpt = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Jobs, newest first, one page at a time (keyset on the id: ``--after`` the cursor
    the previous page printed). A table shows the columns above; JSON every column, args
    and meta decoded, instants in UTC (errors: `jobs show`, `jobs errors`)."""
    states = reads.check_states(state)
    contains = {"args": parse_fragment(args, "--args"), "meta": parse_fragment(meta, "--meta")}
    start = _after(after)
    db = database(ctx)
    shown, position = stream_listing(
        lambda n, at: reads.list_jobs(db, states, queue, worker, n, at, **contains),
        lambda job: job.id,
        lambda job: {k: v for k, v in row_record(job).items() if k != "errors"},
        LIST_COLUMNS,
        output,
        limit,
        start,
    )
    page_note(output, shown, None, str(position) if position else None)


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One job: every column, args and meta decoded, every instant in UTC, and its
    errors, one per failed attempt (Oban's attempt history: which attempt, when, the
    error)."""
    db = database(ctx)
    job = reads.get_job(db, reads.parse_id(id))
    record = row_record(job)
    head = {k: v for k, v in record.items() if k != "errors"}
    emit_detail(output, head, record, [(reads.attempt_errors(job), ERROR_COLUMNS)])


@app.command("errors")
def errors(
    ctx: typer.Context,
    state: StateOpt = None,
    queue: QueueOpt = None,
    worker: WorkerOpt = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """The failed attempts of the jobs that hold any, newest job first (keyset on the
    job's id), each job's attempts newest first: which attempt, when and the error."""
    states = reads.check_states(state)
    start = _after(after)
    db = database(ctx)
    shown, position = stream_listing(
        lambda n, at: reads.failures(db, states, queue, worker, n, at),
        lambda page: page[0],
        lambda page: {"id": page[0], "attempts": [row_record(f) for f in page[1]]},
        FAILURE_COLUMNS,
        output,
        limit,
        start,
        shown=lambda page: row_record(page[1][0]) if page[1] else {"id": page[0]},
    )
    page_note(output, shown, None, str(position) if position else None)


def _where(
    state: StateOpt = None,
    queue: QueueOpt = None,
    worker: WorkerOpt = None,
    args: ArgsOpt = None,
    meta: MetaOpt = None,
) -> dict[str, Any]:
    return {
        "states": reads.check_states(state),
        "queues": queue,
        "workers": worker,
        "args": parse_fragment(args, "--args"),
        "meta": parse_fragment(meta, "--meta"),
    }


def _resolve(_: Database, id: str) -> str:
    return str(reads.parse_id(id))


job_command(
    app,
    actions.RETRY,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Make jobs available to run now, as Oban's retry does: max_attempts raised to one
    past the attempt when they are spent, the finished instants cleared (oban-py also
    empties meta.uniq_bmp). By id, or every job the filters match (without --state:
    retryable, discarded and cancelled). An executing, available or suspended job is
    passed over.""",
)
job_command(
    app,
    actions.CANCEL,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Cancel jobs, as Oban's cancel does: a job waiting to run is cancelled now; an
    executing one is signalled (pkill on Oban's signal channel) and the node running it
    cancels it (on oban-py its row is left to that node; Elixir's engine marks it
    cancelled too, and so does qctl there). By id, or every unfinished job the filters
    match.""",
)
job_command(
    app,
    actions.DELETE,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Delete jobs for good, as Oban's delete does: never an executing one. By id, or
    every job the filters match (without --state: the finished ones, completed,
    cancelled and discarded).""",
)
