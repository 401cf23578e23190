"""``qctl top``: the live dashboard (``qctl.cli.launch`` runs the plain line without
Typer). Textual is imported only when the command runs."""

from __future__ import annotations

import typer

from qctl.cli.common import Refresh, cli


def top(
    ctx: typer.Context,
    refresh: Refresh = 2.0,
) -> None:
    """Live dashboard: queues, jobs, DAG graphs, events and workflows, with actions
    (hidden by --read-only). Press ? in it for the keys."""
    from qctl.cli.launch import dashboard

    code = dashboard(cli(ctx), refresh)
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line
