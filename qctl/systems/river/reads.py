"""qctl's reads of a River database: typed rows (the column names of River's tables,
``riverdriver/riverpgxv5/migration/main`` and ``riverdriver/riversqlite/migration/main``)
and the listings, each one statement of ``queries/reads.sql`` (PostgreSQL) or
``queries/reads_sqlite.sql``. JSON columns come back decoded (``args``, ``metadata``, each
``errors`` entry: by psycopg, or from SQLite's JSON text here), instants as UTC
``datetime``s on both; nothing read is executed."""

from __future__ import annotations

import heapq
import itertools
import json
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from qctl.core import triage
from qctl.core.errors import NoSuchName, no_such_id
from qctl.systems.river.database import Database, instant
from qctl_kit.decode import json_value
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import Queries, fill, load

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


def unique_states(bits: str | int | None) -> list[str] | None:
    """The states a ``unique_states`` bit string names (None: the job is not unique); on
    SQLite the column is the integer of those bits (bit 0 available to bit 7 scheduled,
    riversqlite's ``river_job_unique_idx``), read as the same string."""
    if bits is None:
        return None
    if isinstance(bits, int):
        bits = format(bits & 0xFF, "08b")
    return [state for state, bit in zip(UNIQUE_BITS, bits, strict=False) if bit == "1"]


JSON_COLUMNS = frozenset({"args", "metadata", "tags", "attempted_by", "errors"})
INSTANT_COLUMNS = frozenset(
    {
        "scheduled_at",
        "attempted_at",
        "created_at",
        "finalized_at",
        "paused_at",
        "updated_at",
        "elected_at",
        "expires_at",
        "oldest_attempted_at",
        "at",
    }
)
FLAG_COLUMNS = frozenset({"expired", "leader", "registered"})


