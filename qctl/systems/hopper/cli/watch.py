"""``qctl watch`` on a hopper database: hopper's own notifications as JSON lines."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.output import note
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
    import json
    import sys
    from datetime import UTC, datetime

    from qctl.core.sqldb import LISTENING
    from qctl_kit.errors import InvalidInput

    for c in channel or ():
        if c not in CHANNELS:
            raise InvalidInput(f"--channel: {c!r} is not one of hopper's ({', '.join(CHANNELS)})")
    db = database(ctx)
    channels = channel or list(CHANNELS)
    listening = False
    with common.until_stopped():
        for name, payload in db.notifications(channels):
            if name == LISTENING:
                note(
                    f"reconnected to {db.location}: notifications sent while the connection"
                    " was down are lost"
                    if listening
                    else f"watching {db.location} ({', '.join(channels)}; Ctrl-C to stop)"
                )
                listening = True
                continue
            at = datetime.now(UTC).isoformat()
            line = {"channel": name, "payload": payload, "at": at}
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
            sys.stdout.flush()
