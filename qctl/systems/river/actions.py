"""qctl's writes to a River database: the operator verbs, declared for the verb engine
(``qctl.core.verbs``), each batch one statement of ``queries/actions.sql`` with the
effect of River's own query named there (River v0.51.2, riverpgxv5), or on SQLite the
statements of ``queries/actions_sqlite.sql`` (riversqlite's), River's notifications then
rows of its outbox (``river_notification``) written in the batch's transaction.

Every batch first refuses (exit 5) a schema at migrations qctl does not know
(``Database.writable``) and runs in its own transaction; River's control notifications
go out on its commit, as River's client sends them inside its own transactions. Running
jobs are never finalized or deleted here: a cancel asks the client working the job
(River's rule), a retry and a delete pass it over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from qctl.core.parse import retention_age
from qctl.core.verbs import Target, Verb, Written
from qctl.systems.river import reads
from qctl.systems.river.database import Database
from qctl_kit.batches import BatchSize, sized_batches
from qctl_kit.config import MAINTENANCE_BATCH_SECONDS
from qctl_kit.errors import add_done


def _targets(rows: list[dict[str, Any]]) -> list[Target]:
    return [Target(str(r["id"]), r["state"], r["kind"]) for r in rows]


def _job_ids(ids: Sequence[str]) -> list[int]:
    return [int(i) for i in ids]


def _job_page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    """A keyset page of the jobs a filter matches (``states``, ``queues``, ``kinds``,
    ``priorities``, ``tags``: every one of them; ``args``, ``metadata``: objects the
    job's columns contain)."""
    params = {
        "states": list(where["states"]),
        "queues": where.get("queues") or None,
        "kinds": where.get("kinds") or None,
        "priorities": where.get("priorities") or None,
        "tags": where.get("tags") or None,
        **reads.contained(where.get("args"), where.get("metadata")),
        "after_id": int(after) if after else None,
        "limit": n,
    }
    statement = reads.job_filter(db, db.statements("actions").job_targets_page, params)
    return _targets(reads.rows(db, statement, params))


def _job_lookup(db: Database, ids: Sequence[str]) -> list[Target]:
    rows = reads.rows(db, db.statements("actions").job_targets, {"ids": _job_ids(ids)})
    return _targets(rows)


def _queue_page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    """A page of the queues a filter matches (``match``: part of the name; ``all``)."""
    params = {
        "states": list(where["states"]),
        "match": where.get("match") or None,
        "after": after,
        "limit": n,
    }
    return _targets(reads.rows(db, db.statements("actions").queue_targets_page, params))


def _queue_lookup(db: Database, names: Sequence[str]) -> list[Target]:
    rows = reads.rows(db, db.statements("actions").queue_targets, {"names": list(names)})
    return _targets(rows)


UNIQUE_HELD = "unique key held by another job"


def _held(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {r["id"]: UNIQUE_HELD for r in rows if r.get("held")}


Write = Callable[[Database, list[str]], Written]


def _writer(query: str, key: str, notifies: bool = False, alone: bool = False) -> Write:
    """One batch of a verb: ``query`` in its own transaction after the schema check;
    ``key``: how the statement takes the batch (``ids`` of jobs, ``names`` of queues);
    ``notifies``: it sends River's control notifications (the channel passed in);
    ``alone``: the statement skips rows another transaction holds, so each id it did not
    change is tried again in a transaction of its own, after waiting for that row's lock
    alone (``lock_job``), as River's one-job-per-statement functions wait (PostgreSQL:
    SQLite's one writer skips nothing)."""

    def run(db: Database, batch: list[str]) -> list[dict[str, Any]]:
        params: dict[str, Any] = {key: _job_ids(batch) if key == "ids" else list(batch)}
        if not db.postgres:
            return _run_sqlite(db, query, params, notifies)
        if notifies:
            params["channel"] = db.control_channel
        q = db.statements("actions")
        with db.transaction():
            db.all(q.gin_pending_limit)
            if alone and len(batch) == 1:
                db.all(q.lock_job, {"id": int(batch[0])})
            return db.all(getattr(q, query), params)

    def write(db: Database, ids: list[str]) -> Written:
        db.writable()
        rows = run(db, ids)
        if alone and db.postgres and len(ids) > 1:  # a batch of one waited for its lock
            answered = {r["id"] for r in rows}
            for id_ in (i for i in ids if i not in answered):
                rows += run(db, [id_])
        return Written([r["id"] for r in rows if not r.get("held")], _held(rows))

    return write


def _run_sqlite(
    db: Database, query: str, params: dict[str, Any], notifies: bool
) -> list[dict[str, Any]]:
    """One batch on SQLite, in one transaction: the jobs ``<query>_held`` finds first
    (passed over as held), ``query``'s write, then its rows' notices into River's outbox
    on River's control topic."""
    q = db.statements("actions")
    bound = reads.bind(db, params)
    with db.transaction():
        held = db.all(q[f"{query}_held"], bound) if f"{query}_held" in q else []
        bound["held"] = json.dumps([int(r["id"]) for r in held])
        rows = db.all(q[query], bound)
        if notifies and rows:
            notices = json.dumps([r["notice"] for r in rows])
            db.execute(q.notify, {"topic": db.control_channel, "payloads": notices})
    return rows + [{"id": r["id"], "held": True} for r in held]


_FINALIZED = {s: f"{s}: already finalized" for s in reads.FINALIZED_STATES}

CANCEL = Verb[Database](
    system="river",
    noun="jobs",
    name="cancel",
    past="cancelled",
    accepts=reads.LIVE_STATES,
    effect="cancel (a waiting job finalized cancelled; a running one asked of its client"
    " through river_control)",
    page=_job_page,
    lookup=_job_lookup,
    write=_writer("cancel_jobs", "ids", notifies=True, alone=True),
    reasons=_FINALIZED,
)
"""``jobs cancel``: River's ``JobCancel``."""

RETRY = Verb[Database](
    system="river",
    noun="jobs",
    name="retry",
    past="retried",
    accepts=("scheduled", "retryable", "cancelled", "completed", "discarded"),
    effect="make available now (attempt kept, max_attempts raised when spent)",
    page=_job_page,
    lookup=_job_lookup,
    write=_writer("retry_jobs", "ids", alone=True),
    reasons={
        "running": "running (River never retries a running job)",
        "available": "available: already waiting to run",
        "pending": "pending: waits for what made it pending",
    },
    filter_states=("discarded", "cancelled"),
)
"""``jobs retry``: River's ``JobRetry``; stricter than River, an available or pending job
is passed over."""

DELETE = Verb[Database](
    system="river",
    noun="jobs",
    name="delete",
    past="deleted",
    accepts=tuple(s for s in reads.STATES if s != "running"),
    effect="delete for good",
    page=_job_page,
    lookup=_job_lookup,
    write=_writer("delete_jobs", "ids"),
    reasons={"running": "running (River never deletes a running job)"},
    filter_states=reads.FINALIZED_STATES,
)
"""``jobs delete``: River's ``JobDeleteMany``; a filter without ``--state`` takes the
finalized jobs only."""

PAUSE = Verb[Database](
    system="river",
    noun="queues",
    name="pause",
    past="paused",
    accepts=("active",),
    effect="pause (paused_at now, then river_control pause: its producers stop fetching)",
    page=_queue_page,
    lookup=_queue_lookup,
    write=_writer("pause_queues", "names", notifies=True),
    reasons={"paused": "already paused"},
)
"""``queues pause``: River's ``QueuePause``."""

RESUME = Verb[Database](
    system="river",
    noun="queues",
    name="resume",
    past="resumed",
    accepts=("paused",),
    effect="resume (paused_at cleared, then river_control resume: its producers fetch again)",
    page=_queue_page,
    lookup=_queue_lookup,
    write=_writer("resume_queues", "names", notifies=True),
    reasons={"active": "not paused"},
)
"""``queues resume``: River's ``QueueResume``."""

VERBS = (CANCEL, RETRY, DELETE, PAUSE, RESUME)


CLEAN_BATCH = 10_000
"""Most jobs one vacuum statement deletes, River's cleaner's batch
(``riversharedmaintenance.BatchSizeDefault``); fewer while its transactions run long
(``qctl_kit.batches.BatchSize``), as River's cleaner falls back to 1,000 when its
statements time out."""


def vacuum(
    db: Database,
    older_than: timedelta,
    states: Sequence[str] = reads.FINALIZED_STATES,
    dry_run: bool = False,
    batch: int = CLEAN_BATCH,
) -> dict[str, int]:
    """Delete what River's JobCleaner deletes (``internal/maintenance/job_cleaner.go``):
    jobs finalized in ``states`` (cancelled, completed, discarded) longer ago than
    ``older_than``, in batches of their own transactions, lowest ids first; the jobs
    deleted per state (a dry run: counted, nothing deleted). Never a job that is not
    finalized."""
    db.writable()
    retention_age(older_than)
    before: datetime = db.now() - older_than
    q = db.statements("actions")
    params: dict[str, Any] = {"states": list(states), "before": before}
    counted = {r["state"]: int(r["n"]) for r in reads.rows(db, q.count_cleanable, params)}
    if dry_run:
        return {s: counted.get(s, 0) for s in states}
    deleted: dict[str, int] = dict.fromkeys(states, 0)
    done = 0
    for state in states:  # one state at a time, so the result says each one's count

        def step(_tx: None, rows: int, state: str = state) -> int:
            batch_params = {"states": [state], "before": before, "batch": rows}
            return db.execute(q.clean_jobs, reads.bind(db, batch_params))

        try:
            deleted[state] = sized_batches(
                BatchSize(batch, MAINTENANCE_BATCH_SECONDS), db.transaction, step
            ).rows
        except BaseException as exc:  # the states before this one are done
            add_done(exc, done)
            raise
        done += deleted[state]
    return deleted
