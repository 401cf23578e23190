"""``qctl jobs`` on a hopper database: list, show, retry, cancel (live jobs and
history together, as hopper's own ``hopper jobs list|get|retry|cancel``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any

import typer

from qctl.cli import common, complete
from qctl.cli.common import MAX_TARGETS, After, DryRun, MaxOpt, Output, PageLimit, Yes
from qctl.cli.output import OutputFormat, emit_detail, page_note, stream_listing
from qctl.core import bulk
from qctl.systems.hopper import actions, reads
from qctl.systems.hopper.cli import database, group, writable
from qctl.systems.hopper.database import Database
from qctl_store.errors import InvalidInput

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
    return {**reads.as_record(job), "last_error": job.last_error}


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
    deps = [reads.as_record(d) for d in reads.job_deps(db, job.id)]
    record = _record(job)
    head = {k: v for k, v in record.items() if k != "errors"}
    emit_detail(
        output, head, {**record, "deps": deps}, [(job.errors, ERROR_COLUMNS), (deps, DEP_COLUMNS)]
    )


def _targets(
    db: Database,
    ids: Many,
    states: list[str] | None,
    kind: Many,
    queue: Many,
    allowed: tuple[str, ...],
    verb: str,
    max_targets: int,
) -> list[uuid.UUID]:
    """Jobs by id, or every job the filters match (newest first, at most ``--max``)."""
    bulk.select(ids, bool(states or kind or queue), f"jobs {verb}", "job")
    if ids:
        return [reads.resolve_job(db, i) for i in ids]
    states = states or list(allowed)
    if not set(states) <= set(allowed):
        raise InvalidInput(f"--state: jobs {verb} takes {', '.join(allowed)} jobs")
    found = reads.list_jobs(db, states, kind, queue, max_targets + 1)
    return bulk.capped([j.id for j in found], max_targets, "jobs")


def _run(
    ctx: typer.Context,
    verb: str,
    act: Callable[[Database, uuid.UUID, bool], Any],
    allowed: tuple[str, ...],
    say: Callable[[Any], str],
    ids: Many,
    state: Many,
    kind: Many,
    queue: Many,
    max_targets: int,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
) -> None:
    db = writable(ctx, f"jobs {verb}", dry_run)
    targets = _targets(db, ids, _states(state), kind, queue, allowed, verb, max_targets)
    ask = f"{verb.capitalize()} {len(targets)} hopper job(s)?"
    common.act_each(targets, lambda t, dry: act(db, t, dry), say, ask, output, dry_run, yes)


CANCELLABLE = reads.LIVE_STATES
RETRYABLE = ("available", "scheduled", "retryable", "completed", "cancelled", "discarded")


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    ids: OptionalIds = None,
    state: StateOpt = None,
    kind: KindOpt = None,
    queue: QueueOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Cancel jobs as hopper's JobCancel does: a waiting job moves to history as
    cancelled (its workflow dependents cancelled, its batch counted down, callbacks
    and promotions as hopper's finalize does); a running job is only asked to cancel
    (cancel_requested_at, NOTIFY hopper_control): its client finalizes it. By id, or
    every live job the filters match (newest first, --max)."""

    def say(c: actions.Cancelled) -> str:
        verb = {"cancelled": "cancel", "cancel requested": "request cancel of"}[c.outcome]
        done = {"cancelled": "cancelled", "cancel requested": "requested cancel of"}[c.outcome]
        extra = f", {c.cascaded} dependent(s) cancelled" if c.cascaded else ""
        return f"{'would ' + verb if c.dry_run else done} hopper job {c.job_id} ({c.state}){extra}"

    _run(ctx, "cancel", actions.cancel, CANCELLABLE, say, ids, state, kind, queue,
         max_targets, dry_run, yes, output)  # fmt: skip


@app.command("retry")
def retry(
    ctx: typer.Context,
    ids: OptionalIds = None,
    state: StateOpt = None,
    kind: KindOpt = None,
    queue: QueueOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run jobs again now as hopper's JobRetry does: a waiting job's schedule brought
    forward; a finalized one moved back from history with its attempts and errors (one
    more attempt if it had run out); then NOTIFY hopper_insert. Refused: running jobs,
    pending workflow steps, a live job holding the same unique key. By id, or every job
    the filters match (default: discarded and cancelled; newest first, --max)."""
    if not ids and not state and (kind or queue):
        state = ["discarded", "cancelled"]

    def say(r: actions.Retried) -> str:
        where = " from history" if r.from_history else ""
        if r.from_history and r.batch_id:
            where += f" (batch {r.batch_id} counted it already: hopper counts it again)"
        return (
            f"{'would retry' if r.dry_run else 'retried'} hopper job {r.job_id} ({r.state}){where}"
        )

    _run(ctx, "retry", actions.retry, RETRYABLE, say, ids, state, kind, queue,
         max_targets, dry_run, yes, output)  # fmt: skip
