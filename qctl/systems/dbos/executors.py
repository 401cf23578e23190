"""DBOS executors: who runs what, and the recovery of a dead executor's workflows (what
DBOS Conductor asks a live executor to do when one stops answering).

DBOS keeps no table of executors and no heartbeat: an executor is the ``executor_id`` its
workflows carry. ``list_executors`` reads the executors with PENDING workflows (DBOS's
partial index ``idx_workflow_status_pending``) and those that started or finished one
within a window (``idx_workflow_status_started_at``, ``idx_workflow_status_completed_at``),
never the whole history (DBOS dropped its index on ``executor_id``).

``recover`` writes exactly what DBOS's recovery writes (``_recover_workflow`` of
``dbos/_recovery.py``, ``SystemDatabase.reenqueue_for_recovery`` of ``dbos/_sys_db.py``):
each PENDING workflow of the dead executors goes back to ENQUEUED with no owner and no
start time, on its own queue or DBOS's internal one, guarded by its status and executor,
so a workflow a live executor has taken meanwhile is left alone. The next executor that
dequeues it (of its application version, or of the latest when it has none) runs it on
from its last recorded step. DBOSClient has no recovery call, so this is qctl's SQL.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, TypedDict

from qctl.core.errors import NoSuchName
from qctl.core.parse import format_duration
from qctl.systems.dbos import reads
from qctl.systems.dbos.database import Database
from qctl_kit.errors import InvalidInput

RECOVER_CHUNK = 500
"""Workflows re-enqueued per statement."""


class Executor(TypedDict):
    """An executor's activity (``list_executors``)."""

    executor_id: str
    pending: int
    """Its PENDING workflows."""
    started: int
    completed: int
    """Workflows it started, and finished, within the window."""
    last_active_at: int | None
    """Epoch ms: the last time it started, finished or took a workflow it still runs."""
    app_versions: list[str]
    application_names: list[str]


Counted = Literal["pending", "started", "completed"]


def list_executors(db: Database, window_ms: int, now_ms: int | None = None) -> list[Executor]:
    """Per executor (newest activity first): its PENDING workflows, the workflows it
    started and finished within ``window_ms``, and its latest activity (the last time it
    started, finished or took a workflow it still runs), with the application versions
    and names its workflows carry."""
    if window_ms <= 0:
        raise InvalidInput("--window: must be positive")
    since = (now_ms if now_ms is not None else int(time.time() * 1000)) - window_ms
    found: dict[str, Executor] = {}
    versions: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}

    def add(rows: list[dict[str, Any]], count: Counted) -> None:
        for row in rows:
            key = str(row["executor_id"])
            ex = found.setdefault(
                key,
                Executor(
                    executor_id=key,
                    pending=0,
                    started=0,
                    completed=0,
                    last_active_at=None,
                    app_versions=[],
                    application_names=[],
                ),
            )
            ex[count] += int(row["n"])
            last = row["last"]
            if last is not None and (ex["last_active_at"] is None or last > ex["last_active_at"]):
                ex["last_active_at"] = int(last)
            if row["application_version"] is not None:
                versions.setdefault(key, set()).add(row["application_version"])
            if row["application_name"] is not None:
                names.setdefault(key, set()).add(row["application_name"])

    group = " GROUP BY executor_id, application_version, application_name"
    head = "SELECT executor_id, application_version, application_name, count(*) AS n"
    add(
        db.all(
            f"{head}, max(coalesce(started_at_epoch_ms, updated_at)) AS last"
            " FROM {t}workflow_status WHERE status = 'PENDING' AND executor_id IS NOT NULL" + group
        ),
        "pending",
    )
    add(
        db.all(
            f"{head}, max(started_at_epoch_ms) AS last FROM {{t}}workflow_status"
            " WHERE started_at_epoch_ms >= %s AND executor_id IS NOT NULL" + group,
            [since],
        ),
        "started",
    )
    add(
        db.all(
            f"{head}, max(completed_at) AS last FROM {{t}}workflow_status"
            " WHERE completed_at >= %s AND executor_id IS NOT NULL" + group,
            [since],
        ),
        "completed",
    )
    out = list(found.values())
    for ex in out:
        ex["app_versions"] = sorted(versions.get(ex["executor_id"], ()))
        ex["application_names"] = sorted(names.get(ex["executor_id"], ()))
    out.sort(key=lambda e: (-(e["last_active_at"] or 0), e["executor_id"]))
    return out


