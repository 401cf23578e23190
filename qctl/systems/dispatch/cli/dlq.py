"""``qctl dlq`` on a dispatch database: list, show, replay, replay-all, delete, purge."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from qctl.cli import common, verbs
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import OutputFormat, emit_object
from qctl.cli.verbs import PlanIn, PlanOut
from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import (
    Many,
    database,
    group,
    listing,
    writable,
)
from qctl_kit.errors import InvalidInput

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


@app.command("replay")
def replay(
    ctx: typer.Context,
    ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="DLQ entry ids or prefixes; or select by filter."),
    ] = None,
    queue: QueueOpt = None,
    name: NameOpt = None,
    all_entries: Annotated[
        bool, typer.Option("--all", help="Every entry not yet replayed (dispatch's replay-all).")
    ] = False,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueue DLQ entries again as new pending jobs (dispatch's DLQ replay), each entry
    once: it is marked replayed in the transaction that enqueues its job. By id, or
    every entry not yet replayed that the filters (or --all) select, newest first."""
    if ids and all_entries:
        raise InvalidInput("give DLQ entry ids or filter options, not both")
    where = {"queues": queue, "names": name, "all": all_entries}
    verbs.act(
        ctx,
        actions.REPLAY,
        writable,
        lambda db: Selection.given(ids, where, lambda i: reads.resolve_dlq(db, i)),
        max_targets=max_targets,
        dry_run=dry_run,
        yes=yes,
        output=output,
        plan_in=plan_in,
        plan_out=plan_out,
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
    replay(ctx, None, queue, None, True, max_targets, dry_run, None, None, yes, output)


DlqStateOpt = Annotated[
    Many,
    typer.Option(
        "--state",
        metavar="waiting|replayed",
        help="Entries not yet replayed, or replayed (repeatable; default: replayed).",
    ),
]


@app.command("delete")
def delete(
    ctx: typer.Context,
    ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="DLQ entry ids or prefixes; or select by filter."),
    ] = None,
    state: DlqStateOpt = None,
    queue: QueueOpt = None,
    name: NameOpt = None,
    max_targets: MaxOpt = MAX_TARGETS,
    dry_run: DryRun = False,
    plan_out: PlanOut = None,
    plan_in: PlanIn = None,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete DLQ entries for good (dispatch's DeleteDLQ): by id, or every entry the
    filters match (replayed ones unless --state waiting). An entry never replayed is its
    failed job's last copy: the plan counts them as waiting."""
    where = {"states": state, "queues": queue, "names": name}
    verbs.act(
        ctx,
        actions.DELETE_DLQ,
        writable,
        lambda db: Selection.given(ids, where, lambda i: reads.resolve_dlq(db, i)),
        max_targets=max_targets,
        dry_run=dry_run,
        yes=yes,
        output=output,
        plan_in=plan_in,
        plan_out=plan_out,
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
