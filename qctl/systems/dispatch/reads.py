"""qctl's reads of a dispatch database: typed rows (the column names of dispatch's
tables, ``store/postgres/migrations.go``) and the listings, each one statement of
``queries/reads.sql``."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any, TypeVar

from qctl.core import triage
from qctl.core.errors import NoSuchName, no_such_id
from qctl.core.parse import ambiguous
from qctl.systems.dispatch.database import Database
from qctl_kit.decode import json_value
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import Queries, load

STATES = ("pending", "running", "completed", "failed", "retrying", "cancelled")
"""``job/job.go``'s states at dispatch v0.1.0."""
RUN_STATES = ("running", "completed", "failed")
"""``workflow/run.go``'s states at dispatch v0.1.0."""


def queries(name: str) -> Queries:
    return load("qctl.systems.dispatch.queries", name)


@dataclass
class Job:
    id: str
    name: str
    queue: str
    state: str
    priority: int
    max_retries: int
    retry_count: int
    last_error: str | None
    scope_app_id: str | None
    scope_org_id: str | None
    worker_id: str | None
    run_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    heartbeat_at: datetime | None
    timeout: int
    """Nanoseconds (a Go ``time.Duration``); 0: none."""
    created_at: datetime
    updated_at: datetime
    payload: Any


@dataclass
class DLQEntry:
    id: str
    job_id: str
    job_name: str
    queue: str
    error: str
    retry_count: int
    max_retries: int
    scope_app_id: str | None
    scope_org_id: str | None
    failed_at: datetime
    replayed_at: datetime | None
    created_at: datetime
    payload: Any


@dataclass
class CronEntry:
    id: str
    name: str
    schedule: str
    job_name: str
    queue: str
    enabled: bool
    last_run_at: datetime | None
    next_run_at: datetime | None
    locked_by: str | None
    locked_until: datetime | None
    scope_app_id: str | None
    scope_org_id: str | None
    created_at: datetime
    updated_at: datetime
    payload: Any


@dataclass
class Worker:
    id: str
    hostname: str
    queues: list[str]
    concurrency: int
    state: str
    is_leader: bool
    leader_until: datetime | None
    last_seen: datetime
    metadata: Any
    created_at: datetime


@dataclass
class Run:
    """A workflow run (``dispatch_workflow_runs``); input and output as payloads are."""

    id: str
    name: str
    state: str
    error: str | None
    scope_app_id: str | None
    scope_org_id: str | None
    started_at: datetime
    completed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    input: Any
    output: Any


@dataclass
class Checkpoint:
    id: str
    step_name: str
    created_at: datetime
    data: Any


@dataclass
class QueueStats:
    queue: str
    pending: int
    retrying: int
    running: int
    completed: int
    failed: int
    cancelled: int
    oldest_pending_age: timedelta | None


@dataclass
class QueueDepth:
    """A queue's live figures: what waits and runs (``queue_depths``)."""

    queue: str
    pending: int
    retrying: int
    running: int
    oldest_pending_age: timedelta | None


@dataclass
class Stats:
    """api/stats_handler.go's answer: jobs per state, DLQ entries, runs per state."""

    pending: int
    running: int
    completed: int
    failed: int
    retrying: int
    cancelled: int
    dlq: int
    dlq_unreplayed: int
    runs_running: int
    runs_completed: int
    runs_failed: int


Row = TypeVar(
    "Row", Job, DLQEntry, CronEntry, Worker, QueueStats, QueueDepth, Run, Checkpoint, Stats
)


_PAYLOADS = frozenset({"payload", "input", "output", "data"})
"""Columns of bytes the application wrote: decoded as JSON where they are JSON
(``decode.json_value``)."""


def _rows(cls: type[Row], rows: list[dict[str, Any]]) -> list[Row]:
    names = {f.name for f in fields(cls)}
    out = []
    for row in rows:
        row = {k: json_value(v) if k in _PAYLOADS else v for k, v in row.items()}
        out.append(cls(**{k: v for k, v in row.items() if k in names}))
    return out


