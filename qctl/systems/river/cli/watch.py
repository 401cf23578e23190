"""``qctl watch`` on a River database: River's own notifications as JSON lines."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.systems.river.cli import database
from qctl.systems.river.database import TOPICS


def watch(
    ctx: typer.Context,
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel", metavar="TOPIC", help="Only these topics of River's (repeatable): "
            + ", ".join(TOPICS) + " (the schema prefix is added).",
        ),
    ] = None,
) -> None:  # fmt: skip
    """Print River's notifications on this schema's topics as they are sent, one JSON
    line each (``channel``: ``<schema>.<topic>`` as River names it, ``payload``, ``at``),
    until Ctrl-C (exit 0): inserts of available jobs (a queue, at most once per queue per
    client fetch cooldown), control (cancel, pause, resume), leadership (resigned). A lost
    connection is retried (from 0.5 s, doubling to 30 s); once back, a note says that
    notifications sent meanwhile were lost. On SQLite River's outbox (river_notification)
    is polled, as River's clients poll it."""
    from qctl.cli.watch import follow
    from qctl_kit.errors import InvalidInput

    for t in channel or ():
        if t not in TOPICS:
            raise InvalidInput(f"--channel: {t!r} is not one of River's ({', '.join(TOPICS)})")
    db = database(ctx)
    follow(db, [db.channel(t) for t in channel or TOPICS])
