"""``qctl jobs`` on a River database: list, show, errors, retry, cancel, delete."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_detail, emit_rows, page_note, stream_listing
from qctl.cli.triage import HELP as ERRORS_HELP
from qctl.cli.triage import emit_error_groups
from qctl.cli.verbs import job_command
from qctl.core.parse import parse_fragment
from qctl.core.sqldb import row_record
from qctl.systems.river import actions, reads
from qctl.systems.river.cli import Many, database, group, writable
from qctl.systems.river.database import Database
from qctl_kit.errors import InvalidInput

app = group("jobs")

LIST_COLUMNS = [
    "id",
    "state",
    "queue",
    "kind",
    "priority",
    "attempt",
    "max_attempts",
    "scheduled_at",
    "attempted_by",
    "tags",
    "error_count",
]
ERROR_COLUMNS = ["attempt", "at", "error"]

IdArg = Annotated[str, typer.Argument(metavar="ID", help="River job id (a number).")]
OptionalIds = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="River job ids; or select by filter."),
]
StateOpt = Annotated[
    Many,
    typer.Option(
        "--state", metavar="STATE", help="Job state (repeatable): " + ", ".join(reads.STATES) + "."
    ),
]
QueueOpt = Annotated[Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable).")]
KindOpt = Annotated[Many, typer.Option("--kind", metavar="KIND", help="Job kind (repeatable).")]
PriorityOpt = Annotated[
    list[int] | None,
    typer.Option("--priority", metavar="N", help="Priority, 1 to 4 (repeatable)."),
]
TagOpt = Annotated[
    Many,
    typer.Option("--tag", metavar="TAG", help="Jobs carrying this tag (repeatable: every one)."),
]

CONTAINS_HELP = (
    " (repeatable, merged; KEY=VALUE: one key of a string, KEY:=JSON: of any value)."
    " PostgreSQL: River's @>, nested objects and arrays contained; SQLite: each top-level"
    " key equal, a nested value whole (as JSON text)."
)
ArgsOpt = Annotated[
    Many,
    typer.Option(
        "--args", metavar="JSON", help="Jobs whose args contain this JSON object" + CONTAINS_HELP
    ),
]
MetadataOpt = Annotated[
    Many,
    typer.Option(
        "--metadata",
        metavar="JSON",
        help="Jobs whose metadata contain this JSON object" + CONTAINS_HELP,
    ),
]


def _states(states: Many) -> list[str] | None:
    for state in states or []:
        if state not in reads.STATES:
            raise InvalidInput(f"--state: {state!r} is not a River job state")
    return states


def _where(
    state: StateOpt = None,
    queue: QueueOpt = None,
    kind: KindOpt = None,
    priority: PriorityOpt = None,
    tag: TagOpt = None,
    args: ArgsOpt = None,
    metadata: MetadataOpt = None,
) -> dict[str, Any]:
    """A bulk verb's filter (the verb engine's ``where``)."""
    return {
        "states": _states(state),
        "queues": queue,
        "kinds": kind,
        "priorities": reads.parse_priorities(priority),
        "tags": tag,
        "args": parse_fragment(args, "--args"),
        "metadata": parse_fragment(metadata, "--metadata"),
    }


@app.command("list")
def list_jobs(
    ctx: typer.Context,
    state: StateOpt = None,
    queue: QueueOpt = None,
    kind: KindOpt = None,
    priority: PriorityOpt = None,
    tag: TagOpt = None,
    args: ArgsOpt = None,
    metadata: MetadataOpt = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Jobs, newest first, one page at a time (keyset on the id: ``--after`` the cursor
    the previous page printed); of finalized states only (completed, cancelled,
    discarded), newest finalized first, as River UI lists them (keyset on finalized_at
    and id). A table shows the columns above; JSON every column, args, metadata and
    unique_states decoded (errors: `jobs show`)."""
    states = _states(state)
    priorities = reads.parse_priorities(priority)
    contains = {
        "args": parse_fragment(args, "--args"),
        "metadata": parse_fragment(metadata, "--metadata"),
    }
    start: reads.Position | None = None if after is None else reads.parse_position(after)
    db = database(ctx)

    def page(n: int, at: reads.Position | None) -> list[reads.Job]:
        return reads.list_jobs(db, states, queue, kind, n, at, priorities, tag, **contains)

    shown, position = stream_listing(
        page,
        lambda job: reads.position(job, states),
        lambda job: {k: v for k, v in row_record(job).items() if k != "errors"},
        LIST_COLUMNS,
        output,
        limit,
        start,
    )
    page_note(output, shown, None, reads.position_text(position) if position else None)


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One job: every column, args and metadata decoded, and its errors, one per failed
    attempt (River's attempt history: when, which attempt, the error; JSON also the
    trace)."""
    db = database(ctx)
    job = reads.get_job(db, reads.parse_id(id))
    record = row_record(job)
    head = {k: v for k, v in record.items() if k != "errors"}
    emit_detail(output, head, record, [(reads.attempt_errors(job), ERROR_COLUMNS)])


@app.command(
    "errors",
    help="With an ID: that job's attempt history, one row per failed attempt (River's"
    " errors: attempt, at, error; JSON also the trace), oldest first. Without: discarded"
    " and retryable jobs (or --state's), error-first triage. "
    + ERRORS_HELP.format(labels="their kinds")
    + " The dashboard's `g` on the jobs shows the same read.",
)
def errors(
    ctx: typer.Context,
    id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="A River job id: its attempts.")
    ] = None,
    state: StateOpt = None,
    queue: QueueOpt = None,
    kind: KindOpt = None,
    priority: PriorityOpt = None,
    tag: TagOpt = None,
    limit: common.PageLimit = 50,
    output: Output = OutputFormat.TABLE,
) -> None:
    states = _states(state)
    priorities = reads.parse_priorities(priority)
    if id is not None:
        if states or queue or kind or priorities or tag:
            raise InvalidInput("give a job id or filters (--state, --queue, ...), not both")
        job = reads.get_job(database(ctx), reads.parse_id(id))
        emit_rows(reads.attempt_errors(job), ERROR_COLUMNS, output)
        return
    found = reads.error_groups(database(ctx), states, kind, queue, priorities=priorities, tags=tag)
    emit_error_groups(found, "kinds", limit, output, "--kind or --queue")


def _resolve(_: Database, id: str) -> str:
    return str(reads.parse_id(id))


job_command(
    app,
    actions.RETRY,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Make jobs available to run now, as River's JobRetry does: the attempt count kept,
    max_attempts raised by one when they are spent. By id, or every job the filters match
    (without --state: discarded and cancelled). A running job is passed over, and so is
    one whose unique key another job holds.""",
)
job_command(
    app,
    actions.CANCEL,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Cancel jobs, as River's JobCancel does: a job waiting to run is finalized
    cancelled; a running one is marked (metadata cancel_attempted_at) and its client is
    told on River's control topic, which cancels the work's context (the job ends
    cancelled once its worker returns). By id, or every job not finalized the filters
    match.""",
)
job_command(
    app,
    actions.DELETE,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Delete jobs for good, as River's JobDeleteMany does: never a running one. By id,
    or every job the filters match (without --state: the finalized ones, completed,
    cancelled and discarded).""",
)
