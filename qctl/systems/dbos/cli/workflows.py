"""The command groups of a DBOS system database (``qctl.systems.dbos``): the root
command picks these instead of azync's when the database holds DBOS's tables.

Shared nouns keep azync's names and flags where they mean the same (``--name``,
``--state``, ``--limit``, ``--after``, ``--older-than``, ``--refresh``, ``-o``,
``--dry-run``, ``--yes``); ``--status``, DBOS's own word, stays accepted beside
``--state``; tests/dbos/test_shared_flags.py lists the flags only one system has.
Field names are DBOS's own (``WorkflowStatus``/``StepInfo`` of ``dbos/_sys_db.py``); in
JSON, instants are epoch milliseconds as DBOS stores them and payloads are their
symbolic decoding (``qctl.systems.dbos.payload``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common, filters
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
    emit_detail,
    emit_object,
    emit_result,
    emit_rows,
    note,
    page_note,
)
from qctl.systems.dbos import INSTALL_HINT, SYSTEM, actions, reads
from qctl_store.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext
    from qctl.systems.dbos.database import Database
    from qctl.systems.dbos.payload import Decoded

MAX_TARGETS = 10_000
"""Default cap on the workflows one bulk action takes from a filter."""


def _app(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    # A callback keeps a one-verb group a group (``qctl versions list``).
    app.callback()(lambda: None)
    return app


workflows_app = _app("workflows")
queues_app = _app("queues")
db_app = _app("db")
schedules_app = _app("schedules")
versions_app = _app("versions")
vacuum_app = _app("vacuum")


def database(ctx: typer.Context) -> Database:
    """The DBOS system database of this invocation, opened once (version checked)."""
    root = ctx.find_root()
    db: Database | None = root.meta.get("qctl.dbos.database")
    if db is None:
        from qctl.systems.dbos.database import Database

        cli = common.cli(ctx)
        if not cli.dsn:
            raise InvalidInput(
                "a DBOS system database needs --dsn (postgresql://... or sqlite:///)"
            )
        db = Database(cli.dsn, cli.schema, cli.read_only)
        root.meta["qctl.dbos.database"] = db
        root.call_on_close(db.close)
    return db


def writable(ctx: typer.Context, action: str, dry_run: bool = False) -> Database:
    """The database for a writing verb: refused first when read-only (a dry run only
    reads, so it is allowed)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    return database(ctx)


# --- rendering -----------------------------------------------------------------------

MS_FIELDS = {
    "created_at",
    "updated_at",
    "dequeued_at",
    "completed_at",
    "workflow_deadline_epoch_ms",
    "delay_until_epoch_ms",
    "started_at_epoch_ms",
    "completed_at_epoch_ms",
    "created_at_epoch_ms",
    "oldest_enqueued_at",
    "version_timestamp",
}


def _instant(ms: Any) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(int(ms) / 1000, UTC)


def _ms(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)


def _is_decoded(value: Any) -> bool:
    from qctl.systems.dbos.payload import Decoded

    return isinstance(value, Decoded)


ISO_FIELDS = {"last_fired_at"}
"""Instants DBOS stores as ISO 8601 text (``workflow_schedules``)."""


def for_table(row: dict[str, Any]) -> dict[str, Any]:
    """Instants as datetimes (shown as every table shows them), under names without
    ``_epoch_ms`` since they are dates now; payloads as their text
    (``RuntimeError('declined')``). JSON keeps DBOS's names and values (``for_json``)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in MS_FIELDS and isinstance(value, int):
            out[key.removesuffix("_epoch_ms")] = _instant(value)
        elif key in ISO_FIELDS and isinstance(value, str):
            try:
                out[key] = datetime.fromisoformat(value)
            except ValueError:
                out[key] = value
        elif _is_decoded(value):
            out[key] = value.text()
        else:
            out[key] = value
    return out


def for_json(row: dict[str, Any]) -> dict[str, Any]:
    """Payloads as ``{"serialization": ..., "value": ...}``; everything else exact."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if _is_decoded(value):
            decoded: Decoded = value
            out[key] = {"serialization": decoded.serialization, "value": decoded.json()}
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out[key] = [for_json(v) for v in value]
        else:
            out[key] = value
    return out


def _emit_list(rows: list[dict[str, Any]], columns: list[str], output: OutputFormat) -> None:
    emit_rows([for_table(r) for r in rows], columns, output, full=[for_json(r) for r in rows])


# --- filters -------------------------------------------------------------------------

