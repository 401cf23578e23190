"""``qctl jobs``: list, inspect, enqueue and act on jobs of every source."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from qctl.cli import common, verbs
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
    as_dict,
    emit_detail,
    emit_result,
    emit_rows,
    note,
    page_note,
    rows_of,
    stream_listing,
)
from qctl.cli.triage import HELP as ERRORS_HELP
from qctl.cli.triage import emit_error_groups
from qctl.core.parse import ParseError, cursor_text
from qctl.core.verbs import Selection
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import filters, options
from qctl.systems.azync.cli.options import DeadAge, KindOpt, MetaOpt, SourceOpt
from qctl_kit.decode import elapsed
from qctl_kit.errors import InvalidInput
from qctl_store.config import DEFAULT_MAX_ATTEMPTS
from qctl_store.types import EnqueueParams, Job, JobSearch, JobState, Source

# The operations layer is imported by the verbs that act, in their bodies: the reads
# (``jobs list``, ``jobs show``) start without it.

app = common.app("jobs", SYSTEM.commands["jobs"].help)

JOB_COLUMNS = [
    "id",
    "source",
    "kind",
    "state",
    "attempt",
    "max_attempts",
    "run_at",
    "enqueued_at",
    "last_error",
]
ATTEMPT_COLUMNS = ["lifetime", "attempt", "at", "error"]
PAGE = 500

ErrorOpt = filters.ErrorOpt


def job_record(job: Job, with_payload: bool = False) -> dict[str, Any]:
    """A job for output; the payload and result only when asked for (they may be large
    or sensitive), the nested event row never (``qctl events show`` has it)."""
    record = as_dict(job)
    record.pop("event", None)
    if not with_payload:
        record.pop("payload", None)
        record.pop("result", None)
    return record


def make_search(
    source: Source | None, kind: str, state: JobState | None, meta: list[str] | None, error: str
) -> JobSearch:
    return JobSearch(source=source, kind=kind, state=state, meta=options.meta(meta), error=error)


def find(ctx: typer.Context, text: str) -> Job:
    """The job ``text`` names (whole, or a unique prefix the lookup already found)."""
    return options.found(ctx, "job", text, options.store(ctx).find_job)


@app.command("list")
@filters.filtered()
def list_jobs(
    ctx: typer.Context,
    search: JobSearch,
    sort: filters.SortOpt = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """List jobs, one page at a time. In the store's per-state order; the cursor of
    the next page is printed on stderr (keep the same --sort for it). Dead jobs list
    by failure time, newest first unless --sort oldest. A --payload-contains search
    without --kind and --state (or --event, --dag, --run) scans the jobs and asks
    first on a large table.

    \b
    Example:
      qctl jobs list --state dead --kind email.send --error timeout
      qctl jobs list --kind invoice.send --state pending --payload-contains '{"customer":"42"}'
    """
    state = search.state
    search.reverse = filters.reverse(state, sort)
    store = options.store(ctx)
    filters.confirm_scan(store, search, yes)
    if not (search.event_id or search.dag_id or search.run_id) and store.listing_scans(state):
        from qctl.systems.azync.ops.views import unindexed_read

        note(
            f"no index holds this listing: it reads {unindexed_read(state)}"
            + (" (`qctl db tune` adds one for this state)" if state else "; try --state")
        )
    shown, position = stream_listing(
        lambda n, at: store.search_jobs(search, limit=n, after=at, payload=False),
        lambda job: store.job_cursor(job, state),
        job_record,
        JOB_COLUMNS,
        output,
        limit,
        options.cursor(after),
    )
    total: int | None = None
    estimated = False
    if output == OutputFormat.TABLE:
        # A first page shorter than the limit is every matching job: no count to ask.
        short = after is None and shown < limit
        total, estimated = (shown, False) if short else store.count_jobs(search)
    page_note(output, shown, total, cursor_text(position) if position else None, estimated)
    if not shown and search.kind and after is None:
        # An empty page of a typo'd kind names it, as `queues stats` does (exit 0 still).
        from qctl.systems.azync.ops.views import missing_kind

        missing = missing_kind(
            store, search.kind, [search.source] if search.source else list(Source)
        )
        if missing:
            note(missing)


@app.command(
    "errors",
    help="Dead jobs (or --state's), error-first triage (DBOS's is `workflows errors`). "
    + ERRORS_HELP.format(labels="their kinds")
    + " The dashboard's `g` on the dead jobs shows the same read."
    + "\n\n\b\nExample:\n  qctl jobs errors --kind email.send",
)
@filters.filtered()
def errors(
    ctx: typer.Context,
    search: JobSearch,
    limit: common.PageLimit = 50,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    from qctl.systems.azync.ops.views import error_groups

    if search.state is None:
        search.state = JobState.DEAD
    store = options.store(ctx)
    filters.confirm_scan(store, search, yes)
    emit_error_groups(
        error_groups(store, search), "kinds", limit, output, "--kind, --error or --older-than"
    )


def _timings(job: Job, now: datetime) -> dict[str, timedelta | None]:
    """How long the job waited to start and how long its current attempt ran."""
    waiting = job.state in (JobState.PENDING, JobState.SCHEDULED)
    queued_for = elapsed(job.enqueued_at, job.started_at or (now if waiting else None))
    end = job.completed_at or job.failed_at
    if end is None and job.state == JobState.ACTIVE:
        end = now
    ran_for = elapsed(job.started_at, end)
    if ran_for is not None and ran_for < timedelta(0):
        ran_for = None
    return {"queued_for": queued_for, "ran_for": ran_for}


@app.command("show")
def show(
    ctx: typer.Context,
    id: Annotated[
        str, typer.Argument(metavar="ID", help="Job id or unique prefix (>= 8 hex chars).")
    ],
    payload: Annotated[bool, typer.Option("--payload", help="Include payload and result.")] = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """One job: its row, timings and attempt history."""
    from qctl.systems.azync.ops.views import attempt_history

    job = find(ctx, id)
    attempts = attempt_history(options.store(ctx).job_attempts(job.source, job.id))
    record = job_record(job, payload)
    timings = _timings(job, datetime.now(UTC))
    emit_detail(
        output,
        {**record, **timings},
        {"job": record, "timings": timings, "attempts": attempts},
        [(rows_of(attempts), ATTEMPT_COLUMNS)],
    )


@app.command("attempts")
def attempts(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(metavar="ID", help="Job id or unique prefix.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """The error history of a job, one row per failed attempt, in time order; LIFETIME
    grows each time the job was retried."""
    from qctl.systems.azync.ops.views import attempt_history

    job = find(ctx, id)
    history = attempt_history(options.store(ctx).job_attempts(job.source, job.id))
    emit_rows(rows_of(history), ATTEMPT_COLUMNS, output)


@app.command("enqueue")
@common.writes
def enqueue(
    ctx: typer.Context,
    kind: Annotated[str, typer.Argument(metavar="KIND", help="Job kind.")],
    payload: Annotated[str, typer.Option("--payload", "-p", help="Payload (JSON).")] = "{}",
    delay: Annotated[
        str | None, typer.Option("--delay", metavar="DURATION", help="Run after this delay.")
    ] = None,
    at: Annotated[
        str | None, typer.Option("--at", metavar="INSTANT", help="Run at (RFC 3339 or -2h/+2h).")
    ] = None,
    max_attempts: Annotated[
        int | None,
        typer.Option("--max-attempts", metavar="N", min=1, help="Attempt budget (pinned)."),
    ] = None,
    idempotency_key: Annotated[str, typer.Option("--idempotency-key", help="Dedupe key.")] = "",
    ttl: Annotated[
        str | None,
        typer.Option("--ttl", metavar="DURATION", help="Keep the dedupe key this long."),
    ] = None,
    meta: MetaOpt = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueue a queue job."""
    if delay is not None and at is not None:
        raise ParseError("--delay and --at exclude each other")
    params = EnqueueParams(
        kind=kind,
        payload=common.json_value(payload, "--payload"),
        meta=options.meta(meta),
        run_at=common.instant(at, "--at", ago=False),
        delay=common.duration(delay, "--delay") or timedelta(0),
        max_attempts=max_attempts or DEFAULT_MAX_ATTEMPTS,
        max_attempts_explicit=max_attempts is not None,
        idempotency_key=idempotency_key,
        idempotency_ttl=common.duration(ttl, "--ttl") or timedelta(0),
    )
    from qctl.systems.azync.ops import jobs as ops_jobs

    inserted = ops_jobs.enqueue(options.writable(ctx, "jobs enqueue"), params)
    emit_result(
        {"id": params.id, "kind": kind, "inserted": inserted},
        f"enqueued {kind} job {params.id}"
        if inserted
        else f"not enqueued: idempotency key {idempotency_key!r} is taken (deduplicated)",
        output,
    )


