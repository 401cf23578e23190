"""``qctl dlq`` on a dispatch database: list, show, replay, replay-all, delete, purge."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import OutputFormat, emit_object
from qctl.cli.verbs import job_command
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import (
    Many,
    database,
    group,
    listing,
    writable,
)

app = group("dlq")

LIST_COLUMNS = [
    "id",
    "job_id",
    "job_name",
    "queue",
    "retry_count",
    "failed_at",
    "replayed_at",
    "error",
]

IdArg = Annotated[
    str,
    typer.Argument(metavar="ID", help="DLQ entry id (dlq_...), with or without dlq_, or a prefix."),
]


QueueOpt = Annotated[Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable).")]
NameOpt = Annotated[Many, typer.Option("--name", metavar="NAME", help="Job name (repeatable).")]


@app.command("list")
def list_dlq(
    ctx: typer.Context,
    queue: QueueOpt = None,
    name: NameOpt = None,
    replayed: Annotated[
        bool | None,
        typer.Option(
            "--replayed/--not-replayed",
            help="Only replayed (or only waiting) entries.",
            show_default=False,
        ),
    ] = None,
    limit: common.PageLimit = 50,
    after: common.After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """DLQ entries, newest failure first, one page at a time (keyset: ``--after``)."""
    db = database(ctx)
    listing(
        lambda n, at: reads.list_dlq(db, queue, name, replayed, n, at),
        LIST_COLUMNS,
        output,
        limit,
        after,
    )


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One DLQ entry: the failed job, its error, retries, scope and payload."""
    db = database(ctx)
    emit_object(row_record(reads.get_dlq(db, reads.resolve_dlq(db, id))), output)


EntryIds = Annotated[
    list[str] | None,
    typer.Argument(metavar="[ID]...", help="DLQ entry ids or prefixes; or select by filter."),
]


def _replayed(
    queue: QueueOpt = None,
    name: NameOpt = None,
    all_entries: Annotated[
        bool, typer.Option("--all", help="Every entry not yet replayed (dispatch's replay-all).")
    ] = False,
) -> dict[str, Any]:
    return {"queues": queue, "names": name, "all": all_entries}


replay = job_command(
    app,
    actions.REPLAY,
    writable,
    EntryIds,
    reads.resolve_dlq,
    _replayed,
    """Enqueue DLQ entries again as new pending jobs (dispatch's DLQ replay), each entry
    once: it is marked replayed in the transaction that enqueues its job. By id, or
    every entry not yet replayed that the filters (or --all) select, newest first.""",
)


@app.command("replay-all")
def replay_all(
    ctx: typer.Context,
    queue: QueueOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Replay every entry not yet replayed, newest first (of --queue only), each once:
    dispatch's replay-all (api/dlq_handler.go replayAllDLQ); `dlq replay --all`."""
    replay(ctx, ids=None, max_targets=max_targets, dry_run=dry_run, plan_out=None,
           plan_in=None, yes=yes, output=output, queue=queue, all_entries=True)  # fmt: skip


DlqStateOpt = Annotated[
    Many,
    typer.Option(
        "--state",
        metavar="waiting|replayed",
        help="Entries not yet replayed, or replayed (repeatable; default: replayed).",
    ),
]


def _deleted(
    state: DlqStateOpt = None, queue: QueueOpt = None, name: NameOpt = None
) -> dict[str, Any]:
    return {"states": state, "queues": queue, "names": name}


job_command(
    app,
    actions.DELETE_DLQ,
    writable,
    EntryIds,
    reads.resolve_dlq,
    _deleted,
    """Delete DLQ entries for good (dispatch's DeleteDLQ): by id, or every entry the
    filters match (replayed ones unless --state waiting). An entry never replayed is its
    failed job's last copy: the plan counts them as waiting.""",
)


@app.command("purge")
def purge(
    ctx: typer.Context,
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            metavar="DURATION",
            help="Delete entries that failed longer ago than this.",
        ),
    ],
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete DLQ entries that failed longer ago than --older-than, replayed or not, as
    dispatch's purge does (its API uses 30d). An entry never replayed is its job's last
    copy: the question and the result count them."""
    keep = common.duration(older_than, "--older-than") or timedelta(0)
    db = writable(ctx, "dlq purge", dry_run)
    plan = actions.purge(db, keep, dry_run=True)

    def say(p: actions.Purged) -> str:
        return (
            f"{'would delete' if p.dry_run else 'deleted'} {p.count} DLQ entr(ies) older than"
            f" {older_than} ({p.unreplayed} never replayed)"
        )

    ask = (
        f"Delete {plan.count} dispatch DLQ entr(ies) older than {older_than}"
        f" ({plan.unreplayed} never replayed)?"
    )
    common.counted_delete(
        plan,
        plan.count,
        say,
        ask,
        lambda: actions.purge(db, keep),
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="DLQ entr(ies) deleted",
    )
