"""``qctl jobs errors`` on every system: one output for the error groups of
``qctl.core.triage`` (the dashboard's ``g`` shows the same read)."""

from __future__ import annotations

from qctl.cli.output import OutputFormat, emit_rows, note
from qctl.core.triage import SCAN, ErrorGroups

HELP = (
    "Grouped by error fingerprint: numbers, UUIDs, hex ids, TypeIDs and quoted values"
    " folded to placeholders, so `card declined for 480` and `... for 168` are one group."
    " One row per group, largest first: its count, {labels}, first and last failure, the"
    " newest failure's id and (in JSON) its error as stored. Reads the newest"
    f" {SCAN:,}"
    " failures (ids, errors and times only); stderr says when that was fewer than all."
)
"""The part of every system's ``jobs errors`` help that says what it prints."""


def emit_error_groups(
    found: ErrorGroups, label: str, limit: int, output: OutputFormat, narrow: str
) -> None:
    """The first ``limit`` groups (``label``: the key of their per-kind counts), then on
    stderr how many groups over how many failures; ``narrow`` names the options that
    read fewer when the scan stopped short."""
    rows = [
        {
            "count": g.count,
            "error": g.fingerprint,
            label: dict(g.ranked_labels()),
            "first_failed": g.first_seen,
            "last_failed": g.last_seen,
            "newest": g.newest,
            "sample": g.sample,
        }
        for g in found.groups[:limit]
    ]
    emit_rows(rows, ["count", "error", label, "first_failed", "last_failed", "newest"], output)
    shown = f"{len(rows)} of {len(found.groups)}" if len(rows) < len(found.groups) else len(rows)
    read = f"{found.scanned} job(s)" if found.complete else f"the newest {found.scanned} jobs"
    rest = "" if found.complete else f"; narrow with {narrow} for the rest"
    note(f"{shown} distinct error(s) over {read}{rest}")