ALL_HELP = "Every job the verb can act on (narrow it with the filters)."
AllOpt = Annotated[bool, typer.Option("--all", help=ALL_HELP)]
RetryAllOpt = Annotated[bool, typer.Option("--all", "--all-dead", help=ALL_HELP)]
"""``jobs retry`` keeps the name it had before every verb took filters."""
IdsArg = Annotated[
    list[str] | None, typer.Argument(metavar="ID...", help="Job ids or unique prefixes.")
]


def _run(
    ctx: typer.Context,
    name: str,
    ids: list[str] | None,
    all_: bool,
    search: JobSearch,
    run: verbs.Run,
    state: JobState | None = None,
) -> None:
    """The job verb ``name`` (``jobs delete``: of jobs in ``state``) over the ids, the
    filters or --plan, through the verb engine (``qctl.cli.verbs.act``)."""
    from qctl.systems.azync.ops import jobs as ops_jobs

    filtered = all_ or search != JobSearch()
    if ids and filtered:
        raise InvalidInput(f"jobs {name}: give job ids or filter options (or --all), not both")
    if name != "delete":
        verb = next(v for v in ops_jobs.VERBS if v.name == name)
    elif state is not None:
        verb = ops_jobs.deleting([state])
    elif filtered:
        raise InvalidInput("jobs delete: --state is required with filters or --all")
    else:
        verb = ops_jobs.DELETE

    def select(_: object) -> Selection | None:  # act opens options.store(ctx)'s store
        if ids:
            return Selection.of_ids([str(options.resolve(ctx, "job", text)) for text in ids])
        if filtered:
            filters.confirm_scan(options.store(ctx), search, run.yes)
            return Selection(filter=ops_jobs.job_filter(search))
        return None

    verbs.act(
        ctx,
        verb,
        options.writable,
        select,
        run,
    )


