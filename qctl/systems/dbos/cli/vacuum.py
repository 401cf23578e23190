"""``qctl vacuum`` on a DBOS database: old finished workflows."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from qctl.cli import common, complete
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
)
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.cli.base import (
    group,
    report,
    writable,
)
from qctl.systems.dbos.cli.filters import Many

app = group("vacuum")


Statuses = Annotated[
    Many,
    typer.Option(
        "--state",
        "--status",
        metavar="STATUS",
        help="Only these finished statuses (--status: DBOS's word; default: "
        + ", ".join(reads.FINISHED)
        + ").",
        autocompletion=complete.choices(reads.FINISHED),
    ),
]
Batch = Annotated[
    int,
    typer.Option(
        "--batch",
        metavar="N",
        min=1,
        help="At most N workflows per transaction (fewer while transactions run long).",
    ),
]
KeepLast = Annotated[
    int,
    typer.Option(
        "--keep-last",
        metavar="N",
        min=0,
        help="Keep the N newest finished workflows of each name, however old.",
    ),
]


def _vacuum(
    ctx: typer.Context,
    verb: str,
    older_than: str,
    status: Many,
    batch: int,
    keep_last: int,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
) -> None:
    keep = common.duration(older_than, "--older-than") or timedelta(0)
    statuses = [s.upper() for s in status or []] or list(reads.FINISHED)
    ms = int(keep.total_seconds() * 1000)
    db = writable(ctx, f"vacuum {verb}", dry_run)
    options = {"batch": batch, "keep_last": keep_last}
    if not dry_run:
        # Validate (and count) before asking.
        planned = actions.vacuum_workflows(db, ms, statuses, dry_run=True, **options)
        if planned.count:
            common.confirm(
                f"Delete {planned.count} DBOS workflow(s) finished more than {older_than} ago"
                f"{_kept(planned)}?",
                yes,
            )
    result = actions.vacuum_workflows(db, ms, statuses, dry_run=dry_run, **options)
    word = "would delete" if dry_run else "deleted"
    # One row per table and what it removed, as every system's vacuum reports.
    tables = [{"table": t, "removed": n} for t, n in result.tables.items()]
    report(
        {**result.__dict__, "verb": f"vacuum {verb}", "system": "dbos", "tables": tables},
        f"{word} {result.count} DBOS workflow(s) ({', '.join(result.status)}) finished more"
        f" than {older_than} ago"
        + ("" if dry_run else f" in {result.batches} batch(es)")
        + _kept(result),
        dry_run,
        output,
    )


def vacuum_workflows(
    ctx: typer.Context,
    older_than: common.Retention,
    status: Statuses = None,
    batch: Batch = actions.VACUUM_BATCH,
    keep_last: KeepLast = 0,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete old finished workflows with their steps, inputs, outputs, events, messages
    and streams, in short transactions. PENDING, ENQUEUED and DELAYED workflows are never
    touched, nor is a finished workflow in a tree with an unfinished one (its parent may
    still read its result, a child its events); the report counts what was kept and
    why, and the rows removed per table. On SQLite the application's writers get the
    database between batches; on PostgreSQL the table is analyzed afterwards.
    (Open-source DBOS has no garbage collection of its own.)"""
    verb = ctx.info_name or "workflows"
    _vacuum(ctx, verb, older_than, status, batch, keep_last, dry_run, yes, output)


# Workflows are all DBOS has to vacuum: `vacuum all`, every system's verb, is the same.
app.command("all")(vacuum_workflows)
app.command("workflows")(vacuum_workflows)


def _kept(result: actions.VacuumOutcome) -> str:
    """``; kept 3 (2: an ancestor is unfinished ..., 1: ...)``, or nothing."""
    if not result.kept:
        return ""
    why = "; ".join(f"{n}: {actions.KEPT_REASONS[k]}" for k, n in sorted(result.kept.items()))
    return f"; kept {sum(result.kept.values())} old enough ({why})"
