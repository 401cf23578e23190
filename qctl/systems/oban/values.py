"""What shell completion offers from an Oban database: its queues (live jobs or a
producer, each state counted up to the dashboard's cap) and the job ids that start with
the digits typed."""

from __future__ import annotations

from qctl.systems.oban import reads
from qctl.systems.oban.database import Database

LIMIT = 20


def values(db: Database, noun: str, what: str, prefix: str) -> list[str]:
    if what == "queue":
        return [q.queue for q in reads.list_queues(db, live=True, cap=reads.DASHBOARD_CAP)]
    if what == "id" and noun == "jobs":
        return [str(i) for i in reads.job_ids(db, prefix, LIMIT)]
    return []
