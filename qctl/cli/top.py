"""``qctl top``: the live dashboard of every system, its tabs from the system's record
(``qctl.cli.launch`` runs the plain line without Typer). Textual is imported only when
the command runs."""

from __future__ import annotations

import typer

from qctl.cli.common import Refresh, cli


def top(
    ctx: typer.Context,
    refresh: Refresh = 2.0,
) -> None:
    """Live dashboard of the database: the system's tabs, with its actions (hidden by
    --read-only). Press ? in it for the keys and what every column means."""
    from qctl.cli.launch import dashboard

    code = dashboard(cli(ctx), refresh)
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line
