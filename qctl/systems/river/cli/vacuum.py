"""``qctl vacuum`` on a River database: what River's own cleaner deletes, on demand."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common, vacuum
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat
from qctl.systems.river import actions, reads
from qctl.systems.river.cli import group, writable
from qctl_kit.errors import InvalidInput

app = group("vacuum")

StateOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--state",
        metavar="STATE",
        help="Only jobs finalized in this state (repeatable): "
        + ", ".join(reads.FINALIZED_STATES)
        + " (default: all three).",
    ),
]


def _removed(deleted: dict[str, int]) -> vacuum.Removed:
    return [(f"river_job {state}", n) for state, n in deleted.items()]


@app.command("all")
def vacuum_all(
    ctx: typer.Context,
    older_than: common.Retention,
    state: StateOpt = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete the jobs River's cleaner (its leader's JobCleaner) deletes: completed,
    cancelled and discarded (or --state's of those) finalized longer ago than
    --older-than, lowest ids first, in batches of their own transactions. Jobs not
    finalized are never touched. River's cleaner keeps completed and cancelled jobs 24
    hours and discarded ones 7 days unless its client says otherwise (a retention of -1
    keeps them forever); this runs the same deletion with your age, now."""
    keep = vacuum.older_than(older_than)
    states = list(state or reads.FINALIZED_STATES)
    for s in states:
        if s not in reads.FINALIZED_STATES:
            raise InvalidInput(
                f"--state: {s!r} is not finalized; vacuum deletes "
                + ", ".join(reads.FINALIZED_STATES)
                + " jobs only"
            )
    db = writable(ctx, "vacuum all", dry_run)
    vacuum.run(
        older_than,
        lambda: _removed(actions.vacuum(db, keep, states, dry_run=True)),
        lambda: _removed(actions.vacuum(db, keep, states)),
        lambda n: f"Delete {n} finalized River job(s) older than {older_than}?",
        count_first=True,
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="River job(s) deleted",
    )
