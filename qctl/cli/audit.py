"""``qctl audit``: the audit trail of this machine's writes (``qctl.core.audit``),
newest first by when each started. It only reads the log, to show it."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core import audit as trail

COLUMNS = ["time", "user", "front", "system", "context", "verb", "done", "exit_status", "reason"]


def audit(
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="INSTANT", help="Written at or after (-1d, 2026-01-02)."),
    ] = None,
    verb: Annotated[
        str | None,
        typer.Option(
            "--verb",
            metavar="VERB",
            help="Only this verb, or the verbs of a noun: 'jobs retry', 'jobs'.",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", metavar="N", min=1, help="At most N entries.")
    ] = 50,
    output: Output = OutputFormat.TABLE,
) -> None:
    """The audit trail: every write qctl made from this account (command line and
    dashboard), newest first by when each started, from $XDG_STATE_HOME/qctl/audit.jsonl.
    Dry runs only read and are not recorded.

    Example:
      qctl audit --since -1d --verb jobs -o json
    """
    start = common.instant(since, "--since")
    words = (verb or "").split()
    # A write is appended when it ends, so a long one's line follows those of writes
    # that started after it: sorted by start (the entry's time), the newest line first
    # among equal times.
    entries = sorted(reversed(trail.read()), key=lambda e: str(e.get("time", "")), reverse=True)
    shown = []
    for entry in entries:
        if start and str(entry.get("time", "")) < trail.stamp(start):
            continue
        if words and str(entry.get("verb", "")).split()[: len(words)] != words:
            continue
        shown.append(entry)
        if len(shown) == limit:
            break
    emit_rows(shown, COLUMNS, output)
