"""``qctl watch``: change hints as JSON lines, until Ctrl-C."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.output import note, plain
from qctl.core.exits import Failed
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import SourceOpt
from qctl_store.types import ChangeEntity

POLL_SECONDS = 0.25
"""How often the loop wakes to notice Ctrl-C and closed streams."""


def watch(
    ctx: typer.Context,
    entity: Annotated[
        list[ChangeEntity] | None,
        typer.Option("--entity", "-e", help="Only these entities (repeatable; resets always)."),
    ] = None,
    source: SourceOpt = None,
) -> None:
    """Print change hints (job, dag, event; resets) as JSON lines until Ctrl-C (exit 0).
    A reset means hints were lost: re-read whatever you track."""
    store = options.store(ctx)
    sub = store.changes()
    if sub is None:
        raise Failed("the backend is poll-only: it publishes no change hints to watch")
    wanted = set(entity or ())
    note(f"watching {common.cli(ctx).describe()} (Ctrl-C to stop)")
    try:
        with common.until_stopped():
            while not sub.closed:
                change = sub.get(timeout=POLL_SECONDS)
                if change is None:
                    continue
                if change.entity != ChangeEntity.RESET:
                    if wanted and change.entity not in wanted:
                        continue
                    if source and change.source != source:
                        continue
                sys.stdout.write(json.dumps(plain(change), ensure_ascii=False) + "\n")
                sys.stdout.flush()
    finally:
        sub.close()
