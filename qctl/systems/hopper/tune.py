"""qctl's opt-in index on hopper's live table (``qctl db tune``), in the shape every
system's share (``qctl_kit.postgres.tune``): hopper's schema version 8 indexes waiting
jobs together (``hopper_jobs_claim`` holds available, scheduled and retryable) and
pending ones not at all, so the queue depths split by state read the whole live table;
(queue, state, scheduled_at) counts each queue's states on index ranges and finds each
state's oldest due job in one descent. qctl never adds to hopper's schema otherwise."""

from __future__ import annotations

from qctl.systems.hopper.database import Database
from qctl_kit.postgres.tune import ConsoleIndex

QUEUE_STATE = "qctl_hopper_jobs_queue_state"
"""hoppermigrate names everything ``hopper_*``."""
INDEX = ConsoleIndex(QUEUE_STATE, "hopper_jobs", "queue, state, scheduled_at")


def present(db: Database) -> list[str]:
    return INDEX.present(db)


def tune(db: Database, dry_run: bool = False) -> list[str]:
    return INDEX.create(db, dry_run, db.require_writable)
