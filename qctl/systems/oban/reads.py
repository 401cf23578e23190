"""qctl's reads of an Oban database: typed rows under Oban's column names and the
listings, each one statement of ``queries/reads.sql``. JSON comes back decoded by the
driver (``args``, ``meta``, each ``errors`` entry, ``qctl_kit.decode``); Oban's naive
UTC instants come back marked UTC. Nothing read is executed."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from qctl.core.errors import NoSuchName, no_such_id
from qctl.systems.oban.database import PY, STATES, Database
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import Queries, load

LIVE_STATES = ("available", "scheduled", "suspended", "executing", "retryable")
FINISHED_STATES = ("completed", "cancelled", "discarded")
"""The states Oban's pruner deletes from, each with its own instant (``_pruner.py``)."""
DASHBOARD_CAP = 1_000
"""Jobs the dashboard's Queues tab counts per queue and state at most (``1000+`` past
it; ``queues list`` counts them all): its refresh stays one index probe per pair and a
bounded count, however deep."""
INSTANTS = (
    "inserted_at",
    "scheduled_at",
    "attempted_at",
    "completed_at",
    "cancelled_at",
    "discarded_at",
    "started_at",
    "updated_at",
    "expires_at",
)


def queries(name: str) -> Queries:
    return load("qctl.systems.oban.queries", name)


