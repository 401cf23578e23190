"""``qctl workflows`` on a DBOS database: list, show, steps, events, streams, messages;
cancel, resume, delete, fork, rewind, set-delay, one workflow or many."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import (
    OutputFormat,
    emit_detail,
    emit_result,
    emit_rows,
    page_note,
    stream_listing,
)
from qctl.core import bulk
from qctl.core.errors import NoSuchName
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.cli.base import (
    database,
    emit_list,
    for_json,
    for_table,
    group,
    report,
    to_ms,
    writable,
)
from qctl.systems.dbos.cli.filters import filtered
from qctl_store.errors import InvalidInput

app = group("workflows")


IdArg = Annotated[str, typer.Argument(metavar="ID", help="Workflow id or unique prefix.")]
IdsArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="Workflow ids (or prefixes); or select by filter."),
]


@app.command("list")
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
    db = database(ctx)
    # Machine forms carry each workflow's output and error (cut); a table stays one line
    # a workflow: `workflows show` and `workflows errors` show them.
    table = output == OutputFormat.TABLE
    shown, position = stream_listing(
        lambda n, at: reads.list_workflows(db, f, n, at, payloads=not table),
        reads.cursor_of,
        for_json,
        reads.LIST_COLUMNS + ([] if table else ["output", "error"]),
        output,
        limit,
        reads.Cursor.decode(after) if after else None,
        shown=for_table,
    )
    page_note(output, shown, None, position.encode() if position else None)


ERROR_COLUMNS = ["count", "status", "name", "error", "last_created_at", "workflow_id"]


@app.command("errors")
@filtered(without="status")
def errors(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    limit: common.PageLimit = 50,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Failed workflows (ERROR, MAX_RECOVERY_ATTEMPTS_EXCEEDED) grouped by error
    fingerprint (numbers, UUIDs, hex ids, TypeIDs and quoted values folded), largest group
    first, with their newest workflow's id: error-first triage. JSON gives the newest
    one's error, decoded, beside the fingerprint."""
    groups = reads.error_groups(database(ctx), f, limit)
    table = [
        {
            **g,
            "status": g["status"] + (f" +{g['statuses'] - 1}" if g["statuses"] > 1 else ""),
            "name": (g["name"] or "") + (f" +{g['names'] - 1}" if g["names"] > 1 else ""),
            "error": "(none recorded)" if g["error"] is None else g["fingerprint"],
        }
        for g in groups
    ]
    emit_rows(
        [for_table(g) for g in table], ERROR_COLUMNS, output, full=[for_json(g) for g in groups]
    )


@app.command("counts")
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


RawField = Annotated[
    str | None,
    typer.Option(
        "--raw",
        metavar="FIELD",
        help="Write this payload exactly as stored, undecoded and uncut, instead of the"
        f" detail: {', '.join(reads.RAW_FIELDS)} (to a pipe or --raw-to).",
    ),
]
RawTo = Annotated[
    Path | None,
    typer.Option("--raw-to", metavar="PATH", help="The file --raw writes (else stdout)."),
]


