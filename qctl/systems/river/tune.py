"""qctl's opt-in index on River's jobs table (``qctl db tune``), in the shape every
system's share (``qctl_kit.postgres.tune``): River indexes a queue only after a state
(``river_job_prioritized_fetching_index``: state, queue, ...), so a listing by queue
newest first walks the primary key until it has found a page, every job of the table for
a queue with few jobs; (queue, id) reads that page on one range. qctl never adds to
River's schema otherwise."""

from __future__ import annotations

from qctl.systems.river.database import Database
from qctl_kit.postgres.tune import PRESENT, build

QUEUE_ID = "qctl_river_job_queue_id"

INDEXES = {
    QUEUE_ID: f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {QUEUE_ID} ON river_job (queue, id)",
}
"""The index's definitions by name; River's migrations name everything ``river_*``."""


def present(db: Database) -> list[str]:
    """The indexes of ``INDEXES`` this schema has (valid ones)."""
    rows = db.all(PRESENT, {"table": "river_job", "names": list(INDEXES)})
    return sorted(str(r["name"]) for r in rows)


def tune(db: Database, dry_run: bool = False) -> list[str]:
    """Create the missing indexes of ``INDEXES`` (each CONCURRENTLY: River's clients go
    on); their names. ``dry_run``: only their names."""
    have = present(db)
    missing = [name for name in INDEXES if name not in have]
    if dry_run or not missing:
        return missing
    db.writable()
    for name in missing:
        for statement in build(name, INDEXES[name]):
            db.execute(statement)
    return missing
