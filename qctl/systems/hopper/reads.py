"""qctl's reads of a hopper database: typed rows (the column names of hopper's tables,
``hoppermigrate/migrations``) and the listings, each one statement of
``queries/reads.sql``."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from qctl.core import triage
from qctl.core.errors import NoSuchName, no_such_id
from qctl.core.parse import ambiguous
from qctl.systems.hopper.database import Database
from qctl_kit.decode import fold
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import Queries, load

STATES = (
    "pending",
    "available",
    "scheduled",
    "running",
    "retryable",
    "completed",
    "cancelled",
    "discarded",
)
"""``hopper_job_state`` (``driver/driver.go`` JobState), in the enum's order."""
LIVE_STATES = STATES[:5]
"""States of rows in ``hopper_jobs``; the others are finalized, in ``hopper_job_history``."""


def queries(name: str) -> Queries:
    return load("qctl.systems.hopper.queries", name)


@dataclass
class Job:
    """A job, live or finalized (``driver/driver.go`` JobRow); ``errors`` is hopper's
    list of ``{at, attempt, error, trace}``, ``finalized_at`` and ``output`` are set in
    history only."""

    id: uuid.UUID
    kind: str
    queue: str
    state: str
    priority: int
    attempt: int
    max_attempts: int
    scheduled_at: datetime
    attempted_at: datetime | None
    attempted_by: int | None
    unique_key: str | None
    ordering_key: str | None
    partition_key: str | None
    batch_id: uuid.UUID | None
    expires_at: datetime | None
    cancel_requested_at: datetime | None
    await_: bool
    created_at: datetime
    finalized_at: datetime | None
    args: Any
    metadata: Any
    errors: list[dict[str, Any]]
    output: Any

    @property
    def last_error(self) -> str:
        last = self.errors[-1] if isinstance(self.errors, list) and self.errors else None
        error = last.get("error", "") if isinstance(last, dict) else ""
        return error if isinstance(error, str) else json.dumps(fold(error))


@dataclass
class Dep:
    job_id: uuid.UUID
    depends_on: uuid.UUID
    on_failure: str


@dataclass
class Queue:
    """A queue row (``hopper_queues``): limits are NULL where unlimited."""

    name: str
    paused_at: datetime | None
    updated_at: datetime
    global_limit: int | None
    rate_per_sec: float | None
    rate_burst: int | None
    partition_limit: int | None
    aging_seconds: int | None
    metadata: Any


@dataclass
class QueueDepth:
    """One queue's live jobs by state, the age of its oldest claimable job and its
    completions in the last minute (``driver/driver.go`` QueueStats)."""

    queue: str
    pending: int
    available: int
    scheduled: int
    retryable: int
    running: int
    oldest_available: timedelta | None
    completed_last_minute: int
    paused: bool | None
    """None: a queue with live jobs but no ``hopper_queues`` row."""


@dataclass
class Client:
    id: int
    hostname: str
    started_at: datetime
    expires_at: datetime
    live: bool
    running: int
    leader: bool
    info: Any


@dataclass
class Periodic:
    name: str
    last_slot: datetime


@dataclass
class Subscription:
    name: str
    pattern: str
    kind: str
    queue: str
    max_attempts: int | None
    created_at: datetime
    metadata: Any


@dataclass
class Batch:
    """A batch, or a workflow (a batch whose jobs depend on each other: ``edges`` is
    its graph as ``[[job_id, depends_on], ...]``)."""

    id: uuid.UUID
    name: str | None
    pending: int
    failed: int
    total: int
    created_at: datetime
    completed_at: datetime | None
    metadata: Any
    edges: list[list[str]] | None
    on_success: Any
    on_failure: Any
    on_complete: Any


@dataclass
class StreamConsumer:
    """A stream consumer: it has delivered every transaction visible in ``seen``; part
    way through a delta, ``reading`` is the delta's snapshot and ``xid``:``seq`` the last
    event delivered of it."""

    name: str
    pattern: str
    kind: str
    queue: str
    max_attempts: int | None
    seen: str
    reading: str | None
    xid: str
    seq: int
    delivered_at: datetime | None
    created_at: datetime
    metadata: Any


Row = TypeVar(
    "Row", Job, Dep, Queue, QueueDepth, Client, Periodic, Subscription, Batch, StreamConsumer
)

_RENAMED = {"await": "await_"}
"""Columns whose name is a Python keyword."""


def _rows(cls: type[Row], rows: list[dict[str, Any]]) -> list[Row]:
    names = {f.name for f in fields(cls)}
    out = []
    for row in rows:
        values = {_RENAMED.get(k, k): v for k, v in row.items()}
        out.append(cls(**{k: v for k, v in values.items() if k in names}))
    return out


