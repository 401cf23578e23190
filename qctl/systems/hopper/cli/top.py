"""``qctl top`` on a hopper database."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.systems.hopper.cli import database


def top(ctx: typer.Context, refresh: common.Refresh = 2.0) -> None:
    """Live dashboard of a hopper database (polling): queues, jobs with their detail,
    clients, workflows, stream consumers; cancel and retry a job, pause and resume a
    queue (hidden by --read-only). Press ? in it for the keys."""
    from qctl.systems.hopper.tui import HOPPER
    from qctl.tui.app import run

    db = database(ctx)
    code = run(
        db,
        system=HOPPER,
        location=common.cli(ctx).describe(),
        read_only=db.read_only,
        poll_interval=refresh,
    )
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line
