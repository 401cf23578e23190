"""``qctl vacuum`` on a dispatch database: what dispatch keeps forever and no longer
reads."""

from __future__ import annotations

from datetime import timedelta

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat
from qctl.systems.dispatch import actions
from qctl.systems.dispatch.cli import group, writable

app = group("vacuum")


@app.command("all")
def vacuum_all(
    ctx: typer.Context,
    older_than: common.Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete completed and cancelled jobs that finished, acked events created, and DLQ
    entries replayed longer ago than --older-than, in short transactions. Pending,
    running, retrying and failed jobs and DLQ entries never replayed are never touched
    (`dlq purge` deletes those entries). dispatch has no retention of its own."""
    keep = common.duration(older_than, "--older-than") or timedelta(0)
    db = writable(ctx, "vacuum all", dry_run)
    plan = actions.vacuum(db, keep, dry_run=True)

    def say(v: actions.Vacuumed) -> str:
        return (
            f"{'would delete' if v.dry_run else 'deleted'} {v.jobs} finished job(s),"
            f" {v.events} acked event(s) and {v.dlq} replayed DLQ entr(ies) older than"
            f" {older_than}"
        )

    total = plan.jobs + plan.events + plan.dlq
    common.counted_delete(
        plan,
        total,
        say,
        f"Delete {total} dispatch row(s) older than {older_than}?",
        lambda: actions.vacuum(db, keep),
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="dispatch row(s) deleted",
    )
