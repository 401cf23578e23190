"""``qctl top``: the live dashboard. Textual is imported only when the command runs."""

from __future__ import annotations

import typer

from qctl.cli.common import Refresh, cli


def top(
    ctx: typer.Context,
    refresh: Refresh = 2.0,
) -> None:
    """Live dashboard: queues, jobs, DAG graphs, events and workflows, with actions
    (hidden by --read-only). Press ? in it for the keys."""
    c = cli(ctx)
    # An unreachable or unmigrated database fails here, in one line: checked on one
    # plain connection, as the CLI does, before a pool would log every failed attempt.
    c.store().ops_stats()
    store = c.open_store(pooled=True)
    from qctl.tui.app import run

    code = run(store, location=c.describe(), read_only=c.read_only, poll_interval=refresh)
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line
