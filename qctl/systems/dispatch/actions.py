"""qctl's writes to a dispatch database, each with the effect of the dispatch v0.1.0
code it is transcribed from (named beside each statement in ``queries/actions.sql``).

Where dispatch checks a state in Go and then writes a whole row, the check here is the
statement's own predicate: a write never races a worker worse than dispatch's own API
would, and usually less. Every action refuses first (exit 5) on a schema at a version
qctl does not know (``Database.writable``). After a write that makes a job claimable
qctl sends dispatch's wake notification, as dispatch's own EnqueueJob does from v1.5.3
(``store/postgres/wake.go``; at v0.1.0 workers only poll, and nobody listens).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from qctl.core.errors import NoSuchName, WrongState
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.database import Database
from qctl_store.batches import BatchSize, sized_batches
from qctl_store.config import MAINTENANCE_BATCH_SECONDS
from qctl_store.errors import InvalidInput, add_done

CANCELLABLE = ("pending", "retrying")
"""The states api/job_handler.go cancelJob accepts. A running job is refused: dispatch
v0.1.0 has no lease epoch to fence its worker with, and that worker's whole-row
UpdateJob on completion would overwrite the cancel anyway."""


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id(kind: str = "job") -> str:
    """A fresh dispatch id as ``id.NewJobID`` (``kind`` ``job``) or ``id.NewDLQID``
    (``dlq``) makes it: TypeID ``<kind>_`` + a UUIDv7 (48-bit Unix milliseconds, version
    7, variant 10, random bits) in TypeID's base32."""
    value = int.from_bytes(os.urandom(16), "big")
    ms = time.time_ns() // 1_000_000
    value = (value & ~(((1 << 48) - 1) << 80)) | (ms << 80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    digits = [_CROCKFORD[(value >> (5 * i)) & 0x1F] for i in range(25, -1, -1)]
    return f"{kind}_" + "".join(digits)


@dataclass
class Cancelled:
    job_id: str
    name: str
    queue: str
    state: str
    """The state the job was in (a dry run: would be cancelled from)."""
    dry_run: bool = False


def cancel(db: Database, job_id: str, dry_run: bool = False) -> Cancelled:
    """Cancel a pending or retrying job: state ``cancelled``, ``completed_at`` now."""
    db.writable()
    job = reads.get_job(db, job_id)
    outcome = Cancelled(job.id, job.name, job.queue, job.state, dry_run)
    _require(job.state, CANCELLABLE, "jobs cancel", f"dispatch job {job.id}", "cancelled")
    if dry_run:
        return outcome
    with db.transaction():
        done = db.one(reads.queries("actions.sql").cancel_job, {"id": job.id})
    if done is None:  # a worker (or another operator) changed it since the read
        now = reads.get_job(db, job.id).state
        raise WrongState("jobs cancel", f"dispatch job {job.id} became {now}; not cancelled")
    return outcome


def _require(state: str, needs: tuple[str, ...], op: str, subject: str, action: str) -> None:
    if state not in needs:
        extra = (
            "; a running job cannot be cancelled safely at dispatch v0.1.0 (no lease epoch"
            " to fence its worker)"
            if state == "running"
            else ""
        )
        raise WrongState(
            op, f"{subject} is {state}: only {' or '.join(needs)} jobs can be {action}{extra}"
        )


@dataclass
class Replayed:
    entry_id: str
    job_id: str
    """The job that failed."""
    job_name: str
    queue: str
    new_job_id: str | None = None
    dry_run: bool = False


def replay(db: Database, entry_id: str, dry_run: bool = False) -> Replayed:
    """Enqueue a DLQ entry again as a new pending job, once (dlq/replay.go Replay)."""
    db.writable()
    entry = reads.get_dlq(db, entry_id)
    outcome = Replayed(entry.id, entry.job_id, entry.job_name, entry.queue, dry_run=dry_run)
    if entry.replayed_at is not None:
        raise _replayed(entry.id, entry.replayed_at)
    if dry_run:
        return outcome
    q = reads.queries("actions.sql")
    with db.transaction():
        claimed = db.one(q.claim_dlq, {"id": entry.id})
        if claimed is None:  # another replay took it since the read
            again = reads.get_dlq(db, entry.id)
            raise _replayed(entry.id, again.replayed_at)
        outcome.new_job_id = _enqueue(
            db,
            name=claimed["job_name"],
            queue=claimed["queue"],
            payload=claimed["payload"],
            max_retries=claimed["max_retries"],
            scope_app_id=claimed["scope_app_id"],
            scope_org_id=claimed["scope_org_id"],
            timeout=0,
        )
    return outcome


def _enqueue(db: Database, **job: object) -> str:
    """Insert one pending job (inside the caller's transaction) and wake dispatch's
    workers on commit; its new id."""
    q = reads.queries("actions.sql")
    row = db.one(q.enqueue_job, {"id": new_id(), "worker_id": db.unheld_worker_id, **job})
    db.one(q.wake)
    assert row is not None
    return str(row["id"])


def _replayed(entry_id: str, at: datetime | None) -> WrongState:
    return WrongState(
        "dlq replay",
        f"dispatch DLQ entry {entry_id} was already replayed"
        + (f" at {at:%Y-%m-%d %H:%M:%S}" if at else "")
        + "; qctl replays an entry once",
    )


def retry(db: Database, job_id: str, dry_run: bool = False) -> Replayed:
    """Run a failed job again the one way dispatch v0.1.0 has: replay its DLQ entry (the
    newest not yet replayed) as a new job. The failed row stays as it is."""
    job = reads.get_job(db, job_id)
    if job.state != "failed":
        raise WrongState(
            "jobs retry", f"dispatch job {job.id} is {job.state}: only failed jobs can be retried"
        )
    entries = [e for e in reads.dlq_of_job(db, job) if e.replayed_at is None]
    if not entries:
        raise WrongState(
            "jobs retry",
            f"dispatch job {job.id} has no DLQ entry left to replay (dispatch re-runs a"
            " failed job only from its DLQ entry; see `qctl dlq list`)",
        )
    return replay(db, entries[0].id, dry_run)


@dataclass
class Purged:
    before: datetime
    count: int
    unreplayed: int
    """Of ``count``, entries never replayed: their jobs are gone for good."""
    dry_run: bool = False


def purge(db: Database, older_than: timedelta, dry_run: bool = False) -> Purged:
    """Delete DLQ entries that failed longer ago than ``older_than``, replayed or not,
    as store/postgres/dlq.go PurgeDLQ does (its API purges at 30 days)."""
    db.writable()
    if older_than <= timedelta(0):
        raise InvalidInput("--older-than must be more than 0: a zero cutoff purges every entry")
    before = datetime.now(UTC) - older_than
    q = reads.queries("actions.sql")
    counted = db.one(q.count_purge, {"before": before}) or {"n": 0, "unreplayed": 0}
    outcome = Purged(before, int(counted["n"]), int(counted["unreplayed"]), dry_run)
    if dry_run:
        return outcome
    with db.transaction():
        deleted = db.all(q.purge_dlq, {"before": before})
    outcome.count = len(deleted)
    outcome.unreplayed = sum(1 for r in deleted if r["replayed_at"] is None)
    return outcome


@dataclass
class CronChanged:
    cron_id: str
    name: str
    action: str
    enabled: bool
    """Whether the entry was enabled before."""
    dry_run: bool = False


def _firing(entry: reads.CronEntry) -> bool:
    return bool(entry.locked_by and entry.locked_until and entry.locked_until > datetime.now(UTC))


def change_cron(db: Database, key: str, action: str, dry_run: bool = False) -> CronChanged:
    """``enable``, ``disable`` or ``delete`` a cron entry (by id or name); refused while
    the scheduler is firing it (see queries/actions.sql)."""
    db.writable()
    entry = reads.get_cron(db, key)
    outcome = CronChanged(entry.id, entry.name, action, entry.enabled, dry_run)
    op = f"cron {action}"
    if action != "delete" and entry.enabled == (action == "enable"):
        raise WrongState(op, f"dispatch cron entry {entry.name} is already {action}d")
    if _firing(entry):
        raise WrongState(op, f"dispatch cron entry {entry.name} is firing now; try again")
    if dry_run:
        return outcome
    q = reads.queries("actions.sql")
    with db.transaction():
        if action == "delete":
            done = db.one(q.delete_cron, {"id": entry.id})
        else:
            done = db.one(q.set_cron_enabled, {"id": entry.id, "enabled": action == "enable"})
    if done is None:
        raise WrongState(
            op, f"dispatch cron entry {entry.name} changed or started firing; try again"
        )
    return outcome


ENQUEUE_RAW_MAX_RETRIES = 3
ENQUEUE_RAW_TIMEOUT_NS = 5 * 60 * 10**9
"""engine.go EnqueueRaw's job with no options (job/options.go DefaultOptions): three
retries, a five-minute timeout, queue ``default``."""


@dataclass
class CronTriggered:
    cron_id: str
    name: str
    job_name: str
    queue: str
    new_job_id: str | None = None
    dry_run: bool = False


def trigger_cron(db: Database, key: str, dry_run: bool = False) -> CronTriggered:
    """Run a cron entry's job now (dispatch's own API has no such call: api/cron_handler.go
    lists, enables, disables and deletes): the job a scheduled fire enqueues
    (cron/scheduler.go fireEntry, through engine/engine.go EnqueueRaw, with the entry's job name,
    payload and queue override), the schedule untouched (last_run_at, next_run_at), a
    disabled entry too. The scheduler's fire carries no scope, so neither does this."""
    db.writable()
    entry = reads.get_cron(db, key)
    queue = entry.queue or "default"
    outcome = CronTriggered(entry.id, entry.name, entry.job_name, queue, dry_run=dry_run)
    if dry_run:
        return outcome
    with db.transaction():
        raw = db.one(reads.queries("actions.sql").cron_payload, {"id": entry.id})
        if raw is None:
            raise NoSuchName("cron trigger", f"dispatch cron entry {entry.name} was deleted")
        outcome.new_job_id = _enqueue(
            db,
            name=entry.job_name,
            queue=queue,
            # a NULL payload (the column allows it) would fail dispatch_jobs' NOT NULL:
            # dispatch's own trigger errors there; qctl enqueues the empty payload the
            # handler would have been given
            payload=raw["payload"] or b"",
            max_retries=ENQUEUE_RAW_MAX_RETRIES,
            scope_app_id="",
            scope_org_id="",
            timeout=ENQUEUE_RAW_TIMEOUT_NS,
        )
    return outcome


VACUUM_BATCH = 1000
"""Most rows one vacuum statement deletes (fewer while its transactions run long:
``qctl_store.batches.BatchSize``): short transactions beside a running fleet."""


@dataclass
class Vacuumed:
    before: datetime
    jobs: int
    """Completed and cancelled jobs that finished before ``before``."""
    events: int
    """Acknowledged events created before ``before``."""
    dlq: int
    """DLQ entries replayed before ``before``."""
    dry_run: bool = False


def vacuum(
    db: Database, older_than: timedelta, dry_run: bool = False, batch: int = VACUUM_BATCH
) -> Vacuumed:
    """Delete what dispatch no longer reads and never deletes itself: finished jobs,
    acked events and replayed DLQ entries older than ``older_than``, in batches."""
    db.writable()
    if older_than <= timedelta(0):
        raise InvalidInput("--older-than must be more than 0: a zero cutoff vacuums everything")
    before = datetime.now(UTC) - older_than
    q = reads.queries("actions.sql")
    counted = db.one(q.count_vacuum, {"before": before}) or {}
    outcome = Vacuumed(
        before,
        int(counted.get("jobs", 0)),
        int(counted.get("events", 0)),
        int(counted.get("dlq", 0)),
        dry_run,
    )
    if dry_run:
        return outcome

    def delete(statement: str) -> int:
        """``statement``'s batches, each in its own transaction, until one comes back short."""
        return sized_batches(
            BatchSize(batch, MAINTENANCE_BATCH_SECONDS),
            db.transaction,
            lambda _tx, rows: db.execute(statement, {"before": before, "batch": rows}),
        ).rows

    deleted = 0
    for field, statement in (
        ("jobs", q.vacuum_jobs),
        ("events", q.vacuum_events),
        ("dlq", q.vacuum_dlq),
    ):
        try:
            setattr(outcome, field, delete(statement))
        except BaseException as exc:  # the kinds of rows before this one are done
            add_done(exc, deleted)
            raise
        deleted += getattr(outcome, field)
    return outcome


@dataclass
class DLQDeleted:
    entry_id: str
    job_id: str
    job_name: str
    queue: str
    replayed: bool
    """False: the entry was its failed job's last copy."""
    dry_run: bool = False


def delete_dlq(db: Database, entry_id: str, dry_run: bool = False) -> DLQDeleted:
    """Delete one DLQ entry for good, replayed or not, as dispatch's DeleteDLQ does."""
    db.writable()
    entry = reads.get_dlq(db, entry_id)
    replayed = entry.replayed_at is not None
    outcome = DLQDeleted(entry.id, entry.job_id, entry.job_name, entry.queue, replayed, dry_run)
    if dry_run:
        return outcome
    with db.transaction():
        done = db.one(reads.queries("actions.sql").delete_dlq, {"id": entry.id})
    if done is None:
        raise NoSuchName("dlq delete", f"dispatch DLQ entry {entry.id} was deleted meanwhile")
    return outcome
