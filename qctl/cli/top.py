"""``qctl top``: the live dashboard. Textual is imported only when the command runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from qctl.cli.common import Refresh, cli

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore


def top(
    ctx: typer.Context,
    refresh: Refresh = 2.0,
) -> None:
    """Live dashboard: queues, jobs, DAG graphs, events and workflows, with actions
    (hidden by --read-only). Press ? in it for the keys."""
    c = cli(ctx)
    from qctl.tui.overview_data import fetch_overview
    from qctl.tui.preload import Preload

    def open_pool() -> ConsoleStore:
        # An unreachable or unmigrated database fails in one line: checked on one plain
        # connection, as the CLI does, before a pool would log every failed attempt.
        c.store().ops_stats()
        return c.open_store(pooled=True)

    # The check, the pool and the overview's first read run while Textual is imported.
    opened = Preload(open_pool)
    overview = Preload(lambda: fetch_overview(opened.result()))
    from qctl.tui.app import run

    store = opened.result()
    try:
        code = run(
            store,
            location=c.describe(),
            read_only=c.read_only,
            poll_interval=refresh,
            preloads={"overview-pane": overview},
        )
    finally:
        # The store closes when the command ends: never under a read still running (a
        # dashboard that ended before its first frame never took the overview).
        overview.join()
    if code:
        raise typer.Exit(code)  # the dashboard printed the one line
