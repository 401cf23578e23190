"""``qctl vacuum`` on a dispatch database: what dispatch keeps forever and no longer
reads."""

from __future__ import annotations

import typer

from qctl.cli import common, vacuum
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat
from qctl.systems.dispatch import actions
from qctl.systems.dispatch.cli import group, writable

app = group("vacuum")


def _removed(outcome: actions.Vacuumed) -> vacuum.Removed:
    return [
        ("dispatch_jobs", outcome.jobs),
        ("dispatch_events", outcome.events),
        ("dispatch_dlq", outcome.dlq),
    ]


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
    keep = vacuum.older_than(older_than)
    db = writable(ctx, "vacuum all", dry_run)
    vacuum.run(
        older_than,
        lambda: _removed(actions.vacuum(db, keep, dry_run=True)),
        lambda: _removed(actions.vacuum(db, keep)),
        lambda n: f"Delete {n} dispatch row(s) older than {older_than}?",
        count_first=True,
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="dispatch row(s) deleted",
    )
