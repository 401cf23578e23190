"""``qctl top`` on a DBOS database: the dashboard shell with DBOS's screens."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from qctl.cli import common
from qctl.systems.dbos.cli.base import (
    database,
)

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database


def top(
    ctx: typer.Context,
    refresh: common.Refresh = 2.0,
) -> None:
    """Live dashboard of a DBOS system database (polling): overview, workflows with
    their steps and tree of child workflows, queues, schedules; cancel, resume, fork,
    rewind and delete, one workflow or the marked ones (hidden by --read-only). Press ?
    in it for the keys."""
    db = database(ctx)
    code = dashboard(db, common.cli(ctx).describe(), db.read_only, refresh)
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line


def dashboard(db: Database, location: str, read_only: bool, refresh: float) -> int:
    """``qctl top``'s shell with DBOS's screens (``qctl.systems.dbos.tui``)."""
    from qctl.systems.dbos.tui import DBOS
    from qctl.tui.app import run

    return run(db, system=DBOS, location=location, read_only=read_only, poll_interval=refresh)