def _any(values: list[str] | None) -> list[str] | None:
    return list(values) if values else None


def parse_after(text: str | None) -> uuid.UUID | None:
    """``--after``: the id a listing printed as its next cursor."""
    if not text:
        return None
    try:
        return uuid.UUID(text)
    except ValueError:
        raise InvalidInput(f"--after: {text!r} is not a cursor printed by a listing") from None


def _job_filter(
    states: list[str] | None,
    kinds: list[str] | None,
    queues: list[str] | None,
    limit: int,
    after: uuid.UUID | None,
) -> dict[str, Any]:
    """A listing's parameters: which parts (live, completed, failed history) the states
    filter reads, and the filters."""
    return {
        "live": not states or any(s in LIVE_STATES for s in states),
        "completed": not states or "completed" in states,
        "failed": not states or "cancelled" in states or "discarded" in states,
        "states": _any(states),
        "kinds": _any(kinds),
        "queues": _any(queues),
        "after": after,
        "limit": limit,
    }


def list_jobs(
    db: Database,
    states: list[str] | None = None,
    kinds: list[str] | None = None,
    queues: list[str] | None = None,
    limit: int = 50,
    after: uuid.UUID | None = None,
) -> list[Job]:
    """Live and finalized jobs together, newest first; a table or history partition the
    state filter excludes is not read."""
    params = _job_filter(states, kinds, queues, limit, after)
    return _rows(Job, db.all(queries("reads.sql").list_jobs, params))


FAILED = ["discarded"]
"""The jobs ``error_groups`` reads unless told: out of attempts (or expired)."""


def error_groups(
    db: Database,
    states: list[str] | None = None,
    kinds: list[str] | None = None,
    queues: list[str] | None = None,
    scan: int = triage.SCAN,
) -> triage.ErrorGroups:
    """The newest ``scan`` jobs of ``states`` (default ``FAILED``) grouped by the
    fingerprint of their last error, labelled by kind: only ids, kinds, last errors and
    times are read."""
    q = queries("reads.sql")
    statement = f"{q.failures_of} ({q.list_jobs}) AS j ORDER BY id DESC"
    return triage.scan_groups(
        lambda after, n: db.all(statement, _job_filter(states or FAILED, kinds, queues, n, after)),
        lambda row: row["id"],
        lambda row: (row["id"], row["error"] or "", row["at"], row["kind"]),
        scan,
    )


_HEX = re.compile(r"^[0-9a-f]{1,32}$")


def _id_range(text: str) -> tuple[uuid.UUID, uuid.UUID]:
    digits = text.strip().lower().replace("-", "")
    if not _HEX.match(digits):
        raise InvalidInput(f"{text!r} is not a hopper id (a UUID) or a prefix of one")
    return uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f"))


def _resolve(db: Database, what: str, query: str, text: str) -> uuid.UUID:
    """An id typed whole or as a unique prefix (a range of the id index)."""
    lo, hi = _id_range(text)
    ids = [r["id"] for r in db.all(query, {"lo": lo, "hi": hi})]
    if not ids:
        raise no_such_id(what, text, whole=lo == hi)
    if len(ids) > 1:
        raise ambiguous(what, text, ids)
    return uuid.UUID(str(ids[0]))


def resolve_job(db: Database, text: str) -> uuid.UUID:
    return _resolve(db, "job", queries("reads.sql").job_ids_in_range, text)


def resolve_batch(db: Database, text: str) -> uuid.UUID:
    return _resolve(db, "batch", queries("reads.sql").batch_ids_in_range, text)


def get_job(db: Database, job_id: uuid.UUID) -> Job:
    rows = _rows(Job, db.all(queries("reads.sql").get_job, {"id": job_id}))
    if not rows:
        raise no_such_id("job", job_id)
    return rows[0]


def job_deps(db: Database, job_id: uuid.UUID) -> list[Dep]:
    return _rows(Dep, db.all(queries("reads.sql").job_deps, {"id": job_id}))


def list_queues(db: Database) -> list[Queue]:
    return _rows(Queue, db.all(queries("reads.sql").list_queues))


def get_queue(db: Database, name: str) -> Queue | None:
    rows = _rows(Queue, db.all(queries("reads.sql").get_queue, {"name": name}))
    return rows[0] if rows else None


def queue_depths(db: Database) -> list[QueueDepth]:
    """Every queue's depths: on qctl's opt-in index where ``qctl db tune`` created it
    (index ranges), else by reading the live table (hopper's own indexes cannot split
    the waiting states)."""
    from qctl.systems.hopper import tune  # its catalog read is qctl_store's PostgreSQL's

    q = queries("reads.sql")
    tuned = tune.QUEUE_STATE in tune.present(db)
    return _rows(QueueDepth, db.all(q.queue_depths_indexed if tuned else q.queue_depths))


