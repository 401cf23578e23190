"""``qctl top`` on a dispatch database."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.systems.dispatch.cli import database


def top(ctx: typer.Context, refresh: common.Refresh = 2.0) -> None:
    """Live dashboard of a dispatch database (polling: dispatch v0.1.0 sends no
    notifications): queues, jobs with their detail, DLQ, cron, workers, workflow runs;
    cancel a job and replay a DLQ entry (hidden by --read-only). Press ? in it for the
    keys."""
    from qctl.systems.dispatch.tui import DISPATCH
    from qctl.tui.app import run

    db = database(ctx)
    code = run(
        db,
        system=DISPATCH,
        location=common.cli(ctx).describe(),
        read_only=db.read_only,
        poll_interval=refresh,
    )
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line
