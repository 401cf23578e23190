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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl.core.errors import WrongState
from qctl.core.parse import format_duration, retention_age
from qctl.core.verbs import Target, Verb, Written
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.database import Database
from qctl_kit.batches import BatchSize, sized_batches
from qctl_kit.config import MAINTENANCE_BATCH_SECONDS
from qctl_kit.errors import InvalidInput, add_done

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


VACUUM_BATCH = 1000
"""Most rows one vacuum statement deletes (fewer while its transactions run long:
``qctl_kit.batches.BatchSize``): short transactions beside a running fleet."""


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
    retention_age(older_than)
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


def _targets(rows: list[dict[str, Any]]) -> list[Target]:
    return [Target(r["id"], r["state"], r["name"]) for r in rows]


def _pager(
    query: str, **fixed: Any
) -> Callable[[Database, Mapping[str, Any], str | None, int], list[Target]]:
    def page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
        params = {
            "states": list(where["states"]),
            "queues": where.get("queues") or None,
            "names": where.get("names") or None,
            "after": after,
            "limit": n,
            **fixed,
        }
        return _targets(db.all(getattr(reads.queries("actions.sql"), query), params))

    return page


def _looker(query: str, **fixed: Any) -> Callable[[Database, Sequence[str]], list[Target]]:
    def lookup(db: Database, ids: Sequence[str]) -> list[Target]:
        rows = db.all(getattr(reads.queries("actions.sql"), query), {"ids": list(ids), **fixed})
        return _targets(rows)

    return lookup


def _writer(
    query: str, wake: bool = False, **fixed: Any
) -> Callable[[Database, list[str]], Written]:
    """One batch of a verb: ``query`` (with ``fixed`` parameters) in its own transaction
    after the schema check, then dispatch's wake notification when it enqueued jobs."""

    def write(db: Database, ids: list[str]) -> Written:
        db.writable()
        q = reads.queries("actions.sql")
        params: dict[str, Any] = {"ids": ids, **fixed}
        if wake:
            params.update(new_ids=[new_id() for _ in ids], worker_id=db.unheld_worker_id)
        with db.transaction():
            done = [r["id"] for r in db.all(getattr(q, query), params)]
            if wake and done:
                db.one(q.wake)
        return Written(done)

    return write


CANCEL = Verb[Database](
    system="dispatch",
    noun="jobs",
    name="cancel",
    past="cancelled",
    accepts=CANCELLABLE,
    effect="cancel (state cancelled, completed_at now)",
    page=_pager("job_targets_page"),
    lookup=_looker("job_targets"),
    write=_writer("cancel_jobs"),
    reasons={
        "running": "running: dispatch v0.1.0 has no lease epoch to fence its worker with",
    },
)
"""``jobs cancel`` (api/job_handler.go cancelJob)."""

REPLAY = Verb[Database](
    system="dispatch",
    noun="dlq",
    name="replay",
    past="replayed",
    singular="DLQ entry",
    plural="DLQ entries",
    accepts=("waiting",),
    effect="enqueue again as a new pending job, each entry once",
    page=_pager("dlq_targets_page"),
    lookup=_looker("dlq_targets"),
    write=_writer("replay_dlq", wake=True),
    reasons={"replayed": "already replayed (qctl replays an entry once)"},
)
"""``dlq replay`` (dlq/replay.go Replay); ``jobs retry`` replays its jobs' entries."""

DELETE_DLQ = Verb[Database](
    system="dispatch",
    noun="dlq",
    name="delete",
    past="deleted",
    singular="DLQ entry",
    plural="DLQ entries",
    accepts=("waiting", "replayed"),
    effect="delete for good (an entry never replayed is its failed job's last copy)",
    page=_pager("dlq_targets_page"),
    lookup=_looker("dlq_targets"),
    write=_writer("delete_dlq"),
    filter_states=("replayed",),
)
"""``dlq delete`` (engine/ops_dlq.go DeleteDLQ)."""