def discarded(db: Database, cap: int = triage.COUNT_CAP) -> tuple[dict[str, int], bool]:
    """Discarded jobs per queue, and whether the count is a lower bound (a bounded read:
    no index holds the state)."""
    rows = db.all(queries("reads.sql").discarded_bounded, {"cap": cap})
    return triage.bounded_counts(rows, cap)


@dataclass
class Cluster:
    live_clients: int
    leader: int | None


def cluster(db: Database) -> Cluster:
    row = db.one(queries("reads.sql").cluster) or {}
    return Cluster(int(row.get("live_clients") or 0), row.get("leader"))


def list_clients(db: Database) -> list[Client]:
    return _rows(Client, db.all(queries("reads.sql").list_clients))


def list_periodic(db: Database) -> list[Periodic]:
    return _rows(Periodic, db.all(queries("reads.sql").list_periodic))


def list_subscriptions(db: Database) -> list[Subscription]:
    return _rows(Subscription, db.all(queries("reads.sql").list_subscriptions))


def list_batches(db: Database, limit: int = 50, after: uuid.UUID | None = None) -> list[Batch]:
    return _rows(Batch, db.all(queries("reads.sql").list_batches, {"limit": limit, "after": after}))


def get_batch(db: Database, batch_id: uuid.UUID) -> tuple[Batch, list[Job]]:
    """A batch or workflow and its jobs, live and finalized, in insertion order."""
    q = queries("reads.sql")
    batches = _rows(Batch, db.all(q.get_batch, {"id": batch_id}))
    if not batches:
        raise NoSuchName("get batch", f"no hopper batch {batch_id}")
    return batches[0], _rows(Job, db.all(q.batch_jobs, {"id": batch_id}))


def list_stream_consumers(db: Database) -> list[StreamConsumer]:
    return _rows(StreamConsumer, db.all(queries("reads.sql").list_stream_consumers))


def get_stream_consumer(db: Database, name: str) -> StreamConsumer:
    rows = _rows(StreamConsumer, db.all(queries("reads.sql").get_stream_consumer, {"name": name}))
    if not rows:
        raise NoSuchName("get stream consumer", f"no hopper stream consumer {name!r}")
    return rows[0]


MEASURES = ("enqueued", "completed", "failed", "cancelled")
"""Throughput's counts: failed are jobs discarded (out of attempts, or expired)."""
_ORIGIN = datetime(2000, 1, 3, tzinfo=UTC)
"""Where buckets are laid from (a Monday, midnight UTC)."""


@dataclass
class Throughput:
    """One bucket's counts (of one queue, with ``per_queue``)."""

    start: datetime
    queue: str | None
    enqueued: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0


def first_uuid7(at: datetime) -> uuid.UUID:
    """The smallest UUIDv7 made at or after ``at``: its millisecond, then zeros."""
    return uuid.UUID(int=int(at.timestamp() * 1000) << 80)


def throughput(
    db: Database,
    window: timedelta,
    bucket: timedelta,
    queues: list[str] | None = None,
    per_queue: bool = False,
) -> list[Throughput]:
    """Per bucket of the last ``window`` (whole buckets, the newest one the current),
    oldest first: jobs enqueued, completed, failed (discarded) and cancelled. Every
    bucket is there, zero or not; with ``per_queue`` one row per queue that had any."""
    if bucket <= timedelta(0) or window < bucket:
        raise InvalidInput("the throughput window must hold at least one bucket")
    q = queries("reads.sql")
    now = (db.one(q.clock) or {})["now"]
    current = _ORIGIN + (now - _ORIGIN) // bucket * bucket
    starts = [current - i * bucket for i in range(-(-window // bucket) - 1, -1, -1)]
    stops = [s + bucket for s in starts]
    params = {
        "starts": starts,
        "stops": stops,
        "los": [first_uuid7(s) for s in starts],
        "his": [first_uuid7(s) for s in stops],
        "queues": _any(queues),
    }
    enqueued = q.throughput_enqueued_queues if queues or per_queue else q.throughput_enqueued
    cells: dict[tuple[datetime, str | None], Throughput] = {}
    if not per_queue:
        cells = {(s, None): Throughput(s, None) for s in starts}
    for statement in (enqueued, q.throughput_finalized):
        for row in db.all(statement, params):
            counts = {m: int(row[m]) for m in MEASURES if row.get(m)}
            if not counts:
                continue
            key = (row["start"], row["queue"] if per_queue else None)
            point = cells.setdefault(key, Throughput(*key))
            for measure, n in counts.items():
                setattr(point, measure, getattr(point, measure) + n)
    return [cells[k] for k in sorted(cells, key=lambda k: (k[0], k[1] or ""))]
