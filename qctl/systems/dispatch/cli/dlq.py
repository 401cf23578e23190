"""``qctl dlq`` on a dispatch database: list, show, replay, purge."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_object, emit_rows, page_note
from qctl.systems.dispatch import actions, reads
from qctl.systems.dispatch.cli import Many, database, group, report, writable

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
IdsArg = Annotated[
    list[str], typer.Argument(metavar="ID...", help="DLQ entry ids or unique prefixes.")
]


@app.command("list")
def list_dlq(
    ctx: typer.Context,
    queue: Annotated[
        Many, typer.Option("--queue", metavar="QUEUE", help="Queue (repeatable).")
    ] = None,
    name: Annotated[
        Many, typer.Option("--name", metavar="NAME", help="Job name (repeatable).")
    ] = None,
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
    cursor = reads.Cursor.decode(after) if after else None
    entries = reads.list_dlq(database(ctx), queue, name, replayed, limit, cursor)
    emit_rows([reads.as_record(e) for e in entries], LIST_COLUMNS, output)
    last = entries[-1] if len(entries) == limit else None
    page_note(
        output, len(entries), None, reads.Cursor(last.failed_at, last.id).encode() if last else None
    )


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One DLQ entry: the failed job, its error, retries, scope and payload."""
    db = database(ctx)
    emit_object(reads.as_record(reads.get_dlq(db, reads.resolve_dlq(db, id))), output)


@app.command("replay")
def replay(
    ctx: typer.Context,
    ids: IdsArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueue DLQ entries again as new pending jobs (dispatch's DLQ replay), each entry
    once: it is marked replayed in the transaction that enqueues its job."""
    db = writable(ctx, "dlq replay", dry_run)
    resolved = [reads.resolve_dlq(db, i) for i in ids]
    plans = [actions.replay(db, entry_id, True) for entry_id in resolved]
    if not dry_run:
        common.confirm(f"Replay {len(resolved)} dispatch DLQ entr(ies)?", yes)
        plans = [actions.replay(db, entry_id, False) for entry_id in resolved]
    for done in plans:
        word = "would replay" if dry_run else "replayed"
        new = f" as {done.new_job_id}" if done.new_job_id else ""
        report(
            done.__dict__,
            f"{word} DLQ entry {done.entry_id} ({done.job_name}){new}",
            dry_run,
            output,
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
    if not dry_run and plan.count:
        common.confirm(
            f"Delete {plan.count} dispatch DLQ entr(ies) older than {older_than}"
            f" ({plan.unreplayed} never replayed)?",
            yes,
        )
    done = plan if dry_run or not plan.count else actions.purge(db, keep)
    word = "would delete" if dry_run else "deleted"
    report(
        done.__dict__,
        f"{word} {done.count} DLQ entr(ies) older than {older_than}"
        f" ({done.unreplayed} never replayed)",
        dry_run,
        output,
    )
