"""What shell completion offers from a dispatch database: its queues."""

from __future__ import annotations

from qctl.systems.dispatch import reads
from qctl.systems.dispatch.database import Database


def values(db: Database, noun: str, what: str, prefix: str) -> list[str]:
    if what == "queue":
        return sorted({d.queue for d in reads.queue_depths(db)})
    return []
