"""``qctl watch`` on a DBOS database: workflows as JSON lines, polled."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.output import (
    note,
)
from qctl.systems.dbos import reads
from qctl.systems.dbos.cli.base import (
    database,
)
from qctl.systems.dbos.cli.filters import NameOpt


def watch(
    ctx: typer.Context,
    name: NameOpt = None,
    refresh: Annotated[
        float,
        # ``--refresh``, as ``qctl top`` names its polling interval on every system.
        typer.Option("--refresh", metavar="SECONDS", min=0.1, help="Polling interval."),
    ] = 1.0,
) -> None:
    """Print workflows as they are created, start and complete, as JSON lines, until
    Ctrl-C (exit 0). DBOS sends no notifications: this polls DBOS's indexes on
    created_at, started_at_epoch_ms and completed_at."""
    import json
    import sys
    import time

    db = database(ctx)
    marks = reads.WatchMarks()
    reads.changes_since(db, marks)  # from now on
    wanted = set(name or ())
    note(f"watching {db.location} (polling every {refresh:g}s; Ctrl-C to stop)")
    with common.until_stopped():
        while True:
            for change in reads.changes_since(db, marks):
                if wanted and change["name"] not in wanted:
                    continue
                sys.stdout.write(json.dumps(change, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            time.sleep(refresh)