FIRING = "firing now (the scheduler's fire would write the whole entry back); try again"
HOLD_BY = "qctl-disable"
"""The holder a qctl disable writes in an entry's ``locked_by`` (a worker id there when
dispatch's scheduler fires it): any string, as dispatch reads the column."""
HOLD = timedelta(minutes=2)
"""How long a disable holds the entry's fire lock: longer than the scheduler keeps a
copy of the entries it read (v0.1.0 re-reads them every tick; main at 6f7dda7 every 30 s
by default), so no fire from a copy read before the disable can take the lock."""


def _cron(name: str, past: str, accepts: tuple[str, ...], effect: str, **kw: Any) -> Verb[Database]:
    return Verb[Database](
        system="dispatch",
        noun="cron",
        name=name,
        past=past,
        singular="cron entry",
        plural="cron entries",
        accepts=accepts,
        effect=effect,
        page=_pager("cron_targets_page", hold_by=HOLD_BY),
        lookup=_looker("cron_targets", hold_by=HOLD_BY),
        **kw,
    )


def _instant(value: datetime | None) -> str:
    if value is None:
        return "none scheduled"
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _stopped_fires(db: Database, ids: list[str]) -> list[str]:
    """What a disable of ``ids`` stops: each entry's next scheduled fire, and why a fire
    the scheduler already has in hand does not run."""
    rows = db.all(reads.queries("actions.sql").cron_next_runs, {"ids": ids})
    said = [f"{r['name']}'s next fire ({_instant(r['next_run_at'])}) does not happen" for r in rows]
    return [
        f"the scheduler skips a disabled entry; its fire lock stays with {HOLD_BY} for"
        f" {format_duration(HOLD)}, so a fire from entries it read before cannot run either",
        *said,
    ]


CRON_ENABLE = _cron(
    "enable",
    "enabled",
    ("disabled",),
    "enable (the enabled column written, a qctl disable's fire lock released)",
    write=_writer("enable_cron", hold_by=HOLD_BY),
    reasons={"enabled": "already enabled", "firing": FIRING},
)
"""``cron enable`` (api/cron_handler.go enableCron)."""

CRON_DISABLE = _cron(
    "disable",
    "disabled",
    ("enabled",),
    f"disable (the enabled column written, the entry's fire lock held {format_duration(HOLD)})",
    write=_writer("disable_cron", hold_by=HOLD_BY, hold=HOLD),
    reasons={"disabled": "already disabled", "firing": FIRING},
    caveats=_stopped_fires,
)
"""``cron disable`` (api/cron_handler.go disableCron), lasting against the scheduler."""

CRON_DELETE = _cron(
    "delete",
    "deleted",
    ("enabled", "disabled"),
    "delete (an application registering the entry again on start recreates it)",
    write=_writer("delete_cron", hold_by=HOLD_BY),
    reasons={"firing": FIRING},
)
"""``cron delete`` (store/postgres/cron.go DeleteCron)."""

CRON_TRIGGER = _cron(
    "trigger",
    "triggered",
    ("enabled", "disabled", "firing"),
    "enqueue its job now, as a scheduled fire does (the schedule untouched)",
    write=_writer("trigger_cron", wake=True),
)
"""``cron trigger`` (engine/ops_cron.go TriggerCron)."""

VERBS = (CANCEL, REPLAY, DELETE_DLQ, CRON_ENABLE, CRON_DISABLE, CRON_DELETE, CRON_TRIGGER)


def retry_entries(db: Database, job_ids: Sequence[str]) -> list[str]:
    """The DLQ entries ``jobs retry`` replays for failed jobs: dispatch v0.1.0 re-runs a
    failed job only from its DLQ entry (the newest not yet replayed), as a new job; the
    failed row stays as it is. A job with none is refused."""
    entries = []
    for job_id in job_ids:
        job = reads.get_job(db, job_id)
        if job.state != "failed":
            raise WrongState(
                "jobs retry",
                f"dispatch job {job.id} is {job.state}: only failed jobs can be retried",
            )
        waiting = [e for e in reads.dlq_of_job(db, job) if e.replayed_at is None]
        if not waiting:
            raise WrongState(
                "jobs retry",
                f"dispatch job {job.id} has no DLQ entry left to replay (dispatch re-runs a"
                " failed job only from its DLQ entry; see `qctl dlq list`)",
            )
        entries.append(waiting[0].id)
    return entries
