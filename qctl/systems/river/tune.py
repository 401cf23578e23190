"""qctl's opt-in index on River's jobs table (``qctl db tune``), in the shape every
system's share (``qctl_kit.postgres.tune``): River indexes a queue only after a state
(``river_job_prioritized_fetching_index``: state, queue, ...), so a listing by queue
newest first walks the primary key until it has found a page, every job of the table for
a queue with few jobs; (queue, id) reads that page on one range. qctl never adds to
River's schema otherwise."""

from __future__ import annotations

from qctl.systems.river.database import Database
from qctl_kit.postgres.tune import ConsoleIndex

QUEUE_ID = "qctl_river_job_queue_id"
"""River's migrations name everything ``river_*``."""
INDEX = ConsoleIndex(QUEUE_ID, "river_job", "queue, id")


def present(db: Database) -> list[str]:
    if not db.postgres:
        rows = db.all(db.statements("reads").index_present, {"name": QUEUE_ID})
        return [str(r["name"]) for r in rows]
    return INDEX.present(db)


def tune(db: Database, dry_run: bool = False) -> list[str]:
    """The index built where missing: on SQLite by a plain CREATE INDEX, which holds the
    file's write lock (River's clients wait) while it reads the jobs once."""
    if db.postgres:
        return INDEX.create(db, dry_run, db.writable)
    if present(db):
        return []
    if not dry_run:
        db.writable()
        db.execute(db.statements("reads").index_create)
    return [QUEUE_ID]
