"""qctl's writes to a hopper database, each with the effect of hopper's own client at
schema version 8 (``driver/internal/pgsql``, transcribed statement by statement in
``queries/actions.sql``; the Go file and function are named beside each).

Every write runs in one transaction that first reads the schema version again
(``Database.transaction``). The job verbs (``CANCEL``, ``RETRY``) and the queue verbs
(``PAUSE``, ``RESUME``) are declarations the verb engine (``qctl.core.verbs``) runs in
batches: each statement re-checks every target's state in its own predicate, so a
worker's claim or finalize between the plan and the write leaves that job alone (counted
under its reason). Running jobs are never finalized
here: a cancel only asks the client holding the job (hopper's rule), a retry passes it
over (``ErrJobRunning``). ``dry_run=True`` reads and writes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from qctl.core.errors import WrongState
from qctl.core.sqldb import row_record
from qctl.core.verbs import Target, Verb, Written
from qctl.systems.hopper import reads
from qctl.systems.hopper.database import Database
from qctl_kit.errors import InvalidInput

CHANNEL_INSERT = "hopper_insert"
"""``driver/driver.go`` ChannelInsert: the queue name of a committed insert."""
CHANNEL_CONTROL = "hopper_control"
"""ChannelControl: ``cancel:<job id>``, ``pause:<queue>``, ``resume:<queue>``,
``limit:<queue>``."""
CHANNEL_DONE = "hopper_done"
"""ChannelDone: the id of a finalized job inserted with Await."""


def _ids(ids: Sequence[str]) -> list[uuid.UUID]:
    return [uuid.UUID(i) for i in ids]


def _targets(rows: list[dict[str, Any]]) -> list[Target]:
    return [Target(str(r["id"]), r["state"], r["kind"]) for r in rows]


def _page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    """A keyset page of the jobs a filter matches (``states``, ``kinds``, ``queues``)."""
    states = list(where["states"])
    params = {
        "live": any(s in reads.LIVE_STATES for s in states),
        "completed": "completed" in states,
        "failed": "cancelled" in states or "discarded" in states,
        "states": states,
        "kinds": where.get("kinds") or None,
        "queues": where.get("queues") or None,
        "after": uuid.UUID(after) if after else None,
        "limit": n,
    }
    return _targets(db.all(reads.queries("actions.sql").targets_page, params))


def _lookup(db: Database, ids: Sequence[str]) -> list[Target]:
    return _targets(db.all(reads.queries("actions.sql").target_states, {"ids": _ids(ids)}))


def _cancel(db: Database, ids: list[str]) -> Written:
    """One batch of ``jobs cancel``, as hopper's ``JobCancel`` (``jobs.go``) does to each:
    the waiting jobs finalized, then the running ones asked of their clients (in this
    order, so a job claimed meanwhile is asked, not skipped)."""
    q = reads.queries("actions.sql")
    params = {"ids": _ids(ids), "done": CHANNEL_DONE, "insert": CHANNEL_INSERT}
    with db.transaction():
        finished = db.all(q.cancel_waiting, params)
        asked = db.all(q.cancel_running, {"ids": params["ids"]})
    return Written([str(r["id"]) for r in finished + asked])


def _retry(db: Database, ids: list[str]) -> Written:
    """One batch of ``jobs retry``, as hopper's ``JobRetry`` (``jobs.go``) does to each: a
    waiting job brought forward, a finalized one moved back from history (left there when
    a live job holds its unique key: ``ErrUniqueConflict``); then NOTIFY hopper_insert
    with each queue, as the client's notifier does (``control.go`` JobRetry)."""
    q = reads.queries("actions.sql")
    batch = _ids(ids)
    with db.transaction():
        live = db.all(q.retry_live, {"ids": batch})
        held = [r["id"] for r in db.all(q.unique_held, {"ids": batch})]
        moved = db.all(q.retry_history, {"ids": batch, "held": held})
        queues = sorted({r["queue"] for r in live + moved})
        if queues:
            db.all(q.notify_queues, {"queues": queues})
    refused = {str(h): "a live job holds its unique key" for h in held}
    return Written([str(r["id"]) for r in live + moved], refused)