def rows(
    db: Database, statement: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """``statement``'s rows with River's values as PostgreSQL's give them: on SQLite, the
    JSON columns decoded, instants as UTC ``datetime``s, ages as ``timedelta``s, flags as
    booleans; list parameters as JSON arrays there (``many``)."""
    if db.postgres:
        return db.all(statement, params or {})
    found = db.all(statement, bind(db, params or {}))
    for row in found:
        for key, value in row.items():
            if value is None:
                continue
            if key in JSON_COLUMNS:
                row[key] = json_value(value)
            elif key in INSTANT_COLUMNS:
                row[key] = instant(value)
            elif key in FLAG_COLUMNS:
                row[key] = bool(value)
            elif key == "oldest_available_age":
                row[key] = timedelta(seconds=float(value))
    return found


def bind(db: Database, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as the backend takes them: as they are on PostgreSQL, each one
    ``many`` on SQLite."""
    return params if db.postgres else {k: many(v) for k, v in params.items()}


def many(value: Any) -> Any:
    """A parameter as SQLite takes it: a list as its JSON array, an instant as River's
    SQLite text (riversqlite's timeString: UTC, milliseconds)."""
    import json

    if isinstance(value, list | tuple):
        return json.dumps(list(value))
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return value


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
    metadata: Any = None
    """River's queue metadata, decoded (None: no queue row); River UI edits it."""

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


def _rows(cls: type[Row], found: list[dict[str, Any]]) -> list[Row]:
    names = {f.name for f in fields(cls)}
    decode = _job if cls is Job else dict
    return [cls(**{k: v for k, v in decode(r).items() if k in names}) for r in found]


PRIORITIES = (1, 2, 3, 4)
"""River's priorities (``priority_in_range``): 1 runs first."""


def parse_priorities(values: list[int] | None) -> list[int] | None:
    for value in values or []:
        if value not in PRIORITIES:
            raise InvalidInput(f"--priority: {value} is not a River priority (1 to 4)")
    return values or None


def parse_id(text: str, what: str = "job id") -> int:
    """A River job id (a positive integer) as typed."""
    try:
        value = int(text.strip())
    except ValueError:
        raise InvalidInput(f"{what} {text!r}: not a River job id (a number)") from None
    if value < 1:
        raise InvalidInput(f"{what} {text!r}: River job ids start at 1")
    return value


def contained(args: dict[str, Any] | None, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The parameters of fragments.sql ``contains``: each object as its JSON text (None:
    any). PostgreSQL matches its @> (nested values contained); SQLite each top-level key
    equal (nested values whole)."""
    return {
        "args": None if args is None else json.dumps(args),
        "metadata": None if metadata is None else json.dumps(metadata),
    }


Position = tuple[datetime | None, int]
"""Where a job listing's page ends: the last job's finalized_at in ``by_finalized``
order (None in id order, or typed as an id alone) and its id."""


def by_finalized(states: list[str] | None) -> bool:
    """A listing of finalized states only, which River UI orders newest finalized first
    (``JobListOrderByTime``: finalized_at, then id), as ``list_jobs`` does."""
    return bool(states) and all(s in FINALIZED_STATES for s in states or [])


def position(job: Job, states: list[str] | None) -> Position:
    """Where a page ending with ``job`` ends, in the order ``states`` list in."""
    return (job.finalized_at if by_finalized(states) else None, job.id)


def position_text(at: Position) -> str:
    """``--after``'s text of a position: the id, or ``INSTANT,ID`` (UTC, microseconds)."""
    if at[0] is None:
        return str(at[1])
    return f"{at[0].astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ},{at[1]}"


def parse_position(text: str) -> Position:
    """``--after``'s position as ``position_text`` prints it."""
    instant_text, comma, id_text = text.rpartition(",")
    if not comma:
        return (None, parse_id(text, "--after"))
    try:
        at = datetime.fromisoformat(instant_text.strip())
    except ValueError:
        raise InvalidInput(f"--after {text!r}: not a cursor a job listing printed") from None
    if at.tzinfo is None:
        raise InvalidInput(f"--after {text!r}: the instant needs its zone (Z)")
    return (at.astimezone(UTC), parse_id(id_text, "--after"))


def job_filter(
    db: Database, statement: str, params: dict[str, Any], finalized: bool = False
) -> str:
    """A job listing's ``statement`` as ``db`` runs it with ``params`` (``states``,
    ``queues``, ``kinds``, ``priorities``, ``tags``, ``after_id``: None or empty for any;
    ``args``, ``metadata``: ``contained``'s, None for any): on PostgreSQL as written (its
    session plans each run for the values given); on SQLite its ``{where}`` made of
    reads_sqlite.sql's ``job_*`` conditions of the filters given (why there). ``params``
    gains ``queue`` for a single queue. ``finalized``: the statement is
    ``list_finalized_jobs``, which reads one state's range itself, so the states are
    not written, the queues stay off the indexes and the cursor is (``after_at``,
    ``after_id``)."""
    if db.postgres:
        return statement
    q = db.statements("reads")
    states, queues = params.get("states"), params.get("queues")
    live = not finalized and bool(states and queues and set(states) <= set(LIVE_STATES))
    where = []
    if states and not finalized:
        where.append(q.job_live_states if live else q.job_states)
    if queues and live:
        where.append(q.job_live_queues)
    elif queues and len(queues) == 1 and not finalized:
        where.append(q.job_queue)
        params["queue"] = queues[0]
    elif queues:
        where.append(q.job_queues)
    for key, condition in (
        ("kinds", q.job_kinds),
        ("priorities", q.job_priorities),
        ("tags", q.job_tags),
    ):
        if params.get(key):
            where.append(condition)
    if params.get("args") is not None or params.get("metadata") is not None:
        where.append(q.job_contains)
    if params.get("after_id") is not None:
        where.append(q.job_finalized_after if finalized else q.job_after)
    return fill(statement, where="\n  AND ".join(where) or q.job_every)


def list_jobs(
    db: Database,
    states: list[str] | None = None,
    queues: list[str] | None = None,
    kinds: list[str] | None = None,
    limit: int = 50,
    after: Position | None = None,
    priorities: list[int] | None = None,
    tags: list[str] | None = None,
    args: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[Job]:
    """A page newest first, after ``after`` (``position``): finalized states only newest
    finalized first (``by_finalized``), any other listing by id; ``tags``: jobs
    carrying every one of them; ``args``, ``metadata``: JSON objects the job's columns
    contain (``contained``)."""
    params: dict[str, Any] = {
        "states": list(dict.fromkeys(states)) if states else None,
        "queues": queues or None,
        "kinds": kinds or None,
        "priorities": priorities or None,
        "tags": tags or None,
        **contained(args, metadata),
        "limit": limit,
    }
    q = db.statements("reads")
    at, params["after_id"] = after or (None, None)
    if not by_finalized(states):
        return _rows(Job, rows(db, job_filter(db, q.list_jobs, params), params))
    if at is None and after is not None:  # an id typed: where that job was finalized
        at = get_job(db, after[1]).finalized_at
        if at is None:
            raise InvalidInput(f"--after {after[1]}: that job is not finalized")
    params["after_at"] = at
    pages = []  # one index range per state, merged
    for state in params["states"]:
        one = {**params, "state": state, "states": [state]}
        statement = job_filter(db, q.list_finalized_jobs, one, finalized=True)
        pages.append(_rows(Job, rows(db, statement, one)))
    newest = heapq.merge(*pages, key=lambda job: (job.finalized_at, job.id), reverse=True)
    return list(itertools.islice(newest, limit))


def get_job(db: Database, job_id: int) -> Job:
    found = _rows(Job, rows(db, db.statements("reads").get_job, {"id": job_id}))
    if not found:
        raise no_such_id("job", job_id)
    return found[0]


def get_queue(db: Database, name: str) -> Queue:
    """One queue with its jobs per state (counted on River's fetch index for it alone)."""
    [row] = rows(db, db.statements("reads").queue, {"name": name})
    queue = _rows(Queue, [row])[0]
    states = (queue.available, queue.running, queue.scheduled, queue.retryable, queue.pending)
    finalized = (queue.completed, queue.cancelled, queue.discarded)
    if not row["registered"] and not any(states) and not any(finalized):
        raise NoSuchName("get queue", f"no queue {name!r}")
    return queue


def list_queues(db: Database, live: bool = False) -> list[Queue]:
    """Every queue with its jobs per state; ``live``: the states not finalized only,
    through the fetch index (the dashboard's refresh)."""
    q = db.statements("reads")
    return _rows(Queue, rows(db, q.live_depths if live else q.queues))


FAILED = ["discarded", "retryable"]
"""The jobs ``error_groups`` reads unless told: out of attempts (discarded) and failed
waiting for their next attempt (retryable), River's two states of a job whose last
attempt failed."""


def error_groups(
    db: Database,
    states: list[str] | None = None,
    kinds: list[str] | None = None,
    queues: list[str] | None = None,
    scan: int = triage.SCAN,
    priorities: list[int] | None = None,
    tags: list[str] | None = None,
) -> triage.ErrorGroups:
    """The newest ``scan`` jobs of ``states`` (default ``FAILED``) grouped by the
    fingerprint of their last error, labelled by kind: only ids, kinds, last errors and
    times are read."""

    def page(after: int | None, n: int) -> list[dict[str, Any]]:
        params: dict[str, Any] = {
            "states": states or FAILED,
            "queues": queues or None,
            "kinds": kinds or None,
            "priorities": priorities or None,
            "tags": tags or None,
            "after_id": after,
            "limit": n,
        }
        return rows(db, job_filter(db, db.statements("reads").failures, params), params)

    return triage.scan_groups(
        page,
        lambda row: row["id"],
        lambda row: (row["id"], row["error"] or "", row["at"], row["kind"]),
        scan,
    )


def attempt_errors(job: Job) -> list[dict[str, Any]]:
    """A job's attempt history, oldest first: River's ``rivertype.AttemptError`` fields
    (attempt, at, error, trace) of each failed attempt; an element that is not an object
    kept as its error."""
    return [
        {k: e.get(k) for k in ("attempt", "at", "error", "trace")}
        if isinstance(e, dict)
        else {"attempt": None, "at": None, "error": e, "trace": None}
        for e in job.errors or []
    ]


THROUGHPUT_MEASURES = ("completed", "cancelled", "discarded")


@dataclass
class ThroughputCount:
    """One queue's bucket: jobs finalized in each final state in it."""

    start: datetime
    queue: str
    completed: int = 0
    cancelled: int = 0
    discarded: int = 0


def throughput(
    db: Database, window: timedelta, bucket: timedelta, queues: list[str] | None = None
) -> list[ThroughputCount]:
    """Every queue's finalized jobs per bucket of ``bucket``, the buckets aligned on the
    Unix epoch, the last holding the database's now, together covering ``window``
    (oldest first, buckets where nothing was finalized left out)."""
    from qctl_kit.throughput import bucket_start, grid

    width, first, _count = grid(db.now(), window, bucket)
    params = {"width": width, "since": bucket_start(first, width), "queues": queues or None}
    counts: dict[tuple[int, str], ThroughputCount] = {}
    for row in rows(db, db.statements("reads").throughput, params):
        key = (int(row["bucket"]), str(row["queue"]))
        point = counts.setdefault(key, ThroughputCount(bucket_start(key[0], width), key[1]))
        setattr(point, row["measure"], int(row["n"]))
    return [counts[k] for k in sorted(counts)]


@dataclass
class Finalized:
    """One queue's jobs finalized lately (``qctl metrics``)."""

    queue: str
    completed: int
    discarded: int


def finalized_since(db: Database, since: datetime) -> list[Finalized]:
    found = rows(db, db.statements("reads").finalized_recently, {"since": since})
    return [Finalized(**r) for r in found]


def discarded(db: Database, cap: int = triage.COUNT_CAP) -> tuple[dict[str, int], bool]:
    """Discarded jobs per queue, and whether the count is a lower bound (the newest
    ``cap`` read)."""
    return triage.bounded_counts(rows(db, db.statements("reads").discarded_bounded, {"cap": cap}))


@dataclass
class Leader:
    """``river_leader``'s row: the client that runs River's maintenance services."""

    name: str
    leader_id: str
    elected_at: datetime
    expires_at: datetime
    expired: bool
    """Its lease ran out without a renewal (the next election replaces it)."""


@dataclass
class Client:
    """A River client seen at work (its running jobs of one queue), or the leader."""

    client: str | None
    queue: str | None
    """None: the leader's own row (it runs no job)."""
    running: int
    oldest_attempted_at: datetime | None
    leader: bool
    elected_at: datetime | None
    expires_at: datetime | None
    """The leader's lease, on its rows (None on other clients')."""


def leaders(db: Database) -> list[Leader]:
    return [Leader(**r) for r in rows(db, db.statements("reads").leader)]


def clients(db: Database) -> list[Client]:
    return [Client(**r) for r in rows(db, db.statements("reads").clients)]
