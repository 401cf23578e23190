"""``qctl vacuum`` on a DBOS database: old finished workflows."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from qctl.cli import common
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


@app.command("workflows")
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
    report(
        result.__dict__,
        f"{word} {result.count} DBOS workflow(s) ({', '.join(result.status)}) finished more"
        f" than {older_than} ago" + ("" if dry_run else f" in {result.batches} batch(es)"),
        dry_run,
        output,
    )
