"""What shell completion offers from a DBOS system database: its queues."""

from __future__ import annotations

from qctl.systems.dbos import reads
from qctl.systems.dbos.database import Database


def values(db: Database, noun: str, what: str, prefix: str) -> list[str]:
    if what == "queue":
        return sorted({q["queue_name"] for q in reads.queue_stats(db)})
    return []
