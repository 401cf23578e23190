"""``qctl jobs`` on a hopper database: list, show, retry, cancel (live jobs and
history together, as hopper's own ``hopper jobs list|get|retry|cancel``), and errors."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import complete
from qctl.cli.common import After, Output, PageLimit
from qctl.cli.output import OutputFormat, emit_detail, page_note, stream_listing
from qctl.cli.triage import HELP as ERRORS_HELP
from qctl.cli.triage import emit_error_groups
from qctl.cli.verbs import job_command
from qctl.core.sqldb import row_record
from qctl.systems.hopper import actions, reads
from qctl.systems.hopper.cli import database, group, writable
from qctl.systems.hopper.database import Database
from qctl_kit.errors import InvalidInput

app = group("jobs")

LIST_COLUMNS = [
    "id",
    "kind",
    "queue",
    "state",
    "priority",
    "attempt",
    "scheduled_at",
    "created_at",
    "last_error",
]
ERROR_COLUMNS = ["attempt", "at", "error"]
DEP_COLUMNS = ["job_id", "depends_on", "on_failure"]

Many = list[str] | None
IdArg = Annotated[str, typer.Argument(metavar="ID", help="Job id (a UUID) or a unique prefix.")]
OptionalIds = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="Job ids or unique prefixes; or select by filter."),
]
StateOpt = Annotated[
    Many,
    typer.Option(
        "--state",
        metavar="STATE",
        help="Job state (repeatable): " + ", ".join(reads.STATES) + ".",
        autocompletion=complete.choices(reads.STATES),
    ),
]
KindOpt = Annotated[
    Many, typer.Option("--kind", "-k", metavar="KIND", help="Job kind (repeatable).")
]
QueueOpt = Annotated[Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable).")]


def _states(states: Many) -> list[str] | None:
    for state in states or []:
        if state not in reads.STATES:
            raise InvalidInput(f"--state: {state!r} is not a hopper job state")
    return states


def _record(job: reads.Job) -> dict[str, Any]:
    return {**row_record(job), "last_error": job.last_error}


@app.command("list")
def list_jobs(
    ctx: typer.Context,
    state: StateOpt = None,
    kind: KindOpt = None,
    queue: QueueOpt = None,
    limit: PageLimit = 50,
    after: After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Jobs, live and finalized together, newest first (hopper's ids are time-ordered),
    one page at a time (keyset: ``--after`` the cursor the previous page printed)."""
    states = _states(state)
    db = database(ctx)
    shown, position = stream_listing(
        lambda n, at: reads.list_jobs(db, states, kind, queue, n, at),
        lambda job: job.id,
        _record,
        LIST_COLUMNS,
        output,
        limit,
        reads.parse_after(after),
    )
    page_note(output, shown, None, str(position) if position else None)


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One job, live or finalized: every column, its attempt errors, its workflow edges
    still unsatisfied (what it waits on, what waits on it)."""
    db = database(ctx)
    job = reads.get_job(db, reads.resolve_job(db, id))
    deps = [row_record(d) for d in reads.job_deps(db, job.id)]
    record = _record(job)
    head = {k: v for k, v in record.items() if k != "errors"}
    emit_detail(
        output, head, {**record, "deps": deps}, [(job.errors, ERROR_COLUMNS), (deps, DEP_COLUMNS)]
    )


@app.command(
    "errors",
    help="Discarded jobs (or --state's), error-first triage. "
    + ERRORS_HELP.format(labels="their kinds")
    + " The dashboard's `g` on the jobs shows the same read.",
)
def errors(
    ctx: typer.Context,
    state: StateOpt = None,
    kind: KindOpt = None,
    queue: QueueOpt = None,
    limit: PageLimit = 50,
    output: Output = OutputFormat.TABLE,
) -> None:
    found = reads.error_groups(database(ctx), _states(state), kind, queue)
    emit_error_groups(found, "kinds", limit, output, "--kind or --queue")


def _where(state: StateOpt = None, kind: KindOpt = None, queue: QueueOpt = None) -> dict[str, Any]:
    return {"states": _states(state), "kinds": kind, "queues": queue}


def _resolve(db: Database, id: str) -> str:
    return str(reads.resolve_job(db, id))


job_command(
    app,
    actions.CANCEL,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Cancel jobs as hopper's JobCancel does: a waiting job moves to history as
    cancelled (its workflow dependents cancelled, its batch counted down, callbacks
    and promotions as hopper's finalize does); a running job is only asked to cancel
    (cancel_requested_at, NOTIFY hopper_control): its client finalizes it. By id, or
    every live job the filters match; a finalized job is passed over.""",
)
job_command(
    app,
    actions.RETRY,
    writable,
    OptionalIds,
    _resolve,
    _where,
    """Run jobs again now as hopper's JobRetry does: a waiting job's schedule brought
    forward; a finalized one moved back from history with its attempts and errors (one
    more attempt if it had run out); then NOTIFY hopper_insert. Passed over: running
    jobs, pending workflow steps, a job whose unique key a live job holds. By id, or
    every job the filters match (default: discarded and cancelled).""",
)
