"""What shell completion offers from a River database: its queues."""

from __future__ import annotations

from qctl.systems.river import reads
from qctl.systems.river.database import Database


def values(db: Database, noun: str, what: str, prefix: str) -> list[str]:
    if what == "queue":
        return sorted(q.queue for q in reads.list_queues(db, live=True))
    return []