def _batches_counted(db: Database, ids: list[str]) -> list[str]:
    """Finalized jobs of a batch that counted them already: hopper's JobRetry leaves the
    batch as it is, so it counts each again when it finishes again."""
    rows = db.all(reads.queries("actions.sql").batches_counted, {"ids": _ids(ids)})
    return [f"batch {r['batch_id']} counted it already: hopper counts it again" for r in rows]


CANCEL = Verb[Database](
    system="hopper",
    noun="jobs",
    name="cancel",
    past="cancelled",
    accepts=reads.LIVE_STATES,
    effect="cancel (a waiting job moved to history with hopper's finalize tail, a running"
    " one asked of its client)",
    page=_page,
    lookup=_lookup,
    write=_cancel,
    reasons={s: f"{s}: already finalized" for s in reads.STATES if s not in reads.LIVE_STATES},
)
"""``jobs cancel``: hopper's ``JobCancel``; a finalized job is passed over."""

RETRY = Verb[Database](
    system="hopper",
    noun="jobs",
    name="retry",
    past="retried",
    accepts=("available", "scheduled", "retryable", "completed", "cancelled", "discarded"),
    effect="make available now (a finalized job moved back from history), then NOTIFY"
    " hopper_insert",
    page=_page,
    lookup=_lookup,
    write=_retry,
    reasons={
        "running": "running (hopper: job is running)",
        "pending": "pending: a workflow step waits for its dependencies",
    },
    filter_states=("discarded", "cancelled"),
    caveats=_batches_counted,
)
"""``jobs retry``: hopper's ``JobRetry``; stricter than hopper, a pending workflow step
is passed over (its dependencies have not finished)."""


def _queue_page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    """A page of the queues a filter matches (``match``: part of the name; ``all``)."""
    params = {
        "states": list(where["states"]),
        "match": where.get("match") or None,
        "after": after,
        "limit": n,
    }
    return _targets(db.all(reads.queries("actions.sql").queue_targets_page, params))


def _queue_lookup(db: Database, names: Sequence[str]) -> list[Target]:
    rows = db.all(reads.queries("actions.sql").queue_targets, {"names": list(names)})
    return _targets(rows)


def _queues_written(query: str) -> Callable[[Database, list[str]], Written]:
    """One batch of a queue verb: ``query`` (the change and hopper_control's notice of
    each queue it changed) in one transaction, delivered on its commit."""

    def write(db: Database, names: list[str]) -> Written:
        with db.transaction():
            rows = db.all(getattr(reads.queries("actions.sql"), query), {"names": names})
        return Written([r["id"] for r in rows])

    return write


PAUSE = Verb[Database](
    system="hopper",
    noun="queues",
    name="pause",
    past="paused",
    accepts=("active",),
    effect="pause (paused_at now, a queue row made where hopper has none, then NOTIFY"
    " hopper_control pause:QUEUE: its clients stop claiming; running jobs finish)",
    page=_queue_page,
    lookup=_queue_lookup,
    write=_queues_written("pause_queues"),
    reasons={"paused": "already paused"},
)
"""``queues pause``: hopper's ``QueuePause``."""

RESUME = Verb[Database](
    system="hopper",
    noun="queues",
    name="resume",
    past="resumed",
    accepts=("paused",),
    effect="resume (paused_at cleared, then NOTIFY hopper_control resume:QUEUE: its"
    " clients claim again)",
    page=_queue_page,
    lookup=_queue_lookup,
    write=_queues_written("resume_queues"),
    reasons={"active": "not paused"},
)
"""``queues resume``: hopper's ``QueueResume``; a queue not paused is passed over."""

VERBS = (CANCEL, RETRY, PAUSE, RESUME)


@dataclass
class LimitsChanged:
    queue: str
    before: dict[str, Any] | None
    """The queue row before (None: hopper had no row for it; the write creates one)."""
    limits: dict[str, Any]
    dry_run: bool = False


def _queue(db: Database, name: str) -> dict[str, Any] | None:
    if not name:
        raise InvalidInput("a queue name is required")
    row = reads.get_queue(db, name)
    return row_record(row) if row else None


def set_limits(
    db: Database,
    name: str,
    global_limit: int = 0,
    rate_per_sec: float = 0.0,
    rate_burst: int = 0,
    partition_limit: int = 0,
    aging: timedelta = timedelta(0),
    dry_run: bool = False,
) -> LimitsChanged:
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
    result = LimitsChanged(name, _queue(db, name), limits, dry_run)
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
