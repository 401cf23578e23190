"""qctl's opt-in index on ``oban_jobs`` (``qctl db tune``), in the shape every system's
share (``qctl_kit.postgres.tune``): neither flavour indexes a job's queue ahead of its
state, so a first page filtered by queue alone (``jobs list --queue Q``, the dashboard's
drill into a queue) walks the primary key until it has found a page, every row when the
queue holds few or no jobs; (queue, id) gives that page in one descent. qctl never adds
to Oban's schema otherwise."""

from __future__ import annotations

from qctl.systems.oban.database import Database
from qctl_kit.postgres.tune import PRESENT, build

QUEUE_ID = "qctl_oban_jobs_queue_id"

INDEXES = {
    QUEUE_ID: f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {QUEUE_ID} ON oban_jobs (queue, id)",
}
"""The index's definitions by name; Oban names everything ``oban_*``."""


def present(db: Database) -> list[str]:
    """The indexes of ``INDEXES`` this schema has (valid ones)."""
    rows = db.all(PRESENT, {"table": "oban_jobs", "names": list(INDEXES)})
    return sorted(str(r["name"]) for r in rows)


def tune(db: Database, dry_run: bool = False) -> list[str]:
    """Create the missing indexes of ``INDEXES`` (each CONCURRENTLY: Oban's nodes go on);
    their names. ``dry_run``: only their names."""
    have = present(db)
    missing = [name for name in INDEXES if name not in have]
    if dry_run or not missing:
        return missing
    db.writable()
    for name in missing:
        for statement in build(name, INDEXES[name]):
            db.execute(statement)
    return missing
