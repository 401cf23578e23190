"""qctl's opt-in index on hopper's live table (``qctl db tune``), in the shape every
system's share (``qctl_kit.postgres.tune``): hopper's schema version 8 indexes waiting
jobs together (``hopper_jobs_claim`` holds available, scheduled and retryable) and
pending ones not at all, so the queue depths split by state read the whole live table;
(queue, state, scheduled_at) counts each queue's states on index ranges and finds each
state's oldest due job in one descent. qctl never adds to hopper's schema otherwise."""

from __future__ import annotations

from qctl.systems.hopper.database import Database
from qctl_kit.postgres.tune import PRESENT, build

QUEUE_STATE = "qctl_hopper_jobs_queue_state"

INDEXES = {
    QUEUE_STATE: f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {QUEUE_STATE}"
    " ON hopper_jobs (queue, state, scheduled_at)",
}
"""The index's definitions by name; hoppermigrate names everything ``hopper_*``."""


def present(db: Database) -> list[str]:
    """The indexes of ``INDEXES`` this schema has (valid ones)."""
    rows = db.all(PRESENT, {"table": "hopper_jobs", "names": list(INDEXES)})
    return sorted(str(r["name"]) for r in rows)


def tune(db: Database, dry_run: bool = False) -> list[str]:
    """Create the missing indexes of ``INDEXES`` (each CONCURRENTLY: writers go on);
    their names. ``dry_run``: only their names."""
    have = present(db)
    missing = [name for name in INDEXES if name not in have]
    if dry_run or not missing:
        return missing
    db.require_writable()
    for name in missing:
        for statement in build(name, INDEXES[name]):
            db.execute(statement)
    return missing