@dataclass(frozen=True)
class Cursor:
    """Where a newest-first page ends: the last row's id (ids sort by creation)."""

    id: str

    def encode(self) -> str:
        raw = json.dumps([self.id], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            [id_] = json.loads(raw)
            return cls(str(id_))
        except (ValueError, TypeError):
            raise InvalidInput(f"--after: {text!r} is not a cursor printed by a listing") from None


def _any(values: list[str] | None) -> list[str] | None:
    return list(values) if values else None


def _page(cursor: Cursor | None) -> dict[str, Any]:
    return {"after_id": cursor.id if cursor else None}


def _job_filter(
    states: list[str] | None,
    queues: list[str] | None,
    names: list[str] | None,
    limit: int,
    cursor: Cursor | None,
) -> dict[str, Any]:
    return {
        "states": _any(states),
        "queues": _any(queues),
        "names": _any(names),
        "limit": limit,
        **_page(cursor),
    }


def list_jobs(
    db: Database,
    states: list[str] | None = None,
    queues: list[str] | None = None,
    names: list[str] | None = None,
    limit: int = 50,
    cursor: Cursor | None = None,
) -> list[Job]:
    params = _job_filter(states, queues, names, limit, cursor)
    return _rows(Job, db.all(queries("reads.sql").list_jobs, params))


FAILED = ["failed"]
"""The jobs ``error_groups`` reads unless told: out of retries (each has a DLQ entry)."""


def error_groups(
    db: Database,
    states: list[str] | None = None,
    queues: list[str] | None = None,
    names: list[str] | None = None,
    scan: int = triage.SCAN,
) -> triage.ErrorGroups:
    """The newest ``scan`` jobs of ``states`` (default ``FAILED``) grouped by the
    fingerprint of their last error, labelled by job name: only ids, names, last errors
    and times are read."""
    q = queries("reads.sql")
    statement = f"{q.failures_of} ({q.list_jobs}) AS j ORDER BY id DESC"
    return triage.scan_groups(
        lambda after, n: db.all(statement, _job_filter(states or FAILED, queues, names, n, after)),
        lambda row: Cursor(row["id"]),
        lambda row: (row["id"], row["error"] or "", row["at"], row["name"]),
        scan,
    )


def dlq_waiting(db: Database, cap: int = triage.COUNT_CAP) -> tuple[dict[str, int], bool]:
    """DLQ entries not replayed per queue, and whether the count is a lower bound (a
    bounded read: no index holds replayed_at)."""
    rows = db.all(queries("reads.sql").dlq_waiting_bounded, {"cap": cap})
    return triage.bounded_counts(rows, cap)


_TYPEID_PREFIX = re.compile(r"[a-z]+_[0-9a-z]*")
_SUFFIX = 26
"""A TypeID's characters after its type prefix (typeid's spec: 26 of base32)."""
_TOP = "z" * 40
"""Sorts after every id suffix of TypeID digits, so a prefix's ids are one index range."""


def _resolve(db: Database, what: str, prefix: str, exact: str, starting: str, text: str) -> str:
    """A dispatch id typed whole (looked up by primary key), without its type prefix
    (``job_``), or as a unique prefix of either form (a range of the primary key)."""
    if not text:
        raise InvalidInput(f"{what} id: empty")
    full = text if text.startswith(prefix) else prefix + text
    if db.one(exact, {"id": full}):
        return full
    full = full.lower()  # TypeIDs are lower-case
    if not _TYPEID_PREFIX.fullmatch(full):
        raise InvalidInput(f"{what} id {text!r}: not a dispatch id or a prefix of one")
    ids = [r["id"] for r in db.all(starting, {"prefix": full, "top": _TOP})]
    if not ids:
        raise no_such_id(what, text, whole=len(full) == len(prefix) + _SUFFIX)
    if len(ids) > 1:
        raise ambiguous(what, text, ids)
    return str(ids[0])


def resolve_job(db: Database, text: str) -> str:
    q = queries("reads.sql")
    return _resolve(db, "job", "job_", q.get_job, q.job_ids_with_prefix, text)


def resolve_run(db: Database, text: str) -> str:
    q = queries("reads.sql")
    return _resolve(db, "workflow run", "wfrun_", q.get_run, q.run_ids_with_prefix, text)


def resolve_dlq(db: Database, text: str) -> str:
    q = queries("reads.sql")
    return _resolve(db, "DLQ entry", "dlq_", q.get_dlq, q.dlq_ids_with_prefix, text)


def get_job(db: Database, job_id: str) -> Job:
    rows = _rows(Job, db.all(queries("reads.sql").get_job, {"id": job_id}))
    if not rows:
        raise no_such_id("job", job_id)
    return rows[0]


def dlq_of_job(db: Database, job: Job) -> list[DLQEntry]:
    params = {"job_id": job.id, "queue": job.queue, "created_at": job.created_at}
    return _rows(DLQEntry, db.all(queries("reads.sql").dlq_of_job, params))


def queue_stats(db: Database) -> list[QueueStats]:
    """Every state per queue: a scan of the jobs (``qctl queues list``)."""
    return _rows(QueueStats, db.all(queries("reads.sql").queue_stats))


def queue_depths(db: Database) -> list[QueueDepth]:
    """What waits and runs per queue, through the indexes (the live Queues tab)."""
    return _rows(QueueDepth, db.all(queries("reads.sql").queue_depths))


def list_dlq(
    db: Database,
    queues: list[str] | None = None,
    names: list[str] | None = None,
    replayed: bool | None = None,
    limit: int = 50,
    cursor: Cursor | None = None,
) -> list[DLQEntry]:
    params = {
        "queues": _any(queues),
        "names": _any(names),
        "replayed": replayed,
        "limit": limit,
        **_page(cursor),
    }
    return _rows(DLQEntry, db.all(queries("reads.sql").list_dlq, params))


def get_dlq(db: Database, entry_id: str) -> DLQEntry:
    rows = _rows(DLQEntry, db.all(queries("reads.sql").get_dlq, {"id": entry_id}))
    if not rows:
        raise NoSuchName("get DLQ entry", f"no dispatch DLQ entry {entry_id!r}")
    return rows[0]


def list_cron(db: Database) -> list[CronEntry]:
    return _rows(CronEntry, db.all(queries("reads.sql").list_cron))


def get_cron(db: Database, key: str) -> CronEntry:
    """A cron entry by id or name."""
    rows = _rows(CronEntry, db.all(queries("reads.sql").get_cron, {"key": key}))
    if not rows:
        raise NoSuchName("get cron entry", f"no dispatch cron entry {key!r}")
    return rows[0]


def list_workers(db: Database) -> list[Worker]:
    return _rows(Worker, db.all(queries("reads.sql").list_workers))


def list_runs(
    db: Database,
    states: list[str] | None = None,
    names: list[str] | None = None,
    limit: int = 50,
    cursor: Cursor | None = None,
) -> list[Run]:
    params = {"states": _any(states), "names": _any(names), "limit": limit, **_page(cursor)}
    return _rows(Run, db.all(queries("reads.sql").list_runs, params))


def get_run(db: Database, run_id: str) -> tuple[Run, list[Checkpoint]]:
    """A run and its checkpoints."""
    q = queries("reads.sql")
    runs = _rows(Run, db.all(q.get_run, {"id": run_id}))
    if not runs:
        raise NoSuchName("get workflow run", f"no dispatch workflow run {run_id!r}")
    return runs[0], _rows(Checkpoint, db.all(q.run_checkpoints, {"id": run_id}))


def stats(db: Database) -> Stats:
    return _rows(Stats, db.all(queries("reads.sql").stats))[0]


WATCH_BATCH = 500
"""Rows of each kind one poll of ``changes_since`` reads at most."""


@dataclass
class WatchMarks:
    """Where a watch stands, per kind: a mark one poll behind (ids a producer made just
    before another's can commit just after, so each poll re-reads the last one's rows)
    and the ids past it already printed."""

    job: str | None = None
    dlq: str | None = None
    seen: dict[str, set[str]] = field(default_factory=lambda: {"job": set(), "dlq": set()})


def watch_start(db: Database) -> WatchMarks:
    """Marks at the newest job and DLQ entry: a watch prints what comes after."""
    newest = db.one(queries("reads.sql").newest_ids) or {}
    return WatchMarks(newest.get("job"), newest.get("dlq"))


def changes_since(db: Database, marks: WatchMarks) -> list[dict[str, Any]]:
    """New jobs and DLQ entries since the last call, each once, oldest first; moves
    ``marks`` on. Each poll walks the primary keys from the marks."""
    q = queries("reads.sql")
    out: list[dict[str, Any]] = []
    for kind, statement in (("job", q.jobs_after), ("dlq", q.dlq_after)):
        rows = db.all(statement, {"after": getattr(marks, kind), "limit": WATCH_BATCH})
        before = marks.seen[kind]
        out.extend(r for r in rows if r["id"] not in before)
        # rows printed a poll ago had that poll to let earlier ids commit: past them
        old = [r["id"] for r in rows if r["id"] in before]
        if old:
            setattr(marks, kind, max(old))
        mark = getattr(marks, kind) or ""
        marks.seen[kind] = {r["id"] for r in rows if r["id"] > mark}
    return out


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
"""TypeID's base32 alphabet (go.jetify.com/typeid, the ids of dispatch's id/id.go)."""


def typeid_floor(prefix: str, at: datetime) -> str:
    """The smallest TypeID of ``prefix`` made at or after ``at``. A TypeID's 26 digits
    are its UUID's 128 bits, 3 in the first digit and 5 in each other; a UUIDv7 begins
    with its 48-bit Unix millisecond, so the first ten digits are the instant it was
    made and the other sixteen (random) are lowest at 0."""
    ms = max(0, int(at.timestamp() * 1000))
    digits = [_CROCKFORD[(ms >> (45 - 5 * i)) & (7 if i == 0 else 31)] for i in range(10)]
    return f"{prefix}_{''.join(digits)}{'0' * 16}"


THROUGHPUT_MEASURES = ("enqueued", "completed", "failed", "cancelled")
THROUGHPUT_LOOKBACK = timedelta(minutes=5)
"""How long before the window a job may have been enqueued and still count as
completed or cancelled in it (dispatch indexes no completed_at: the jobs read are the
primary key's range from the look-back's start)."""


@dataclass
class ThroughputCount:
    """One queue's bucket: jobs enqueued, completed, failed for good (entered the DLQ)
    and cancelled in it."""

    start: datetime
    queue: str
    enqueued: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0


def throughput(
    db: Database, window: timedelta, bucket: timedelta, queues: list[str] | None = None
) -> tuple[list[ThroughputCount], datetime]:
    """Every queue's counts per bucket of ``bucket``, the buckets aligned on the Unix
    epoch, the last holding the database's now, together covering ``window`` (oldest
    first, buckets where nothing happened left out); and the instant from which jobs
    enqueued before the window count as completed or cancelled in it."""
    from qctl_kit.throughput import bucket_start, grid

    [now] = db.all("SELECT now() AS now")
    width, first, _count = grid(now["now"], window, bucket)
    since = bucket_start(first, width)
    horizon = since - THROUGHPUT_LOOKBACK
    params = {
        "width": width,
        "since": since,
        "from_id": typeid_floor("job", horizon),
        "queues": _any(queues),
    }
    counts: dict[tuple[int, str], ThroughputCount] = {}
    for row in db.all(queries("reads.sql").throughput, params):
        key = (int(row["bucket"]), str(row["queue"]))
        point = counts.setdefault(key, ThroughputCount(bucket_start(key[0], width), key[1]))
        setattr(point, row["measure"], getattr(point, row["measure"]) + int(row["n"]))
    return [counts[k] for k in sorted(counts)], horizon