Many = list[str] | None
StatusOpt = Annotated[
    Many,
    typer.Option(
        "--state",
        "--status",
        metavar="STATUS",
        help="DBOS status (repeatable; --status: DBOS's word): " + ", ".join(reads.STATUSES) + ".",
    ),
]
NameOpt = Annotated[
    Many, typer.Option("--name", metavar="NAME", help="Workflow name (repeatable).")
]
QueueOpt = Annotated[
    Many, typer.Option("--queue", metavar="QUEUE", help="Queue name (repeatable).")
]
VersionOpt = Annotated[
    Many,
    typer.Option(
        "--application-version",
        "--app-version",
        metavar="VERSION",
        help="Application version (repeatable; --app-version: DBOS's field name).",
    ),
]
AppNameOpt = Annotated[
    Many,
    typer.Option(
        "--application-name",
        metavar="NAME",
        help="Owning application (repeatable); as in DBOS's list, rows no application"
        " claims match too.",
    ),
]
ExecutorOpt = Annotated[
    Many, typer.Option("--executor", metavar="ID", help="Executor id (repeatable).")
]
UserOpt = Annotated[
    Many, typer.Option("--user", metavar="USER", help="Authenticated user (repeatable).")
]
ParentOpt = Annotated[
    Many, typer.Option("--parent", metavar="ID", help="Parent workflow id (repeatable).")
]
HasParentOpt = Annotated[
    bool | None,
    typer.Option(
        "--has-parent/--no-parent",
        help="Only child workflows (or only top-level ones).",
        show_default=False,
    ),
]
ForkedOpt = Annotated[
    bool | None,
    typer.Option("--forked/--not-forked", help="Only forks (or no forks).", show_default=False),
]
ScheduleOpt = Annotated[
    Many,
    typer.Option("--schedule", metavar="NAME", help="Started by this schedule (repeatable)."),
]
CreatedAfter = Annotated[
    str | None, typer.Option("--created-after", metavar="INSTANT", help="Created at or after.")
]
CreatedBefore = Annotated[
    str | None, typer.Option("--created-before", metavar="INSTANT", help="Created before.")
]
CompletedAfter = Annotated[
    str | None,
    typer.Option("--completed-after", metavar="INSTANT", help="Completed at or after."),
]
CompletedBefore = Annotated[
    str | None, typer.Option("--completed-before", metavar="INSTANT", help="Completed before.")
]
DequeuedAfter = Annotated[
    str | None,
    typer.Option("--dequeued-after", metavar="INSTANT", help="Dequeued (started) at or after."),
]
DequeuedBefore = Annotated[
    str | None,
    typer.Option("--dequeued-before", metavar="INSTANT", help="Dequeued (started) before."),
]
PrefixOpt = Annotated[str, typer.Option("--prefix", metavar="TEXT", help="Workflow id prefix.")]
AttrOpt = Annotated[
    Many,
    typer.Option(
        "--attribute",
        metavar="KEY=VALUE",
        help="Attribute equals (VALUE as JSON or text; repeatable: all must match).",
    ),
]

FILTERS: filters.Options = [
    ("status", StatusOpt, None),
    ("name", NameOpt, None),
    ("queue", QueueOpt, None),
    ("application_version", VersionOpt, None),
    ("application_name", AppNameOpt, None),
    ("executor", ExecutorOpt, None),
    ("user", UserOpt, None),
    ("parent", ParentOpt, None),
    ("has_parent", HasParentOpt, None),
    ("forked", ForkedOpt, None),
    ("schedule", ScheduleOpt, None),
    ("created_after", CreatedAfter, None),
    ("created_before", CreatedBefore, None),
    ("completed_after", CompletedAfter, None),
    ("completed_before", CompletedBefore, None),
    ("dequeued_after", DequeuedAfter, None),
    ("dequeued_before", DequeuedBefore, None),
    ("prefix", PrefixOpt, ""),
    ("attribute", AttrOpt, None),
]
"""DBOS's workflow filters (``list_workflows`` of dbos/_sys_db.py), declared once for
``workflows list`` and every verb that selects by filter."""


