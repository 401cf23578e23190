"""qctl's opt-in index on ``oban_jobs`` (``qctl db tune``), in the shape every system's
share (``qctl_kit.postgres.tune``): neither flavour indexes a job's queue ahead of its
state, so a first page filtered by queue alone (``jobs list --queue Q``, the dashboard's
drill into a queue) walks the primary key until it has found a page, every row when the
queue holds few or no jobs; (queue, id) gives that page in one descent. qctl never adds
to Oban's schema otherwise."""

from __future__ import annotations

from qctl.systems.oban.database import Database
from qctl_kit.postgres.tune import ConsoleIndex

QUEUE_ID = "qctl_oban_jobs_queue_id"
"""Oban names everything ``oban_*``."""
INDEX = ConsoleIndex(QUEUE_ID, "oban_jobs", "queue, id")


def present(db: Database) -> list[str]:
    return INDEX.present(db)


def tune(db: Database, dry_run: bool = False) -> list[str]:
    return INDEX.create(db, dry_run, db.writable)
