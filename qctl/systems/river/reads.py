"""qctl's reads of a River database: typed rows (the column names of River's tables,
``riverdriver/riverpgxv5/migration/main``) and the listings, each one statement of
``queries/reads.sql``. JSON columns come back decoded by the driver (``args``,
``metadata``, each ``errors`` entry); nothing read is executed."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any, TypeVar

from qctl.core.errors import NoSuchName
from qctl.systems.river.database import Database
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import Queries, load

STATES = (
    "available",
    "cancelled",
    "completed",
    "discarded",
    "pending",
    "retryable",
    "running",
    "scheduled",
)
"""``river_job_state`` at migration 004 and after."""
LIVE_STATES = ("available", "pending", "retryable", "running", "scheduled")
FINALIZED_STATES = ("cancelled", "completed", "discarded")
"""The states with ``finalized_at`` set (``finalized_or_finalized_at_null``)."""

UNIQUE_BITS = (
    "scheduled",
    "running",
    "retryable",
    "pending",
    "discarded",
    "completed",
    "cancelled",
    "available",
)
"""The state of each bit of ``unique_states`` as its text shows it, first to last:
``river_job_state_in_bitmask`` (006_bulk_unique.up.sql) reads bit 7 (the last) as
available, down to bit 0 (the first) as scheduled."""


def queries(name: str) -> Queries:
    return load("qctl.systems.river.queries", name)


def unique_states(bits: str | None) -> list[str] | None:
    """The states a ``unique_states`` bit string names (None: the job is not unique)."""
    if bits is None:
        return None
    return [state for state, bit in zip(UNIQUE_BITS, bits, strict=False) if bit == "1"]


@dataclass
class Job:
    id: int
    state: str
    queue: str
    kind: str
    priority: int
    attempt: int
    max_attempts: int
    scheduled_at: datetime
    attempted_at: datetime | None
    attempted_by: list[str] | None
    created_at: datetime
    finalized_at: datetime | None
    tags: list[str]
    unique_key: str | None
    """The key's bytes in hex (River hashes the unique properties into it)."""
    unique_states: list[str] | None
    args: Any
    metadata: Any
    error_count: int
    errors: list[Any] | None = None
    """Every attempt's error, oldest first (``jobs show`` only): River's
    ``rivertype.AttemptError`` (at, attempt, error, trace)."""

    @property
    def last_error(self) -> str:
        if not self.errors:
            return ""
        last = self.errors[-1]
        return str(last.get("error", "")) if isinstance(last, dict) else str(last)


@dataclass
class Queue:
    """A queue: its ``river_queue`` row (none when no River client has worked it yet)
    and its jobs per state (the finalized states None where not counted)."""

    queue: str
    paused_at: datetime | None
    created_at: datetime | None
    updated_at: datetime | None
    available: int
    running: int
    scheduled: int
    retryable: int
    pending: int
    completed: int | None
    cancelled: int | None
    discarded: int | None
    oldest_available_age: timedelta | None

    @property
    def paused(self) -> bool:
        return self.paused_at is not None


Row = TypeVar("Row", Job, Queue)


def _job(row: dict[str, Any]) -> dict[str, Any]:
    key = row.get("unique_key")
    return {
        **row,
        "unique_key": bytes(key).hex() if key is not None else None,
        "unique_states": unique_states(row.get("unique_states")),
    }


def _rows(cls: type[Row], rows: list[dict[str, Any]]) -> list[Row]:
    names = {f.name for f in fields(cls)}
    decode = _job if cls is Job else dict
    return [cls(**{k: v for k, v in decode(r).items() if k in names}) for r in rows]


def parse_id(text: str, what: str = "job id") -> int:
    """A River job id (a positive integer) as typed."""
    try:
        value = int(text.strip())
    except ValueError:
        raise InvalidInput(f"{what} {text!r}: not a River job id (a number)") from None
    if value < 1:
        raise InvalidInput(f"{what} {text!r}: River job ids start at 1")
    return value


def list_jobs(
    db: Database,
    states: list[str] | None = None,
    queues: list[str] | None = None,
    kinds: list[str] | None = None,
    limit: int = 50,
    after: int | None = None,
) -> list[Job]:
    params = {
        "states": states or None,
        "queues": queues or None,
        "kinds": kinds or None,
        "limit": limit,
        "after_id": after,
    }
    return _rows(Job, db.all(queries("reads.sql").list_jobs, params))


def get_job(db: Database, job_id: int) -> Job:
    rows = _rows(Job, db.all(queries("reads.sql").get_job, {"id": job_id}))
    if not rows:
        raise NoSuchName("get job", f"no River job {job_id}")
    return rows[0]


def list_queues(db: Database, live: bool = False) -> list[Queue]:
    """Every queue with its jobs per state; ``live``: the states not finalized only,
    through the fetch index (the dashboard's refresh)."""
    q = queries("reads.sql")
    return _rows(Queue, db.all(q.live_depths if live else q.queues))
