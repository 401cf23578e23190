"""``qctl workflows`` on a DBOS database: list, show, steps, events, streams, messages;
cancel, resume, delete, fork, rewind, set-delay, one workflow or many."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from qctl.cli import common, verbs
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
    emit_detail,
    emit_result,
    emit_rows,
    page_note,
    stream_listing,
)
from qctl.core.errors import NoSuchName
from qctl.core.verbs import Selection, Verb
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
from qctl.systems.dbos.database import Database
from qctl_kit.errors import InvalidInput

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


def _selection(db: Database, ids: list[str] | None, f: reads.WorkflowFilter) -> Selection | None:
    """Workflows by id (whole or a unique prefix), or by filter; None when neither is
    given."""
    if ids and not f.empty():
        raise InvalidInput("give workflow ids or filter options, not both")
    if ids:
        return Selection.of_ids([reads.resolve_id(db, i) for i in ids])
    return None if f.empty() else Selection(filter=actions.selection_filter(f))


def _act(
    ctx: typer.Context,
    verb: Verb[Database],
    ids: list[str] | None,
    f: reads.WorkflowFilter,
    run: verbs.Run,
    children: bool = False,
    check: Callable[[Database, Sequence[str]], object] | None = None,
) -> None:
    """``verb`` through the verb engine (``qctl.cli.verbs.act``); with ``children``, on
    every workflow the selected ones started too; ``check`` refuses a fork's or
    rewind's options, and a workflow named by id that they cannot take, before any
    question."""

    def select(db: Database) -> Selection | None:
        selection = _selection(db, ids, f)
        if check is not None:
            check(db, selection.ids if selection is not None else ())
        if children and selection is not None:
            selection = actions.with_descendants(db, selection, run.max_targets)
        return selection

    verbs.act(
        ctx,
        verb,
        writable,
        select,
        run,
    )


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
        " / delete_children); the plan lists them.",
    ),
]


@app.command("cancel")
@filtered()
@verbs.running
def cancel(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    older_than: OlderThan = None,
    children: Children = False,
    *,
    run: verbs.Run,
) -> None:
    """Cancel workflows: DBOS marks them CANCELLED and takes them off their queue; a
    running one stops when it next starts a step. By id, or every unfinished workflow
    the filters match. ``--older-than D``: a global timeout, every unfinished workflow
    created more than D ago (with the filters). --children: their descendants too."""
    if older_than is not None:
        age = common.duration(older_than, "--older-than") or timedelta(0)
        f = actions.unfinished_older_than(f, int(age.total_seconds() * 1000))
    _act(ctx, actions.CANCEL, ids, f, run, children)


OnQueue = Annotated[
    str | None,
    typer.Option(
        "--on-queue", metavar="QUEUE", help="Enqueue on this queue (default: DBOS's internal one)."
    ),
]


@app.command("resume")
@filtered()
@verbs.running
def resume(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    on_queue: OnQueue = None,
    *,
    run: verbs.Run,
) -> None:
    """Resume workflows from their last completed step: re-enqueued for an executor
    (DBOS's resume_workflows). DBOS cannot resume ERROR (or SUCCESS) workflows: they are
    passed over, and `rewind` runs one again under its id from a step, `fork` as a new
    workflow."""
    _act(ctx, actions.resume(on_queue), ids, f, run)


@app.command("delete")
@filtered()
@verbs.running
def delete(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    children: Children = False,
    *,
    run: verbs.Run,
) -> None:
    """Delete workflows with their steps, inputs, outputs, events, messages and streams
    (DBOS's delete_workflows). --children: their descendants too."""
    _act(ctx, actions.DELETE, ids, f, run, children)


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
        " workflow's own; a workflow with none is passed over).",
    ),
]


@app.command("fork")
@filtered(without="application_version")
@verbs.running
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
    *,
    run: verbs.Run,
) -> None:
    """Start new workflows with these ones' inputs: the steps before --from-step are
    copied, the rest run again; the originals stay as they are. One id: the new
    workflow's id is printed (no question, as DBOS's own `dbos workflow fork`)."""
    actions.check_step(from_step)
    timeout_seconds = None
    if timeout is not None:
        timeout_seconds = (common.duration(timeout, "--timeout") or timedelta(0)).total_seconds()
        actions.check_timeout(timeout_seconds)
    if ids and len(ids) == 1 and f.empty() and run.plan_in is None and run.plan_out is None:
        db = writable(ctx, "workflows fork", run.dry_run)
        outcome = actions.fork(
            db,
            reads.resolve_id(db, ids[0]),
            from_step,
            application_version,
            on_queue,
            run.dry_run,
            queue_partition_key=partition_key,
            forked_workflow_id=forked_workflow_id,
            timeout_seconds=timeout_seconds,
        )
        word = "would fork" if run.dry_run else "forked"
        made = f" as {outcome.new_workflow_id}" if outcome.new_workflow_id else ""
        report(
            outcome.__dict__,
            f"{word} DBOS workflow {outcome.name} {outcome.workflow_id} ({outcome.status}){made}",
            run.dry_run,
            run.output,
        )
        return
    if forked_workflow_id is not None:
        raise InvalidInput("--forked-workflow-id names one fork: give one workflow id")
    verb = actions.fork_verb(from_step, application_version, on_queue, partition_key,
                             timeout_seconds)  # fmt: skip
    _act(ctx, verb, ids, f, run,
         check=_placement(from_step, application_version, on_queue, partition_key))  # fmt: skip


def _placement(
    start_step: int, version: str | None, queue: str | None, key: str | None
) -> Callable[[Database, Sequence[str]], object]:
    return lambda db, ids: actions.check_placed(db, ids, start_step, version, queue, key)


@app.command("rewind")
@filtered(without="application_version")
@verbs.running
def rewind(
    ctx: typer.Context,
    f: reads.WorkflowFilter,
    ids: IdsArg = None,
    from_step: FromStep = 1,
    application_version: AppVersion = None,
    on_queue: OnQueue = None,
    partition_key: PartitionKey = None,
    *,
    run: verbs.Run,
) -> None:
    """Rewind finished workflows to --from-step under the same ids: their history from
    that step on is discarded and they run again (DBOS's rewind_workflow)."""
    actions.check_step(from_step)
    verb = actions.rewind(from_step, application_version, on_queue, partition_key)
    _act(ctx, verb, ids, f, run,
         check=_placement(from_step, application_version, on_queue, partition_key))  # fmt: skip


@app.command("set-delay")
@filtered()
@verbs.running
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
    *,
    run: verbs.Run,
) -> None:
    """Move the start of DELAYED workflows (``--delay 0s``: start now)."""
    if (delay is None) == (until is None):
        raise InvalidInput("give exactly one of --delay and --until")
    at = (
        datetime.now(UTC) + (common.duration(delay, "--delay") or timedelta(0))
        if delay is not None
        else common.instant(until, "--until")
    )
    verb = actions.set_delay(to_ms(at) or 0)
    _act(ctx, verb, ids, f, run)


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
