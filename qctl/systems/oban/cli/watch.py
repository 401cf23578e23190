"""``qctl watch`` on an Oban database: Oban's own notifications as JSON lines."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.output import note
from qctl.systems.oban.cli import database

NAMES = ("insert", "signal", "leader")
"""Oban's channels qctl watches (oban-py's _notifier.py and Elixir's notifier name them
without the prefix): inserts per queue, signals (pause, resume, scale, pkill), leader
resignations."""


def watch(
    ctx: typer.Context,
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel", metavar="CHANNEL", help="Only these channels (repeatable): "
            + ", ".join(NAMES) + ".",
        ),
    ] = None,
) -> None:  # fmt: skip
    """Print Oban's notifications as they are sent, one JSON line each (``channel``,
    ``payload``, ``at``), until Ctrl-C (exit 0). Channels are Oban's prefix's own
    (``<schema>.oban_<name>``). oban-py compresses the payloads it sends itself (base64
    of gzip): those are printed decoded, as its notifier decodes them (as sent when they
    open past 64 KiB or are not gzip). A lost connection is retried (from 0.5 s,
    doubling to 30 s); once back, a note says that notifications sent meanwhile were
    lost."""
    import json
    import sys
    from datetime import UTC, datetime

    from qctl.core.sqldb import LISTENING
    from qctl_kit.errors import InvalidInput

    for c in channel or ():
        if c not in NAMES:
            raise InvalidInput(f"--channel: {c!r} is not one of Oban's ({', '.join(NAMES)})")
    db = database(ctx)
    channels = [db.channel(c) for c in channel or NAMES]
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
            line = {"channel": name, "payload": decoded(payload), "at": at}
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
            sys.stdout.flush()


def decoded(payload: str) -> str:
    """A payload as Oban's notifiers read it (``payload_text``), or as sent when it opens
    to nothing readable; never executed, only shown."""
    from qctl.systems.oban.database import payload_text

    return payload_text(payload) or payload
