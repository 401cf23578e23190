"""``qctl watch`` where a system's own software NOTIFYs (PostgreSQL): its notifications
as JSON lines, until Ctrl-C or SIGTERM (exit 0)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from qctl.cli import common
from qctl.cli.output import note


def follow(db: Any, channels: Sequence[str]) -> None:
    """Print each notification on ``channels`` (``SqlDatabase.notifications``) as one
    JSON line (``channel``, ``payload``, ``at``); a note on stderr once listening, and
    after a lost connection came back, that what was sent meanwhile is lost."""
    from qctl.core.sqldb import LISTENING

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