@app.command("retry")
@filters.filtered()
@verbs.running
def retry(
    ctx: typer.Context,
    ids: IdsArg = None,
    all_: RetryAllOpt = False,
    search: JobSearch = JobSearch(),
    *,
    run: verbs.Run,
) -> None:
    """Retry dead jobs: pending now, attempts cleared (azync's RetryJob). DAG tasks are
    retried through their run (`qctl dags retry`), workflow operations settled with
    `qctl workflows resolve`: both are passed over and counted.

    By id, or every job the filters match (or --all), in batches of one statement that
    checks each job again: a job that moved on meanwhile is skipped and counted by its
    state. --dry-run prints the plan (counts by state, a sample), --plan-out FILE keeps
    it, --plan FILE runs exactly its jobs; refused past --max jobs.

    \b
    Example:
      qctl jobs retry --kind email.send --error timeout --dry-run
    """
    _run(ctx, "retry", ids, all_, search, run)


@app.command("run-now")
@filters.filtered()
@verbs.running
def run_now(
    ctx: typer.Context,
    ids: IdsArg = None,
    all_: AllOpt = False,
    search: JobSearch = JobSearch(),
    *,
    run: verbs.Run,
) -> None:
    """Run scheduled jobs now (DAG tasks too; a DAG's timer is woken by `qctl dags
    signal`).

    By id, or every job the filters match (or --all), in batches of one statement that
    checks each job again: a job that moved on meanwhile is skipped and counted by its
    state. --dry-run prints the plan (counts by state, a sample), --plan-out FILE keeps
    it, --plan FILE runs exactly its jobs; refused past --max jobs.
    """
    _run(ctx, "run-now", ids, all_, search, run)


