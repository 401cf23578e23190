"""qctl's writes to a hopper database, each with the effect of hopper's own client at
schema version 8 (``driver/internal/pgsql``, transcribed statement by statement in
``queries/actions.sql``; the Go file and function are named beside each).

Every write runs in one transaction that first reads the schema version again
(``Database.transaction``) and locks the row it decides on, as hopper's own does, so a
worker's claim or finalize cannot slip between qctl's check and its write. Running jobs
are never finalized here: a cancel only asks the client holding the job (hopper's rule),
a retry refuses it (``ErrJobRunning``). ``dry_run=True`` reads and writes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from qctl.core.errors import WrongState
from qctl.systems.hopper import reads
from qctl.systems.hopper.database import Database
from qctl_store.errors import InvalidInput, UniqueViolation

CHANNEL_INSERT = "hopper_insert"
"""``driver/driver.go`` ChannelInsert: the queue name of a committed insert."""
CHANNEL_CONTROL = "hopper_control"
"""ChannelControl: ``cancel:<job id>``, ``pause:<queue>``, ``resume:<queue>``,
``limit:<queue>``."""
CHANNEL_DONE = "hopper_done"
"""ChannelDone: the id of a finalized job inserted with Await."""


@dataclass
class Cancelled:
    job_id: str
    kind: str
    queue: str
    state: str
    """The state the job was in (a dry run: is in)."""
    outcome: str
    """``cancelled`` (a waiting job, now in history), ``cancel requested`` (a running
    job: its client finalizes it)."""
    cascaded: int = 0
    """Workflow dependents cancelled with it."""
    promoted: int = 0
    callbacks: int = 0
    dry_run: bool = False


def _outcome(state: str) -> str:
    return "cancel requested" if state == "running" else "cancelled"


def cancel(db: Database, job_id: uuid.UUID, dry_run: bool = False) -> Cancelled:
    """Cancel a job as hopper's ``JobCancel`` does (``driver/internal/pgsql/jobs.go``):
    a waiting job is finalized as cancelled with hopper's whole finalize tail; a running
    one is only marked ``cancel_requested_at`` and its client told on hopper_control. A
    finalized job is refused (hopper returns it unchanged)."""
    db.require_writable()
    job = reads.get_job(db, job_id)
    if job.state not in reads.LIVE_STATES:
        raise WrongState("jobs cancel", f"hopper job {job.id} is {job.state}: already finalized")
    result = Cancelled(str(job.id), job.kind, job.queue, job.state, _outcome(job.state))
    if dry_run:
        result.dry_run = True
        return result
    q = reads.queries("actions.sql")
    with db.transaction():
        live = db.one(q.lock_live, {"id": job.id})
        if live is None:  # finalized since the read
            now = reads.get_job(db, job.id).state
            raise WrongState("jobs cancel", f"hopper job {job.id} became {now}; not cancelled")
        result.state, result.outcome = live["state"], _outcome(live["state"])
        if live["state"] == "running":
            db.one(q.cancel_running, {"id": job.id})
            db.one(q.notify, {"channel": CHANNEL_CONTROL, "payload": f"cancel:{job.id}"})
        else:
            row = db.one(
                q.cancel_waiting, {"id": job.id, "done": CHANNEL_DONE, "insert": CHANNEL_INSERT}
            )
            assert row is not None  # the row is locked and not running
            result.cascaded = int(row["cascaded"])
            result.promoted = int(row["promoted"])
            result.callbacks = int(row["callbacks"])
    return result


@dataclass
class Retried:
    job_id: str
    kind: str
    queue: str
    state: str
    """The state the job was in."""
    from_history: bool
    batch_id: str | None = None
    """Its batch: one it finished in was counted down already, and counts it again
    when it finishes again (hopper's JobRetry leaves the batch as it is)."""
    dry_run: bool = False


def retry(db: Database, job_id: uuid.UUID, dry_run: bool = False) -> Retried:
    """Make a job available now as hopper's ``JobRetry`` does (``jobs.go``): a waiting
    job has its schedule brought forward; a finalized one moves back from history with
    its attempts and errors (one more attempt if it had run out). Then NOTIFY
    hopper_insert with its queue, as the client's notifier does after it
    (``control.go`` JobRetry). Refused: a running job (``ErrJobRunning``), a live job
    holding the same unique key (``ErrUniqueConflict``) and, stricter than hopper, a
    pending workflow step (its dependencies have not finished)."""
    db.require_writable()
    job = reads.get_job(db, job_id)
    _retryable(job.id, job.state)
    result = Retried(
        str(job.id),
        job.kind,
        job.queue,
        job.state,
        job.state not in reads.LIVE_STATES,
        str(job.batch_id) if job.batch_id else None,
    )
    if dry_run:
        result.dry_run = True
        return result
    q = reads.queries("actions.sql")
    with db.transaction():
        live = db.one(q.lock_live, {"id": job.id})
        result.from_history = live is None
        if live is not None:
            _retryable(job.id, live["state"])
            row = db.one(q.retry_live, {"id": job.id})
        else:
            try:
                row = db.one(q.retry_history, {"id": job.id})
            except UniqueViolation:  # the transaction is rolled back
                raise WrongState(
                    "jobs retry",
                    f"hopper job {job.id}: a live job with the same unique key exists",
                ) from None
            if row is None:
                raise WrongState("jobs retry", f"hopper job {job.id} changed; not retried")
        assert row is not None
        db.one(q.notify, {"channel": CHANNEL_INSERT, "payload": row["queue"]})
    return result


def _retryable(job_id: uuid.UUID, state: str) -> None:
    if state == "running":
        raise WrongState("jobs retry", f"hopper job {job_id} is running (hopper: job is running)")
    if state == "pending":
        raise WrongState(
            "jobs retry",
            f"hopper job {job_id} is pending: a workflow step waits for its dependencies",
        )


@dataclass
class QueueChanged:
    queue: str
    action: str
    """``pause``, ``resume`` or ``limit``."""
    before: dict[str, Any] | None
    """The queue row before (None: hopper had no row for it; the write creates one)."""
    limits: dict[str, Any] | None = None
    dry_run: bool = False


def _queue(db: Database, name: str) -> dict[str, Any] | None:
    if not name:
        raise InvalidInput("a queue name is required")
    row = reads.get_queue(db, name)
    return reads.as_record(row) if row else None


def set_paused(db: Database, name: str, paused: bool, dry_run: bool = False) -> QueueChanged:
    """Pause or resume a queue as hopper's ``QueuePause``/``QueueResume`` do
    (``driver/internal/pgsql/cluster.go`` setPaused): the row (created if needed), then
    NOTIFY hopper_control ``pause:<queue>`` or ``resume:<queue>``, in one transaction.
    Running jobs finish; clients stop claiming on the notice or their next renewal."""
    db.require_writable()
    action = "pause" if paused else "resume"
    result = QueueChanged(name, action, _queue(db, name), dry_run=dry_run)
    if dry_run:
        return result
    q = reads.queries("actions.sql")
    with db.transaction():
        db.execute(q.queue_pause if paused else q.queue_resume, {"name": name})
        db.one(q.notify, {"channel": CHANNEL_CONTROL, "payload": f"{action}:{name}"})
    return result


def set_limits(
    db: Database,
    name: str,
    global_limit: int = 0,
    rate_per_sec: float = 0.0,
    rate_burst: int = 0,
    partition_limit: int = 0,
    aging: timedelta = timedelta(0),
    dry_run: bool = False,
) -> QueueChanged:
    """Replace a queue's cluster-wide limits as hopper's ``QueueControl.SetLimits`` does
    (``control.go``, ``cluster.go`` QueueSetLimits): zero removes a limit (hopper's CLI:
    "omitted limits are removed"), negatives are refused; then NOTIFY hopper_control
    ``limit:<queue>``."""
    if min(global_limit, rate_per_sec, rate_burst, partition_limit) < 0 or aging < timedelta(0):
        raise InvalidInput("limits must not be negative")
    db.require_writable()
    limits = {
        "global_limit": global_limit or None,
        "rate_per_sec": rate_per_sec or None,
        "rate_burst": rate_burst or None,
        "partition_limit": partition_limit or None,
        # hopper stores whole seconds: int(l.Aging / time.Second)
        "aging_seconds": int(aging.total_seconds()) or None,
    }
    result = QueueChanged(name, "limit", _queue(db, name), limits, dry_run)
    if dry_run:
        return result
    q = reads.queries("actions.sql")
    with db.transaction():
        db.execute(q.queue_set_limits, {"name": name, **limits})
        db.one(q.notify, {"channel": CHANNEL_CONTROL, "payload": f"limit:{name}"})
    return result


EARLIEST_SNAPSHOT = "3:3:"
"""stream.go earliestSnapshot: sees no transaction (3 is the first id PostgreSQL
assigns)."""


@dataclass
class Sought:
    consumer: str
    to: str
    """``earliest``, ``latest`` or the position ``xid:seq`` the log resumes after."""
    before: str
    """Where the consumer had read to: its snapshot, and its cursor if part way."""
    dry_run: bool = False


def seek(
    db: Database,
    name: str,
    earliest: bool = False,
    latest: bool = False,
    at: datetime | None = None,
    position: str = "",
    dry_run: bool = False,
) -> Sought:
    """Move a stream consumer as hopper's ``StreamConsumerSeek`` does
    (``driver/internal/pgsql/stream.go``): to the earliest event, past the latest, just
    before the first event appended at or after ``at``, or to ``position`` (``xid:seq``,
    the log resuming after that event). The leader's next pump delivers from there; a
    rewind delivers events again, as new jobs."""
    if sum(map(bool, (earliest, latest, at, position))) != 1:
        raise InvalidInput("give one of --earliest, --latest, --time, --position")
    xid, seq = 0, 0
    if position:
        try:
            xid_text, seq_text = position.split(":")
            xid, seq = int(xid_text), int(seq_text)
        except ValueError:
            raise InvalidInput(f"--position: {position!r} is not XID:SEQ") from None
        if xid <= 0 or seq < 0:
            raise InvalidInput(f"--position: {position!r} is not XID:SEQ")
    db.require_writable()
    consumer = reads.get_stream_consumer(db, name)
    cursor = f", at {consumer.xid}:{consumer.seq}" if consumer.reading else ""
    to = "earliest" if earliest else "latest" if latest else position or f"first event at {at}"
    result = Sought(consumer.name, to, f"seen {consumer.seen}{cursor}", dry_run)
    if dry_run:
        return result
    q = reads.queries("actions.sql")
    with db.transaction():
        if at is not None:
            first = db.one(q.stream_first_at, {"at": at})
            if first is None:  # nothing appended since: hopper seeks to the latest
                latest, result.to = True, "latest (no event at or after the time)"
            else:
                xid, seq = int(first["xid"]), int(first["seq"]) - 1
                result.to = f"{xid}:{seq}"
        if latest:
            done = db.one(q.stream_seek_latest, {"name": name})
        else:
            snapshot = f"{xid}:{xid}:" if xid else EARLIEST_SNAPSHOT
            done = db.one(
                q.stream_seek_snapshot,
                {"name": name, "snapshot": snapshot, "xid": str(xid), "seq": seq},
            )
        if done is None:
            raise WrongState("streams seek", f"hopper stream consumer {name!r} was removed")
    return result
