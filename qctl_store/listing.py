"""Backend-independent rules of the admin listings, so both backends order, page and
resolve ids the same way: ``list_jobs``' order per state filter, offset/limit paging, the
console's entity tables for id-prefix lookup, and the daily stats window."""

from __future__ import annotations

import re

from qctl_store import validate
from qctl_store.errors import InvalidInput
from qctl_store.types import JobState, Source

DAILY_WINDOW_DAYS = 30
"""azync's admin window (``queue/manager.go`` statsWindowDays): 30 days, zero-filled."""

ENTITY_TABLES = {
    "job": "azync_jobs",
    "dag": "azync_dags",
    "event": "azync_events",
    "workflow": "azync_workflow_executions",
}
"""``find_ids_by_prefix`` entities and the table whose uuid ``id`` each one is."""

_HEX = re.compile(r"^[0-9a-f]{1,32}$")


def order_for(state: JobState | None) -> tuple[str, bool]:
    """(column, descending) of ``list_jobs``' order for ``state`` (azync's
    orderForState; skipped sorts like succeeded); ``id`` ascending breaks ties."""
    if state in (JobState.SCHEDULED, JobState.PAUSED):
        return "run_at", False
    if state == JobState.ACTIVE:
        return "lease_until", False
    if state in (JobState.SUCCEEDED, JobState.SKIPPED):
        return "completed_at", True
    if state in (JobState.PENDING, JobState.DEAD):
        return "enqueued_at", False
    return "enqueued_at", True  # no state: newest first, for browsing


def order_sql(state: JobState | None) -> str:
    """The ORDER BY of ``order_for(state)`` with PostgreSQL's NULL placement spelled out
    (last ascending, first descending), so SQLite, which sorts NULLs the other way,
    pages identically."""
    column, desc = order_for(state)
    return f"{column} {'DESC NULLS FIRST' if desc else 'ASC NULLS LAST'}, id"


def index_clauses(source: Source | None, state: JobState | None) -> str:
    """Conditions a listing already implies, spelled out so the planner can use an index
    whose predicate states them: queue and event jobs never carry a DAG's ``dag_id`` or a
    workflow's ``run_id``, so their succeeded pages across kinds walk
    ``azync_jobs_succeeded_vacuum_idx (source, completed_at)``, partial on both being
    NULL, instead of sorting the whole state. Empty when nothing applies."""
    if source in (Source.QUEUE, Source.EVENT) and state == JobState.SUCCEEDED:
        return " AND dag_id IS NULL AND run_id IS NULL"
    return ""


def page(offset: int, limit: int, *, no_limit: int | None = None) -> dict[str, int | None]:
    """azync's paging rules as ``offset``/``limit`` parameters: a negative offset is 0,
    ``limit <= 0`` is no limit, spelled ``no_limit`` (PostgreSQL's ``LIMIT NULL``,
    SQLite's ``LIMIT -1``)."""
    validate.limit(offset, "offset", maximum=2**62)
    validate.limit(limit, "limit", maximum=2**62)
    return {"offset": max(offset, 0), "limit": limit if limit > 0 else no_limit}


def entity_table(entity: str) -> str:
    table = ENTITY_TABLES.get(entity)
    if table is None:
        raise InvalidInput(f"unknown entity {entity!r} (one of {', '.join(ENTITY_TABLES)})")
    return table


def hex_prefix(prefix: str) -> str:
    """The lower-case hex digits of a uuid prefix typed with or without dashes."""
    digits = str(prefix).strip().lower().replace("-", "")
    if not _HEX.match(digits):
        raise InvalidInput(f"{prefix!r} is not a uuid prefix (hex digits, dashes optional)")
    return digits
