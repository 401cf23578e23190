"""``qctl vacuum`` on an Oban database: Oban's pruner, run by hand."""

from __future__ import annotations

import typer

from qctl.cli import common, vacuum
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat
from qctl.systems.oban import vacuum as ops
from qctl.systems.oban.cli import group, writable

app = group("vacuum")


@app.command("all")
def vacuum_all(
    ctx: typer.Context,
    older_than: common.Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete what Oban's pruner deletes, older than --older-than: completed jobs (by
    completed_at on oban-py, attempted_at on Elixir, as each pruner does), cancelled (by
    cancelled_at) and discarded (by discarded_at); in batches of 1000, each its own
    transaction. Executing and waiting jobs are never touched."""
    keep = vacuum.older_than(older_than)
    db = writable(ctx, "vacuum all", dry_run)
    vacuum.run(
        older_than,
        lambda: [("oban_jobs", ops.prune(db, keep, dry_run=True))],
        lambda: [("oban_jobs", ops.prune(db, keep))],
        lambda n: f"Delete {n} finished Oban job(s) older than {older_than}?",
        count_first=True,
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="Oban job(s) deleted",
    )
