"""What shell completion offers from a hopper database: its queues."""

from __future__ import annotations

from qctl.systems.hopper import reads
from qctl.systems.hopper.database import Database


def values(db: Database, noun: str, what: str, prefix: str) -> list[str]:
    if what == "queue":
        return sorted(
            {q.name for q in reads.list_queues(db)} | {d.queue for d in reads.queue_depths(db)}
        )
    return []