@app.command("archive")
@filters.filtered()
@verbs.running
def archive(
    ctx: typer.Context,
    ids: IdsArg = None,
    all_: AllOpt = False,
    search: JobSearch = JobSearch(),
    *,
    run: verbs.Run,
) -> None:
    """Force pending or scheduled jobs to dead. No further attempts.

    By id, or every job the filters match (or --all), in batches of one statement that
    checks each job again: a job that moved on meanwhile is skipped and counted by its
    state. --dry-run prints the plan (counts by state, a sample), --plan-out FILE keeps
    it, --plan FILE runs exactly its jobs; refused past --max jobs.
    """
    _run(ctx, "archive", ids, all_, search, run)


@app.command("pause")
@filters.filtered()
@verbs.running
def pause(
    ctx: typer.Context,
    ids: IdsArg = None,
    all_: AllOpt = False,
    search: JobSearch = JobSearch(),
    *,
    run: verbs.Run,
) -> None:
    """Pause pending or scheduled jobs (a DAG: `qctl dags pause`).

    By id, or every job the filters match (or --all), in batches of one statement that
    checks each job again: a job that moved on meanwhile is skipped and counted by its
    state. --dry-run prints the plan (counts by state, a sample), --plan-out FILE keeps
    it, --plan FILE runs exactly its jobs; refused past --max jobs.

    \b
    Example (hold every job of a kind there is now; new jobs of the kind still run,
    azync has no kind-level pause; `jobs resume --kind` undoes it):
      qctl jobs pause --kind report.build
    """
    _run(ctx, "pause", ids, all_, search, run)


@app.command("resume")
@filters.filtered()
@verbs.running
def resume(
    ctx: typer.Context,
    ids: IdsArg = None,
    all_: AllOpt = False,
    search: JobSearch = JobSearch(),
    *,
    run: verbs.Run,
) -> None:
    """Resume paused jobs (a DAG: `qctl dags retry`).

    By id, or every job the filters match (or --all), in batches of one statement that
    checks each job again: a job that moved on meanwhile is skipped and counted by its
    state. --dry-run prints the plan (counts by state, a sample), --plan-out FILE keeps
    it, --plan FILE runs exactly its jobs; refused past --max jobs.
    """
    _run(ctx, "resume", ids, all_, search, run)


@app.command("delete")
@filters.filtered(with_state=False)
@verbs.running
def delete(
    ctx: typer.Context,
    state: Annotated[
        JobState | None,
        typer.Option(
            "--state",
            help="Delete only in this state (required with filters; by id the default is "
            "dead, succeeded, cancelled or skipped).",
        ),
    ] = None,
    ids: IdsArg = None,
    all_: AllOpt = False,
    search: JobSearch = JobSearch(),
    *,
    run: verbs.Run,
) -> None:
    """Delete jobs in a given state (never active ones), with their attempt rows.

    By id, or every job in --state the filters match (or --all), in batches of one
    statement that checks each job again: a job that moved on meanwhile is skipped and
    counted by its state. --dry-run prints the plan (counts by state, a sample),
    --plan-out FILE keeps it, --plan FILE runs exactly its jobs; refused past --max jobs.

    \b
    Example:
      qctl jobs delete --all --state dead --kind report.build --dry-run
    """
    _run(ctx, "delete", ids, all_, search, run, state)


@app.command("vacuum-dead")
def vacuum_dead(
    ctx: typer.Context,
    older_than: DeadAge,
    source: SourceOpt = None,
    kind: KindOpt = "",
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete dead jobs that died longer ago than --older-than (queue and event sources
    unless --source; DAG tasks go with their run: `qctl vacuum dags`)."""
    from qctl.systems.azync.ops import jobs as ops_jobs

    age = common.duration(older_than, "--older-than") or timedelta(0)
    if not dry_run:
        common.cli(ctx).require_writable("jobs vacuum-dead")
    store = options.store(ctx)
    # Counting is a scan: only for a dry run; the guards run before the question.
    plan = ops_jobs.vacuum_dead(store, age, source, kind, dry_run=True, count=dry_run)
    if common.proceed(
        dry_run,
        yes,
        output,
        plan,
        f"would delete {plan.count} dead job(s)",
        f"Delete dead jobs that died more than {older_than} ago?",
    ):
        with common.reported(output, "dead job(s) deleted"):
            done = ops_jobs.vacuum_dead(store, age, source, kind)
        common.done(done, f"deleted {done.count} dead job(s)", output)
