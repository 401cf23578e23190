"""``qctl watch`` on a hopper database: hopper's own notifications as JSON lines."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.systems.hopper.cli import database
from qctl.systems.hopper.database import Database

CHANNELS = tuple(Database.channels)


def watch(
    ctx: typer.Context,
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel", metavar="CHANNEL", help="Only these channels (repeatable): "
            + ", ".join(CHANNELS) + ".",
        ),
    ] = None,
) -> None:  # fmt: skip
    """Print hopper's notifications as they are sent, one JSON line each (``channel``,
    ``payload``, ``at``), until Ctrl-C (exit 0). hopper's channels are not per schema:
    every hopper installation of the database sends on them. A lost connection is
    retried (from 0.5 s, doubling to 30 s); once back, a note says that notifications
    sent meanwhile were lost."""
    from qctl.cli.watch import follow
    from qctl_kit.errors import InvalidInput

    for c in channel or ():
        if c not in CHANNELS:
            raise InvalidInput(f"--channel: {c!r} is not one of hopper's ({', '.join(CHANNELS)})")
    follow(database(ctx), channel or list(CHANNELS))