def _attributes(items: list[str] | None) -> dict[str, Any]:
    import json

    from qctl.core.parse import ParseError, parse_key_value

    out: dict[str, Any] = {}
    for item in items or []:
        try:
            key, value = parse_key_value(item)
        except ParseError as exc:
            raise ParseError(f"--attribute: {exc}") from None
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def workflow_filter(
    ctx: typer.Context | None = None,
    status: Many = None,
    name: Many = None,
    queue: Many = None,
    application_version: Many = None,
    application_name: Many = None,
    executor: Many = None,
    user: Many = None,
    parent: Many = None,
    has_parent: bool | None = None,
    forked: bool | None = None,
    schedule: Many = None,
    created_after: str | None = None,
    created_before: str | None = None,
    completed_after: str | None = None,
    completed_before: str | None = None,
    dequeued_after: str | None = None,
    dequeued_before: str | None = None,
    prefix: str = "",
    attribute: Many = None,
) -> reads.WorkflowFilter:
    """The ``WorkflowFilter`` of the filter options."""
    return reads.WorkflowFilter(
        status=tuple(s.upper() for s in status or ()),
        name=tuple(name or ()),
        queue_name=tuple(queue or ()),
        app_version=tuple(application_version or ()),
        application_name=tuple(application_name or ()),
        executor_id=tuple(executor or ()),
        user=tuple(user or ()),
        parent_workflow_id=tuple(parent or ()),
        has_parent=has_parent,
        is_fork=forked,
        schedule_name=tuple(schedule or ()),
        start_time=_ms(common.instant(created_after, "--created-after")),
        end_time=_ms(common.instant(created_before, "--created-before")),
        completed_after=_ms(common.instant(completed_after, "--completed-after")),
        completed_before=_ms(common.instant(completed_before, "--completed-before")),
        dequeued_after=_ms(common.instant(dequeued_after, "--dequeued-after")),
        dequeued_before=_ms(common.instant(dequeued_before, "--dequeued-before")),
        workflow_id_prefix=prefix,
        attributes=_attributes(attribute),
    )


def filtered(without: str = "") -> Any:
    """Give a command the filter options in place of its ``f`` parameter (``without``
    one a verb uses for something else: ``rewind --application-version`` is the version
    to run on, as in DBOS's ``rewind_workflow``)."""
    return filters.with_options("f", [o for o in FILTERS if o[0] != without], workflow_filter)


# --- workflows -----------------------------------------------------------------------

IdArg = Annotated[str, typer.Argument(metavar="ID", help="Workflow id or unique prefix.")]
IdsArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="Workflow ids (or prefixes); or select by filter."),
]
MaxOpt = Annotated[
    int,
    typer.Option("--max", metavar="N", min=1, help="Refuse when more workflows match."),
]


