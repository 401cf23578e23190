"""``qctl watch`` on a dispatch database: new jobs and DLQ entries as JSON lines."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.output import note
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli import database


def watch(
    ctx: typer.Context,
    refresh: Annotated[
        float,
        # ``--refresh``, as ``qctl top`` names its polling interval on every system.
        typer.Option("--refresh", metavar="SECONDS", min=0.1, help="Polling interval."),
    ] = 1.0,
) -> None:
    """Print jobs as they are enqueued and DLQ entries as jobs fail for good, as JSON
    lines (``kind``: ``job`` or ``dlq``), until Ctrl-C (exit 0). dispatch's only
    notification names no job, so this polls its primary keys (ids sort by creation)."""
    import json
    import sys
    import time

    db = database(ctx)
    marks = reads.watch_start(db)
    note(f"watching {db.location} (polling every {refresh:g}s; Ctrl-C to stop)")
    with common.until_stopped():
        while True:
            for change in reads.changes_since(db, marks):
                sys.stdout.write(json.dumps(change, ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
            time.sleep(refresh)