def last_active(db: Database, ids: Sequence[str], window_ms: int) -> dict[str, int | None]:
    """Per executor of ``ids``, its latest activity in epoch ms (None: none on record):
    ``list_executors``' over ``window_ms``, or the last step its PENDING workflows
    recorded, if later (an executor deep in one long workflow starts and finishes
    none). DBOS records no heartbeat: this is the nearest sign of life."""
    found: dict[str, int | None] = {
        e["executor_id"]: e["last_active_at"]
        for e in list_executors(db, window_ms)
        if e["executor_id"] in ids
    }
    marks = ", ".join(["%s"] * len(ids))
    steps = db.all(
        "SELECT ws.executor_id, max(o.completed_at_epoch_ms) AS last"
        " FROM {t}workflow_status ws JOIN {t}operation_outputs o"
        " ON o.workflow_uuid = ws.workflow_uuid"
        f" WHERE ws.status = 'PENDING' AND ws.executor_id IN ({marks})"
        " GROUP BY ws.executor_id",
        list(ids),
    )
    for row in steps:
        key, last = str(row["executor_id"]), row["last"]
        if last is not None and int(last) > (found.get(key) or 0):
            found[key] = int(last)
    return {i: found.get(i) for i in ids}


def activity(last_ms: int | None) -> str:
    """How a confirmation names an executor's last activity (``last_active``)."""
    if last_ms is None:
        return "no activity on record"
    return (
        f"last active {format_duration(timedelta(milliseconds=time.time() * 1000 - last_ms))} ago"
    )


@dataclass(frozen=True)
class RecoveryOutcome:
    executor_ids: list[str]
    count: int
    """PENDING workflows re-enqueued (or, with ``dry_run``, that would be)."""
    workflow_ids: list[str]
    by_version: dict[str, int] = field(default_factory=dict)
    """Per application version (``""``: none), the executors of which will run them."""
    dry_run: bool = False
    skipped: int = 0
    """Taken by a live executor (or finished) between the read and the write."""
    action: str = "recover"


def _now_ms_sql(db: Database) -> str:
    """The database's clock in epoch milliseconds, as ``SystemDatabase._now_ms_sql``
    takes it (on SQLite from ``julianday``, which every SQLite version has)."""
    if db.postgres:
        return "CAST(EXTRACT(epoch FROM now()) * 1000 AS BIGINT)"
    return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"


def recover(
    db: Database,
    executor_ids: Sequence[str],
    app_version: Sequence[str] = (),
    application_name: Sequence[str] = (),
    dry_run: bool = False,
) -> RecoveryOutcome:
    """Re-enqueue every PENDING workflow of ``executor_ids`` (only those of
    ``app_version`` and ``application_name`` when given), as DBOS's recovery does."""
    ids = list(dict.fromkeys(e for e in executor_ids if e))
    if not ids:
        raise InvalidInput("executors recover: name at least one executor id")
    f = reads.WorkflowFilter(
        status=("PENDING",),
        executor_id=tuple(ids),
        app_version=tuple(app_version),
        application_name=tuple(application_name),
    )
    where, params = reads.filter_sql(db, f)
    rows = db.all(
        "SELECT ws.workflow_uuid AS workflow_id, ws.application_version"
        f" FROM {{t}}workflow_status ws WHERE {where}"
        " ORDER BY ws.created_at, ws.workflow_uuid",
        params,
    )
    if not rows:
        # Nothing to recover: say so when an id names no executor at all (a typo would
        # otherwise read as success). Without DBOS's old index on executor_id this
        # reads until a row matches: only here, never on the way to a write.
        for executor_id in ids:
            if not db.one(
                "SELECT 1 AS x FROM {t}workflow_status WHERE executor_id = %s LIMIT 1",
                [executor_id],
            ):
                raise NoSuchName("executors recover", f"no DBOS executor {executor_id!r}")
    by_version: dict[str, int] = {}
    for row in rows:
        key = row["application_version"] or ""
        by_version[key] = by_version.get(key, 0) + 1
    wf_ids = [str(r["workflow_id"]) for r in rows]
    if dry_run:
        return RecoveryOutcome(ids, len(wf_ids), wf_ids, by_version, True)
    executors = ", ".join(["%s"] * len(ids))
    done = 0
    for i in range(0, len(wf_ids), RECOVER_CHUNK):
        chunk = wf_ids[i : i + RECOVER_CHUNK]
        marks = ", ".join(["%s"] * len(chunk))
        done += db.execute(
            "UPDATE {t}workflow_status SET status = 'ENQUEUED', owner_xid = NULL,"
            f" started_at_epoch_ms = NULL, updated_at = {_now_ms_sql(db)},"
            " queue_name = coalesce(queue_name, %s)"
            f" WHERE workflow_uuid IN ({marks}) AND status = 'PENDING'"
            f" AND executor_id IN ({executors})",
            [reads.INTERNAL_QUEUE, *chunk, *ids],
        )
    return RecoveryOutcome(ids, done, wf_ids, by_version, False, len(wf_ids) - done)