def utc(value: Any) -> Any:
    """Oban's naive instant (UTC, ``timestamp without time zone``) marked UTC; anything
    else (None, a ``FarInstant``) as it is."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


@dataclass
class Job:
    id: int
    state: str
    queue: str
    worker: str
    priority: int
    attempt: int
    max_attempts: int
    args: Any
    meta: Any
    tags: list[str]
    attempted_by: list[str]
    inserted_at: datetime
    scheduled_at: datetime
    attempted_at: datetime | None
    completed_at: datetime | None
    cancelled_at: datetime | None
    discarded_at: datetime | None
    error_count: int
    errors: list[Any] | None = None
    """Every failed attempt, oldest first (``jobs show`` only): ``{"at", "attempt",
    "error"}`` as oban-py's executor and Elixir's ``Oban.Job`` record them."""

    @property
    def last_error(self) -> str:
        if not self.errors:
            return ""
        last = self.errors[-1]
        return str(last.get("error", "")) if isinstance(last, dict) else str(last)


def attempt_errors(job: Job) -> list[dict[str, Any]]:
    """A job's failed attempts, oldest first, as Oban records them (``at``, ``attempt``,
    ``error``); an element that is not an object kept as its error."""
    return [e if isinstance(e, dict) else {"error": e} for e in job.errors or []]


@dataclass
class Failure:
    """One failed attempt of a job (``jobs errors``)."""

    id: int
    state: str
    queue: str
    worker: str
    attempt: Any
    at: Any
    error: str


@dataclass
class Node:
    """A producer (oban-py: one per queue and node), or an Elixir peer; ``leader``: the
    leader row names this node."""

    name: str
    node: str
    queue: str
    started_at: datetime | None
    updated_at: datetime | None
    expires_at: datetime | None
    leader: bool
    local_limit: Any = None
    paused: Any = None
    uuid: str = ""


@dataclass
class Queue:
    """A queue: its jobs per state (the finished states None where not counted) and, on
    oban-py, what its producers last wrote (limits and pauses, one per node)."""

    queue: str
    available: int = 0
    scheduled: int = 0
    suspended: int = 0
    executing: int = 0
    retryable: int = 0
    completed: int | None = None
    cancelled: int | None = None
    discarded: int | None = None
    oldest_available_age: timedelta | None = None
    nodes: list[str] = field(default_factory=list)
    limits: list[Any] = field(default_factory=list)
    paused: bool | None = None
    """Every producer paused (True), none (False); None: no producer row says (an Elixir
    node keeps its queues' state in memory)."""
    capped: list[str] = field(default_factory=list)
    """The states counted only up to the dashboard's cap (at least that many)."""


Row = TypeVar("Row", Job, Node)


def _record(cls: type[Row], row: dict[str, Any]) -> Row:
    names = {f.name for f in fields(cls)}
    return cls(**{k: (utc(v) if k in INSTANTS else v) for k, v in row.items() if k in names})


def parse_id(text: str, what: str = "job id") -> int:
    """An Oban job id (a positive integer) as typed."""
    try:
        value = int(text.strip())
    except ValueError:
        raise InvalidInput(f"{what} {text!r}: not an Oban job id (a number)") from None
    if value < 1:
        raise InvalidInput(f"{what} {text!r}: Oban job ids start at 1")
    return value


BIGINT_MAX = 2**63 - 1


def id_ranges(digits: str) -> list[tuple[int, int]]:
    """The ranges of job ids whose decimal digits start with ``digits`` (``12``: 12,
    120 to 129, 1200 to 1299, ...), up to bigint's last; every id for ``""``; none for
    what no id starts with."""
    if not digits:
        return [(1, BIGINT_MAX)]
    if not (digits.isascii() and digits.isdigit()) or digits[0] == "0":
        return []
    ranges = []
    low, high = int(digits), int(digits)
    while low <= BIGINT_MAX:
        ranges.append((low, min(high, BIGINT_MAX)))
        low, high = low * 10, high * 10 + 9
    return ranges


def job_ids(db: Database, digits: str, limit: int) -> list[int]:
    """At most ``limit`` job ids that start with ``digits``, the shortest first, newest
    first among equals."""
    ranges = id_ranges(digits)
    if not ranges:
        return []
    params = {"lows": [r[0] for r in ranges], "highs": [r[1] for r in ranges], "limit": limit}
    return [int(r["id"]) for r in db.all(queries("reads.sql").job_ids_by_prefix, params)]


def check_states(states: list[str] | None) -> list[str] | None:
    for state in states or []:
        if state not in STATES:
            raise InvalidInput(f"--state: {state!r} is not an Oban job state")
    return states or None


def _filters(
    states: list[str] | None, queues: list[str] | None, workers: list[str] | None
) -> dict[str, Any]:
    return {"states": states or None, "queues": queues or None, "workers": workers or None}


def contained(args: dict[str, Any] | None, meta: dict[str, Any] | None) -> dict[str, Any]:
    """The parameters of fragments.sql ``contains``: each object as its JSON text (None:
    any), which the job's column must contain (PostgreSQL's @>)."""
    return {
        "args": None if args is None else json.dumps(args),
        "meta": None if meta is None else json.dumps(meta),
    }


def list_jobs(
    db: Database,
    states: list[str] | None = None,
    queues: list[str] | None = None,
    workers: list[str] | None = None,
    limit: int = 50,
    after: int | None = None,
    args: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> list[Job]:
    """A page newest first; ``args``, ``meta``: JSON objects the job's columns contain."""
    params = {
        **_filters(states, queues, workers),
        **contained(args, meta),
        "limit": limit,
        "after_id": after,
    }
    return [_record(Job, r) for r in db.all(queries("reads.sql").list_jobs, params)]


def get_job(db: Database, job_id: int) -> Job:
    rows = db.all(queries("reads.sql").get_job, {"id": job_id})
    if not rows:
        raise no_such_id("job", job_id)
    return _record(Job, rows[0])


def failures(
    db: Database,
    states: list[str] | None = None,
    queues: list[str] | None = None,
    workers: list[str] | None = None,
    limit: int = 50,
    after: int | None = None,
) -> list[tuple[int, list[Failure]]]:
    """A page of jobs holding failed attempts, newest first: each job's id and its
    attempts, newest attempt first."""
    params = {**_filters(states, queues, workers), "limit": limit, "after_id": after}
    page = []
    for row in db.all(queries("reads.sql").failed_jobs, params):
        entries = row["errors"] if isinstance(row["errors"], list) else [row["errors"]]
        attempts = [
            Failure(
                row["id"],
                row["state"],
                row["queue"],
                row["worker"],
                e.get("attempt") if isinstance(e, dict) else None,
                e.get("at") if isinstance(e, dict) else None,
                str(e.get("error", "")) if isinstance(e, dict) else str(e),
            )
            for e in reversed(entries)
        ]
        page.append((int(row["id"]), attempts))
    return page


def nodes(db: Database) -> list[Node]:
    """oban-py's producers, or Elixir's peers, each marked where the leader row names its
    node."""
    q = queries("reads.sql")
    if db.flavour == PY:
        leaders = {(r["node"]) for r in db.all(q.leader)}
        out = []
        for r in db.all(q.producers):
            meta = r.pop("meta") if isinstance(r.get("meta"), dict) else {}
            out.append(
                _record(
                    Node,
                    {
                        **r,
                        "expires_at": None,
                        "leader": r["node"] in leaders,
                        "local_limit": meta.get("local_limit", meta.get("limit")),
                        "paused": meta.get("paused"),
                    },
                )
            )
        return out
    if "oban_peers" not in db.state.tables:
        return []
    return [
        _record(Node, {**r, "queue": "", "updated_at": None, "leader": True})
        for r in db.all(q.peers)
    ]


def list_queues(db: Database, live: bool = False, cap: int | None = None) -> list[Queue]:
    """Every queue with its jobs per state (``live``: the states not finished only, each
    counted up to ``cap``, None: all) and what its producers say."""
    now = datetime.now(UTC)
    queues: dict[str, Queue] = {}
    q = queries("reads.sql")
    states = [s for s in LIVE_STATES if s in db.state.states]
    rows = db.all(q.live_depths, {"states": states, "cap": cap}) if live else db.all(q.depths)
    for r in rows:
        queue = queues.setdefault(r["queue"], Queue(r["queue"]))
        if r["state"] in {f.name for f in fields(Queue)}:
            setattr(queue, r["state"], int(r["n"]))
            if cap is not None and int(r["n"]) >= cap:
                queue.capped.append(r["state"])
        oldest = utc(r["oldest_available"])
        if isinstance(oldest, datetime):
            queue.oldest_available_age = max(now - oldest, timedelta(0))
    producers: dict[str, list[Node]] = defaultdict(list)
    for node in nodes(db):
        if node.queue:
            producers[node.queue].append(node)
    for name, held in producers.items():
        queue = queues.setdefault(name, Queue(name))
        queue.nodes = [n.node for n in held]
        queue.limits = [n.local_limit for n in held]
        queue.paused = all(bool(n.paused) for n in held)
    for queue in queues.values():
        for state in () if live else FINISHED_STATES:
            if getattr(queue, state) is None:
                setattr(queue, state, 0)
    return sorted(queues.values(), key=lambda q: q.queue)


def get_queue(db: Database, name: str) -> tuple[Queue, list[Node]]:
    found = [q for q in list_queues(db) if q.queue == name]
    if not found:
        raise NoSuchName("show queue", f"no queue {name!r} (no job and no producer)")
    return found[0], [n for n in nodes(db) if n.queue == name]


def throughput(db: Database, seconds: int) -> list[dict[str, Any]]:
    """Jobs finished per queue and state in the last ``seconds``."""
    return db.all(queries("reads.sql").throughput, {"seconds": seconds})