@workflows_app.command("list")
@filtered()
def list_workflows(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Workflows, newest first, one page at a time (keyset: ``--after`` the cursor the
    previous page printed)."""
    cursor = reads.Cursor.decode(after) if after else None
    db = database(ctx)
    rows = reads.list_workflows(db, f, limit, cursor)
    _emit_list(rows, reads.LIST_COLUMNS, output)
    page_note(
        output, len(rows), None, reads.cursor_of(rows[-1]).encode() if len(rows) == limit else None
    )


@workflows_app.command("counts")
def counts(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Workflows per status, from DBOS's partial indexes (SUCCESS is estimated on
    PostgreSQL, marked so: no index has it, and counting it would scan the history)."""
    result = reads.status_counts(database(ctx))
    rows = [
        {"status": s, "count": result.counts.get(s, 0), "estimated": s in result.estimated}
        for s in reads.STATUSES
    ]
    emit_rows(rows, ["status", "count", "estimated"], output)


STEP_COLUMNS = [
    "function_id",
    "function_name",
    "started_at",
    "completed_at",
    "output",
    "error",
    "child_workflow_id",
]


@workflows_app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One workflow: status, timings, queue, recovery attempts, timeout and deadline,
    parent, children, fork origin, input, output and error; then its steps, children,
    events and streams."""
    db = database(ctx)
    wf = reads.get_workflow(db, reads.resolve_id(db, id))
    steps = reads.list_steps(db, wf["workflow_id"])
    children = reads.related(db, "parent_workflow_id", wf["workflow_id"])
    forks = reads.related(db, "forked_from", wf["workflow_id"])
    events = reads.list_events(db, wf["workflow_id"])
    streams = reads.list_streams(db, wf["workflow_id"])
    document = {
        **wf,
        "steps": steps,
        "children": children,
        "forks": forks,
        "events": events,
        "streams": streams,
    }
    emit_detail(
        output,
        for_table(wf),
        for_json(document),
        [
            ([for_table(s) for s in steps], STEP_COLUMNS),
            ([for_table(c) for c in children], ["workflow_id", "name", "status", "created_at"]),
            ([for_table(e) for e in events], ["key", "value"]),
            ([for_table(v) for v in streams], STREAM_COLUMNS),
        ],
    )


@workflows_app.command("steps")
def steps(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """Each recorded step: function, timing, output or error, child workflow."""
    db = database(ctx)
    _emit_list(reads.list_steps(db, reads.resolve_id(db, id)), STEP_COLUMNS, output)


@workflows_app.command("events")
def events(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """The events the workflow set (``DBOS.set_event``), latest value per key."""
    db = database(ctx)
    _emit_list(reads.list_events(db, reads.resolve_id(db, id)), ["key", "value"], output)


STREAM_COLUMNS = ["key", "offset", "function_id", "value", "closed"]


@workflows_app.command("streams")
def streams(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """The values the workflow wrote to its streams (``DBOS.write_stream``), by key and
    offset; a closed stream ends in a row marked closed."""
    db = database(ctx)
    _emit_list(reads.list_streams(db, reads.resolve_id(db, id)), STREAM_COLUMNS, output)


@workflows_app.command("messages")
def messages(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """Messages sent to the workflow (``DBOS.send``), oldest first."""
    db = database(ctx)
    _emit_list(
        reads.list_messages(db, reads.resolve_id(db, id)),
        ["message_uuid", "topic", "created_at", "consumed", "message"],
        output,
    )


def _single(outcome: actions.WorkflowOutcome, done: str, output: OutputFormat) -> None:
    extra = f" as {outcome.new_workflow_id}" if outcome.new_workflow_id else ""
    prefix = "would " if outcome.dry_run else ""
    verb = outcome.action if outcome.dry_run else done
    _report(
        outcome.__dict__,
        f"{prefix}{verb} DBOS workflow {outcome.name} {outcome.workflow_id}"
        f" ({outcome.status}){extra}",
        outcome.dry_run,
        output,
    )


def _report(record: dict[str, Any], message: str, dry_run: bool, output: OutputFormat) -> None:
    """A writing verb's result; a dry run's in the form every system's dry runs share."""
    if dry_run:
        common.dry_run_report(record, message, output)
    else:
        emit_result(record, message, output)


def _bulk(
    ctx: typer.Context,
    action: str,
    done: str,
    ids: list[str] | None,
    f: reads.WorkflowFilter,
    max_targets: int,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
    **options: Any,
) -> None:
    """A verb on several ids, or on everything ``f`` matches (newest first)."""
    db = writable(ctx, f"workflows {action}", dry_run)
    if ids:
        if not f.empty():
            raise InvalidInput("give workflow ids or filter options, not both")
        targets = actions.ids_targets(db, ids)
        if _one_id(ids, f):
            actions.check(action, targets[0])
    else:
        if f.empty():
            raise InvalidInput(
                f"workflows {action}: give workflow ids or at least one filter option"
            )
        targets = actions.filter_targets(db, f, max_targets + 1)
        if len(targets) > max_targets:
            raise InvalidInput(
                f"more than {max_targets} workflows match: narrow the filter or raise --max"
            )
    verb = actions.VERBS[action]
    runnable = sum(1 for t in targets if t["status"] in verb.needs)
    if not dry_run and runnable:
        question = action.replace("-", " ").capitalize()
        common.confirm(f"{question} {runnable} DBOS workflow(s)?", yes)
    result = actions.bulk(db, action, targets, dry_run=dry_run, **options)
    record = {
        "action": action,
        "count": result.count,
        "dry_run": result.dry_run,
        "workflow_ids": [o.workflow_id for o in result.acted],
        "skipped": result.skipped,
    }
    if action == "fork" and not dry_run:
        record["new_workflow_ids"] = [o.new_workflow_id for o in result.acted]
    skipped = f"; skipped {len(result.skipped)} in another status" if result.skipped else ""
    if dry_run:
        from qctl.ops.jobs import SAMPLE

        would = f"would {action} {result.count} DBOS workflow(s){skipped}"
        sample = result.acted[:SAMPLE]
        common.dry_run_report(record, would, output, sample, ["workflow_id", "name", "status"])
        return
    emit_result(record, f"{done} {result.count} DBOS workflow(s){skipped}", output)


@workflows_app.command("cancel")
@filtered()
def cancel(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Cancel workflows: DBOS marks them CANCELLED and takes them off their queue; a
    running one stops when it next starts a step."""
    _bulk(ctx, "cancel", "cancelled", ids, f, max_targets, dry_run, yes, output)


OnQueue = Annotated[
    str | None,
    typer.Option(
        "--on-queue", metavar="QUEUE", help="Enqueue on this queue (default: DBOS's internal one)."
    ),
]


@workflows_app.command("resume")
@filtered()
def resume(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    on_queue: OnQueue = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Resume workflows from their last completed step: re-enqueued for an executor."""
    _bulk(ctx, "resume", "resumed", ids, f, max_targets, dry_run, yes, output, queue_name=on_queue)


@workflows_app.command("delete")
@filtered()
def delete(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete workflows with their steps, inputs, outputs, events, messages and streams
    (DBOS's delete_workflows)."""
    _bulk(ctx, "delete", "deleted", ids, f, max_targets, dry_run, yes, output)


FromStep = Annotated[
    int, typer.Option("--from-step", metavar="N", help="First step to run again (1-based).")
]
AppVersion = Annotated[
    str | None,
    typer.Option(
        "--application-version",
        "--app-version",
        metavar="VERSION",
        help="Run on this application version.",
    ),
]


@workflows_app.command("fork")
@filtered(without="application_version")
def fork(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    from_step: FromStep = 1,
    application_version: AppVersion = None,
    on_queue: OnQueue = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Start new workflows with these ones' inputs: the steps before --from-step are
    copied, the rest run again; the originals stay as they are."""
    actions.check_step(from_step)
    one = _one_id(ids, f)
    if one is None:
        options: dict[str, Any] = {
            "start_step": from_step,
            "application_version": application_version,
            "queue_name": on_queue,
        }
        _bulk(ctx, "fork", "forked", ids, f, max_targets, dry_run, yes, output, **options)
        return
    # One fork only adds a workflow: no question, as DBOS's own `dbos workflow fork`.
    db = writable(ctx, "workflows fork", dry_run)
    outcome = actions.fork(
        db, reads.resolve_id(db, one), from_step, application_version, on_queue, dry_run
    )
    _single(outcome, "forked", output)


def _one_id(ids: list[str] | None, f: reads.WorkflowFilter) -> str | None:
    """The id of a verb given exactly one id and no filter: refused (exit 3) in a status
    the verb does not take, where several ids or a filter skip such workflows."""
    return ids[0] if ids and len(ids) == 1 and f.empty() else None


@workflows_app.command("rewind")
@filtered(without="application_version")
def rewind(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    from_step: FromStep = 1,
    application_version: AppVersion = None,
    on_queue: OnQueue = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Rewind finished workflows to --from-step under the same ids: their history from
    that step on is discarded and they run again."""
    options: dict[str, Any] = {
        "start_step": from_step,
        "application_version": application_version,
        "queue_name": on_queue,
    }
    actions.check_step(from_step)  # before any question
    one = _one_id(ids, f)
    if one is None:
        _bulk(ctx, "rewind", "rewound", ids, f, max_targets, dry_run, yes, output, **options)
        return
    db = writable(ctx, "workflows rewind", dry_run)
    wf_id = reads.resolve_id(db, one)
    if not dry_run:
        actions.rewind(db, wf_id, dry_run=True, **options)  # refusals before the question
        common.confirm(f"Rewind DBOS workflow {wf_id} to step {from_step}?", yes)
    _single(actions.rewind(db, wf_id, dry_run=dry_run, **options), "rewound", output)


@workflows_app.command("set-delay")
@filtered()
def set_delay(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    delay: Annotated[
        str | None, typer.Option("--delay", metavar="DURATION", help="Start after this long.")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="INSTANT", help="Start at this instant.")
    ] = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Move the start of DELAYED workflows (``--delay 0s``: start now)."""
    if (delay is None) == (until is None):
        raise InvalidInput("give exactly one of --delay and --until")
    at = (
        datetime.now(UTC) + (common.duration(delay, "--delay") or timedelta(0))
        if delay is not None
        else common.instant(until, "--until")
    )
    options: dict[str, Any] = {"delay_until_epoch_ms": _ms(at) or 0}
    one = _one_id(ids, f)
    if one is None:
        _bulk(ctx, "set-delay", "delayed", ids, f, max_targets, dry_run, yes, output, **options)
        return
    db = writable(ctx, "workflows set-delay", dry_run)
    wf_id = reads.resolve_id(db, one)
    if not dry_run:
        actions.set_delay(db, wf_id, dry_run=True, **options)
        common.confirm(f"Delay DBOS workflow {wf_id} until {at:%Y-%m-%d %H:%M:%S}?", yes)
    _single(actions.set_delay(db, wf_id, dry_run=dry_run, **options), "delayed", output)


# --- queues --------------------------------------------------------------------------

QUEUE_COLUMNS = [
    "queue_name",
    "enqueued",
    "pending",
    "delayed",
    "oldest_enqueued_age",
    "concurrency",
    "worker_concurrency",
    "rate_limit_max",
    "rate_limit_period_sec",
]


def _with_age(row: dict[str, Any]) -> dict[str, Any]:
    oldest = row["oldest_enqueued_at"]
    age = None if oldest is None else datetime.now(UTC) - _instant(oldest)  # type: ignore[operator]
    return {**row, "oldest_enqueued_age": age}


@queues_app.command("list")
def queues_list(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: enqueued, running (pending) and delayed workflows, the oldest
    enqueued one's age, and the queue's concurrency and rate limits."""
    rows = reads.queue_stats(database(ctx))
    emit_rows([for_table(_with_age(r)) for r in rows], QUEUE_COLUMNS, output, full=rows)


@queues_app.command("show")
def queues_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="QUEUE", help="Queue name.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """One queue, and its enqueued and running workflows (oldest first)."""
    from qctl.core.errors import NoSuchName

    db = database(ctx)
    row = next((r for r in reads.queue_stats(db) if r["queue_name"] == name), None)
    if row is None:
        raise NoSuchName("queues show", f"no DBOS queue named {name!r}")
    waiting = reads.list_workflows(
        db, reads.WorkflowFilter(status=["ENQUEUED", "PENDING"], queue_name=[name]), 50
    )
    emit_detail(
        output,
        for_table(_with_age(row)),
        {**row, "workflows": [for_json(w) for w in waiting]},
        [([for_table(w) for w in waiting], reads.LIST_COLUMNS)],
    )


# --- schedules and application versions ---------------------------------------------

SCHEDULE_COLUMNS = [
    "schedule_name",
    "workflow_name",
    "schedule",
    "status",
    "last_fired_at",
    "queue_name",
    "cron_timezone",
]
ScheduleArg = Annotated[str, typer.Argument(metavar="NAME", help="Schedule name.")]


SCHEDULE_STATUSES = ("ACTIVE", "PAUSED")


@schedules_app.command("list")
def schedules_list(
    ctx: typer.Context,
    status: Annotated[
        Many,
        typer.Option(
            "--state",
            "--status",
            metavar="STATUS",
            help="ACTIVE or PAUSED (repeatable; --status: DBOS's word).",
        ),
    ] = None,
    name: Annotated[
        Many, typer.Option("--name", metavar="NAME", help="Workflow name (repeatable).")
    ] = None,
    prefix: Annotated[
        str, typer.Option("--prefix", metavar="TEXT", help="Schedule name prefix.")
    ] = "",
    output: Output = OutputFormat.TABLE,
) -> None:
    """Schedules (``workflow_schedules``), by name."""
    statuses = [s.upper() for s in status or []]
    bad = [s for s in statuses if s not in SCHEDULE_STATUSES]
    if bad:
        raise InvalidInput(f"--status: {bad[0]!r} is not a schedule status (ACTIVE or PAUSED)")
    rows = reads.list_schedules(database(ctx), statuses, name or [], prefix)
    _emit_list(rows, SCHEDULE_COLUMNS, output)


@schedules_app.command("show")
def schedules_show(
    ctx: typer.Context, name: ScheduleArg, output: Output = OutputFormat.TABLE
) -> None:
    """One schedule, its context decoded."""
    row = reads.get_schedule(database(ctx), name)
    emit_object(for_table(row) if output == OutputFormat.TABLE else for_json(row), output)


def _schedule_act(
    ctx: typer.Context, name: str, action: str, dry_run: bool, output: OutputFormat
) -> None:
    db = writable(ctx, f"schedules {action}", dry_run)
    call = actions.pause_schedule if action == "pause" else actions.resume_schedule
    outcome = call(db, name, dry_run)
    word = f"would {action}" if dry_run else f"{action}d"
    _report(
        outcome.__dict__, f"{word} DBOS schedule {name} (was {outcome.status})", dry_run, output
    )


@schedules_app.command("pause")
def schedules_pause(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Pause a schedule: it stops firing until resumed."""
    _schedule_act(ctx, name, "pause", dry_run, output)


@schedules_app.command("resume")
def schedules_resume(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Resume a paused schedule."""
    _schedule_act(ctx, name, "resume", dry_run, output)


@schedules_app.command("trigger")
def schedules_trigger(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run the schedule's workflow now (enqueued as DBOS's scheduler would)."""
    outcome = actions.trigger_schedule(writable(ctx, "schedules trigger", dry_run), name, dry_run)
    word = "would trigger" if dry_run else "triggered"
    ids = f": {', '.join(outcome.workflow_ids)}" if outcome.workflow_ids else ""
    _report(outcome.__dict__, f"{word} DBOS schedule {name}{ids}", dry_run, output)


@schedules_app.command("backfill")
def schedules_backfill(
    ctx: typer.Context,
    name: ScheduleArg,
    since: Annotated[str, typer.Option("--since", metavar="INSTANT", help="From (exclusive).")],
    until: Annotated[
        str, typer.Option("--until", metavar="INSTANT", help="To (exclusive).")
    ] = "now",
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueue every execution the schedule missed between --since and --until; those
    that ran are skipped (DBOS's deterministic ids)."""
    start = common.instant(since, "--since")
    end = common.instant(until, "--until")
    assert start is not None and end is not None
    db = writable(ctx, "schedules backfill", dry_run)
    if not dry_run:
        actions.backfill_schedule(db, name, start, end, dry_run=True)  # validate first
        common.confirm(f"Backfill DBOS schedule {name} from {since} to {until}?", yes)
    outcome = actions.backfill_schedule(db, name, start, end, dry_run)
    word = "would backfill" if dry_run else f"backfilled {len(outcome.workflow_ids)} run(s) of"
    _report(outcome.__dict__, f"{word} DBOS schedule {name}", dry_run, output)


@versions_app.command("list")
def versions_list(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Application versions, latest first (the first is the latest)."""
    _emit_list(
        reads.list_application_versions(database(ctx)),
        ["version_name", "version_timestamp", "created_at", "application_name"],
        output,
    )


@versions_app.command("set-latest")
def versions_set_latest(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="VERSION", help="Application version name.")],
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Make VERSION the latest application version (DBOS's
    set_latest_application_version): new scheduled runs start on it, e.g. to roll back."""
    db = writable(ctx, "versions set-latest", dry_run)
    planned = actions.set_latest_version(db, name, dry_run=True)
    if not dry_run:
        common.confirm(f"Make {name} the latest DBOS application version?", yes)
    outcome = planned if dry_run else actions.set_latest_version(db, name)
    word = "would make" if dry_run else "made"
    _report(
        outcome.__dict__,
        f"{word} {name} the latest DBOS application version (was {outcome.latest})",
        dry_run,
        output,
    )


# --- db ------------------------------------------------------------------------------


@db_app.command("status")
def db_status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context in effect, the system, backend, schema and DBOS migration version."""
    from qctl.systems.dbos.database import MAX_VERSION, MIN_VERSION

    db = database(ctx)
    emit_object(
        {
            "context": common.cli(ctx).context_name or "",
            "system": "dbos",
            "backend": db.backend,
            "location": db.location,
            "schema": db.schema or None,
            "migration_version": db.version,
            "supported_versions": f"{MIN_VERSION}-{MAX_VERSION}",
            "read_only": db.read_only,
            "change_hints": False,
        },
        output,
    )


@db_app.command("migrate")
def db_migrate(
    ctx: typer.Context,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Refused: a DBOS system database is migrated by its applications, never by qctl."""
    # azync's flags are accepted so that the same command line meets this refusal on
    # either system rather than an unknown-option error.
    raise InvalidInput(
        "qctl never migrates a DBOS system database: DBOS applications migrate it on launch "
        "(or `dbos migrate`)"
    )


# --- vacuum --------------------------------------------------------------------------


@vacuum_app.command("workflows")
def vacuum_workflows(
    ctx: typer.Context,
    older_than: common.Retention,
    status: Annotated[
        Many,
        typer.Option(
            "--state",
            "--status",
            metavar="STATUS",
            help="Only these finished statuses (--status: DBOS's word; default: "
            + ", ".join(reads.FINISHED)
            + ").",
        ),
    ] = None,
    batch: Annotated[
        int,
        typer.Option(
            "--batch",
            metavar="N",
            min=1,
            help="At most N workflows per transaction (fewer while transactions run long).",
        ),
    ] = actions.VACUUM_BATCH,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete old finished workflows with their steps, inputs, outputs, events, messages
    and streams, in short transactions. PENDING, ENQUEUED and DELAYED workflows are never
    touched. (Open-source DBOS has no garbage collection of its own.)"""
    keep = common.duration(older_than, "--older-than") or timedelta(0)
    statuses = [s.upper() for s in status or []] or list(reads.FINISHED)
    ms = int(keep.total_seconds() * 1000)
    db = writable(ctx, "vacuum workflows", dry_run)
    if not dry_run:
        # Validate (and count) before asking.
        planned = actions.vacuum_workflows(db, ms, statuses, batch, dry_run=True)
        if planned.count:
            common.confirm(
                f"Delete {planned.count} DBOS workflow(s) finished more than {older_than} ago?",
                yes,
            )
    result = actions.vacuum_workflows(db, ms, statuses, batch, dry_run)
    word = "would delete" if dry_run else "deleted"
    _report(
        result.__dict__,
        f"{word} {result.count} DBOS workflow(s) ({', '.join(result.status)}) finished more"
        f" than {older_than} ago" + ("" if dry_run else f" in {result.batches} batch(es)"),
        dry_run,
        output,
    )


# --- watch ---------------------------------------------------------------------------


def watch(
    ctx: typer.Context,
    name: NameOpt = None,
    refresh: Annotated[
        float,
        # ``--refresh``, as ``qctl top`` names its polling interval on every system.
        typer.Option("--refresh", metavar="SECONDS", min=0.1, help="Polling interval."),
    ] = 1.0,
) -> None:
    """Print workflows as they are created, start and complete, as JSON lines, until
    Ctrl-C (exit 0). DBOS sends no notifications: this polls DBOS's indexes on
    created_at, started_at_epoch_ms and completed_at."""
    import json
    import sys
    import time

    db = database(ctx)
    marks = reads.WatchMarks()
    reads.changes_since(db, marks)  # from now on
    wanted = set(name or ())
    note(f"watching {db.location} (polling every {refresh:g}s; Ctrl-C to stop)")
    try:
        while True:
            for change in reads.changes_since(db, marks):
                if wanted and change["name"] not in wanted:
                    continue
                sys.stdout.write(json.dumps(change, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            time.sleep(refresh)
    except KeyboardInterrupt:
        pass


# --- top -----------------------------------------------------------------------------


def top(
    ctx: typer.Context,
    refresh: common.Refresh = 2.0,
) -> None:
    """Live dashboard of a DBOS system database (polling): overview, workflows with
    their steps and tree of child workflows, queues, schedules; cancel, resume, fork,
    rewind and delete, one workflow or the marked ones (hidden by --read-only). Press ?
    in it for the keys."""
    db = database(ctx)
    code = _dashboard(db, common.cli(ctx).describe(), db.read_only, refresh)
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line


def _dashboard(db: Database, location: str, read_only: bool, refresh: float) -> int:
    """``qctl top``'s shell with DBOS's screens (``qctl.systems.dbos.tui``)."""
    from qctl.systems.dbos.tui import DBOS
    from qctl.tui.app import run

    return run(db, system=DBOS, location=location, read_only=read_only, poll_interval=refresh)


# --- demo ----------------------------------------------------------------------------


def demo_database_url() -> str:
    """The DBOS demo's SQLite file, beside qctl's own demo database."""
    from qctl.core.paths import demo_database_path

    return f"sqlite:///{demo_database_path().with_name('dbos-demo.sqlite')}"


def demo(
    cli: CliContext, no_tui: bool, seconds: float | None, speed: float, reset: bool, yes: bool
) -> None:
    """``qctl demo --system dbos``: a real DBOS application (``demo_app.py``) works a mixed
    workload on a system database, watched in ``qctl top`` (or headless, then a summary
    of workflows by status). A ``--dsn`` database that already holds a system's tables
    (another application's workflows, an azync store) is confirmed first."""
    import importlib.util
    import json
    import sys
    import time
    from pathlib import Path

    from qctl import systems
    from qctl.systems.dbos.app_process import AppProcess
    from qctl.systems.dbos.database import Database
    from qctl_store.dsn import sqlite_path

    if importlib.util.find_spec("dbos") is None:
        raise InvalidInput(f"the DBOS demo needs the dbos package: {INSTALL_HINT}")
    url = cli.dsn or demo_database_url()
    if not cli.dsn:
        path = Path(sqlite_path(url))
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if reset:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    elif not cli.is_postgres:
        url = f"sqlite:///{sqlite_path(url)}"
    if cli.dsn and (held := systems.holding(cli.dsn, cli.schema)):
        common.confirm(
            f"{cli.describe()} already holds {' and '.join(s.label for s in held)} tables: "
            "run a DBOS demo application on it?",
            yes,
        )
    try:
        # DBOS creates its tables in the schema qctl then reads (--schema), not in "dbos".
        schema = ["--schema", cli.schema] if cli.is_postgres and cli.schema else []
        app = AppProcess(url, "--workload", f"{2.0 * speed:g}", *schema)
    except RuntimeError as exc:
        raise InvalidInput(str(exc)) from None
    try:
        db = Database(url, cli.schema)
        try:
            if no_tui:
                sys.stderr.write(f"qctl demo: DBOS application on {db.location} for {seconds:g}s\n")
                time.sleep(seconds or 60.0)
                json.dump(reads.status_counts(db).counts, sys.stdout, indent=2, sort_keys=True)
                sys.stdout.write("\n")
            else:
                _dashboard(db, f"{db.location} (DBOS demo)", read_only=False, refresh=1.0)
        finally:
            db.close()
    finally:
        app.stop()