@app.command("show")
def show(
    ctx: typer.Context,
    id: IdArg,
    raw: RawField = None,
    raw_to: RawTo = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """One workflow: status, timings, queue, recovery attempts, timeout and deadline,
    parent, children, fork origin, input, output and error; then its steps, children,
    events and streams."""
    if raw is not None or raw_to is not None:
        _write_raw(ctx, id, raw, raw_to, output)
        return
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


def _write_raw(
    ctx: typer.Context, id: str, raw: str | None, to: Path | None, output: OutputFormat
) -> None:
    """The stored text's bytes (UTF-8, as both backends keep TEXT) to ``to`` or stdout:
    never decoded, and never to a terminal, where its control characters would act."""
    if raw is None:
        raise InvalidInput("--raw-to: give --raw FIELD too")
    if to is None and sys.stdout.isatty():
        raise InvalidInput(
            "--raw: a stored value is not written to a terminal unsanitised:"
            " pipe it or give --raw-to PATH"
        )
    db = database(ctx)
    wf_id = reads.resolve_id(db, id)
    text = reads.raw_payload(db, wf_id, raw)
    if text is None:
        raise NoSuchName("raw payload", f"workflow {wf_id}'s {raw} is NULL: nothing stored")
    data = text.encode()
    if to is None:
        typer.get_binary_stream("stdout").write(data)
        return
    try:
        to.write_bytes(data)
    except OSError as exc:
        raise InvalidInput(f"--raw-to: cannot write {str(to)!r}: {exc.strerror}") from None
    emit_result(
        {"workflow_id": wf_id, "field": raw, "path": str(to), "bytes": len(data)},
        f"wrote {wf_id}'s {raw} as stored ({len(data)} bytes) to {to}",
        output,
    )


@app.command("steps")
def steps(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """Each recorded step: function, timing, output or error, child workflow."""
    db = database(ctx)
    emit_list(reads.list_steps(db, reads.resolve_id(db, id)), STEP_COLUMNS, output)


@app.command("events")
def events(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """The events the workflow set (``DBOS.set_event``), latest value per key."""
    db = database(ctx)
    emit_list(reads.list_events(db, reads.resolve_id(db, id)), ["key", "value"], output)


STREAM_COLUMNS = ["key", "offset", "function_id", "value", "closed"]


@app.command("streams")
def streams(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """The values the workflow wrote to its streams (``DBOS.write_stream``), by key and
    offset; a closed stream ends in a row marked closed."""
    db = database(ctx)
    emit_list(reads.list_streams(db, reads.resolve_id(db, id)), STREAM_COLUMNS, output)


@app.command("messages")
def messages(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """Messages sent to the workflow (``DBOS.send``), oldest first."""
    db = database(ctx)
    emit_list(
        reads.list_messages(db, reads.resolve_id(db, id)),
        ["message_uuid", "topic", "created_at", "consumed", "message"],
        output,
    )


def _record(
    action: str,
    acted: list[actions.WorkflowOutcome],
    skipped: list[dict[str, str]],
    dry_run: bool,
) -> dict[str, Any]:
    """Every workflow verb's one JSON shape, for one id as for many: the ids it acted on
    (or would), a result per workflow, what it skipped; a fork's new ids in
    ``new_workflow_ids`` (in the order of ``workflow_ids``; empty in a dry run)."""
    record: dict[str, Any] = {
        "action": action,
        "count": len(acted),
        "dry_run": dry_run,
        "workflow_ids": [o.workflow_id for o in acted],
        "results": [o.__dict__ for o in acted],
        "skipped": skipped,
    }
    if action == "fork":
        record["new_workflow_ids"] = [o.new_workflow_id for o in acted if o.new_workflow_id]
    return record


def _single(outcome: actions.WorkflowOutcome, done: str, output: OutputFormat) -> None:
    extra = f" as {outcome.new_workflow_id}" if outcome.new_workflow_id else ""
    prefix = "would " if outcome.dry_run else ""
    verb = outcome.action if outcome.dry_run else done
    report(
        _record(outcome.action, [outcome], [], outcome.dry_run),
        f"{prefix}{verb} DBOS workflow {outcome.name} {outcome.workflow_id}"
        f" ({outcome.status}){extra}",
        outcome.dry_run,
        output,
    )


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
    tree: bool = False,
    **options: Any,
) -> None:
    """A verb on several ids, or on everything ``f`` matches (newest first); with
    ``tree``, on their descendants too."""
    db = writable(ctx, f"workflows {action}", dry_run)
    bulk.select(ids, not f.empty(), f"workflows {action}", "workflow")
    if ids:
        targets = actions.ids_targets(db, ids)
        if _one_id(ids, f) and not tree:
            actions.check(action, targets[0])
    else:
        targets = bulk.capped(
            actions.filter_targets(db, f, max_targets + 1), max_targets, "workflows"
        )
    given = {t["workflow_id"] for t in targets}
    if tree:
        targets = actions.with_descendants(db, targets, max_targets)
    verb = actions.VERBS[action]
    runnable = sum(1 for t in targets if t["status"] in verb.needs)
    if not dry_run and runnable:
        question = action.replace("-", " ").capitalize()
        common.confirm(f"{question} {runnable} DBOS workflow(s)?", yes)
    with common.reported(output):
        result = actions.bulk(db, action, targets, dry_run=dry_run, **options)
    record = _record(action, result.acted, result.skipped, result.dry_run)
    if tree:
        record["descendants"] = len(targets) - len(given)
    skipped = verb.skipped([s["status"] for s in result.skipped])
    if tree:
        skipped = f" ({len(targets) - len(given)} of them descendants){skipped}"
    if dry_run:
        would = f"would {action} {result.count} DBOS workflow(s){skipped}"
        sample = result.acted[: bulk.SAMPLE]
        common.dry_run_report(record, would, output, sample, ["workflow_id", "name", "status"])
        return
    emit_result(record, f"{done} {result.count} DBOS workflow(s){skipped}", output)


OlderThan = Annotated[
    str | None,
    typer.Option(
        "--older-than",
        metavar="DURATION",
        help="Unfinished workflows created more than this long ago (a global timeout).",
    ),
]
Children = Annotated[
    bool,
    typer.Option(
        "--children",
        help="Every workflow they started too, at any depth (DBOSClient's cancel_children"
        " / delete_children); the dry run lists them.",
    ),
]


@app.command("cancel")
@filtered()
def cancel(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    older_than: OlderThan = None,
    children: Children = False,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Cancel workflows: DBOS marks them CANCELLED and takes them off their queue; a
    running one stops when it next starts a step. ``--older-than D``: a global timeout,
    every unfinished workflow created more than D ago (with the filters). --children:
    their descendants too."""
    if older_than is not None:
        age = common.duration(older_than, "--older-than") or timedelta(0)
        f = actions.unfinished_older_than(f, int(age.total_seconds() * 1000))
    _bulk(ctx, "cancel", "cancelled", ids, f, max_targets, dry_run, yes, output, children)


OnQueue = Annotated[
    str | None,
    typer.Option(
        "--on-queue", metavar="QUEUE", help="Enqueue on this queue (default: DBOS's internal one)."
    ),
]


@app.command("resume")
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
    """Resume workflows from their last completed step: re-enqueued for an executor.
    DBOS cannot resume ERROR (or SUCCESS) workflows: `rewind` runs one again under its id
    from a step, `fork` as a new workflow."""
    _bulk(ctx, "resume", "resumed", ids, f, max_targets, dry_run, yes, output, queue_name=on_queue)


@app.command("delete")
@filtered()
def delete(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    children: Children = False,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete workflows with their steps, inputs, outputs, events, messages and streams
    (DBOS's delete_workflows). --children: their descendants too."""
    _bulk(ctx, "delete", "deleted", ids, f, max_targets, dry_run, yes, output, children)


FromStep = Annotated[
    int, typer.Option("--from-step", metavar="N", help="First step to run again (1-based).")
]
AppVersion = Annotated[
    str | None,
    typer.Option(
        "--application-version",
        "--app-version",
        metavar="VERSION",
        help="Run on this registered application version (fork's default: none, so"
        " executors of the latest version run it; rewind's: the workflow's own).",
    ),
]
PartitionKey = Annotated[
    str | None,
    typer.Option(
        "--partition-key",
        metavar="KEY",
        help="The queue_partition_key on a partitioned --on-queue (default: the"
        " workflow's own; refused when it has none).",
    ),
]


@app.command("fork")
@filtered(without="application_version")
def fork(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    from_step: FromStep = 1,
    application_version: AppVersion = None,
    on_queue: OnQueue = None,
    forked_workflow_id: Annotated[
        str | None,
        typer.Option(
            "--forked-workflow-id", metavar="ID", help="The new workflow's id (one fork only)."
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option("--timeout", metavar="DURATION", help="The new workflows' timeout."),
    ] = None,
    partition_key: PartitionKey = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Start new workflows with these ones' inputs: the steps before --from-step are
    copied, the rest run again; the originals stay as they are."""
    actions.check_step(from_step)
    timeout_seconds = None
    if timeout is not None:
        timeout_seconds = (common.duration(timeout, "--timeout") or timedelta(0)).total_seconds()
        actions.check_timeout(timeout_seconds)
    one = _one_id(ids, f)
    if one is None:
        if forked_workflow_id is not None:
            raise InvalidInput("--forked-workflow-id names one fork: give one workflow id")
        options: dict[str, Any] = {
            "start_step": from_step,
            "application_version": application_version,
            "queue_name": on_queue,
            "timeout_seconds": timeout_seconds,
            "queue_partition_key": partition_key,
        }
        _bulk(ctx, "fork", "forked", ids, f, max_targets, dry_run, yes, output, **options)
        return
    # One fork only adds a workflow: no question, as DBOS's own `dbos workflow fork`.
    db = writable(ctx, "workflows fork", dry_run)
    outcome = actions.fork(
        db,
        reads.resolve_id(db, one),
        from_step,
        application_version,
        on_queue,
        dry_run,
        queue_partition_key=partition_key,
        forked_workflow_id=forked_workflow_id,
        timeout_seconds=timeout_seconds,
    )
    _single(outcome, "forked", output)


def _one_id(ids: list[str] | None, f: reads.WorkflowFilter) -> str | None:
    """The id of a verb given exactly one id and no filter: refused (exit 3) in a status
    the verb does not take, where several ids or a filter skip such workflows."""
    return ids[0] if ids and len(ids) == 1 and f.empty() else None


@app.command("rewind")
@filtered(without="application_version")
def rewind(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    from_step: FromStep = 1,
    application_version: AppVersion = None,
    on_queue: OnQueue = None,
    partition_key: PartitionKey = None,
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
        "queue_partition_key": partition_key,
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


@app.command("set-delay")
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
    options: dict[str, Any] = {"delay_until_epoch_ms": to_ms(at) or 0}
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


@app.command("send")
def send(
    ctx: typer.Context,
    id: IdArg,
    message: Annotated[
        str, typer.Argument(metavar="MESSAGE", help="The message: JSON, or else text.")
    ],
    topic: Annotated[
        str | None, typer.Option("--topic", metavar="TOPIC", help="DBOS.recv's topic.")
    ] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key", metavar="KEY", help="Send once: a repeat with it is a no-op."
        ),
    ] = None,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Send a message to an unfinished workflow, which receives it in DBOS.recv (as
    DBOSClient.send, in DBOS's portable JSON, which every application reads)."""
    from qctl.systems.dbos import writes

    db = writable(ctx, "workflows send", dry_run)
    wf_id = reads.resolve_id(db, id)
    outcome = writes.send(db, wf_id, _json_or_text(message), topic, idempotency_key, dry_run)
    on = f" on topic {topic}" if topic else ""
    word = "would send" if dry_run else "sent"
    report(outcome.__dict__, f"{word} a message{on} to DBOS workflow {wf_id}", dry_run, output)


def _json_or_text(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


@app.command("set-attributes")
def set_attributes(
    ctx: typer.Context,
    id: IdArg,
    pairs: Annotated[
        list[str] | None,
        typer.Argument(metavar="[KEY=VALUE]...", help="Attributes (VALUE as JSON or text)."),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option("--replace", help="These become all its attributes (none: clear them)."),
    ] = False,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Set a workflow's attributes (DBOS's update_workflow_attributes): merged into its
    own, or with --replace in place of them."""
    from qctl.core.parse import ParseError, parse_key_value
    from qctl.systems.dbos import writes

    attributes: dict[str, Any] = {}
    for item in pairs or []:
        try:
            key, value = parse_key_value(item)
        except ParseError as exc:
            raise InvalidInput(f"attribute: {exc}") from None
        attributes[key] = _json_or_text(value)
    db = writable(ctx, "workflows set-attributes", dry_run)
    wf_id = reads.resolve_id(db, id)
    planned = writes.set_attributes(db, wf_id, attributes or None, replace, dry_run=True)
    if not dry_run and replace:
        common.confirm(f"Replace every attribute of DBOS workflow {wf_id}?", yes)
    outcome = planned if dry_run else writes.set_attributes(db, wf_id, attributes or None, replace)
    word = "would set" if dry_run else "set"
    report(outcome.__dict__, f"{word} the attributes of DBOS workflow {wf_id}", dry_run, output)
