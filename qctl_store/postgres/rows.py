"""Mapping of PostgreSQL rows (``dict_row``) to the contract's dataclasses.

One place for every capability module (jobs, events, admin, maintenance, DAGs,
workflows): select ``JOB_COLUMNS`` (or ``job_columns("j")`` under an alias) and turn each
row into a ``Job`` with ``job_from_row``. psycopg already decodes jsonb, uuid and
timestamptz; what is left here is azync's zero-value mapping (NULL text -> "", NULL
meta -> {}, NULL snooze budget -> 0) and instants normalised to UTC. Queries that
select jobs write ``{jobs}``/``{jobs_j}`` and are loaded with ``job_queries``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from qctl_store.postgres.base import queries
from qctl_store.sqlfile import Queries
from qctl_store.types import (
    EventAdminRow,
    EventRecord,
    Job,
    JobState,
    Source,
    Subscriber,
    SubscriberView,
)

Row = dict[str, Any]

_JOB_FIELDS = (
    "id",
    "source",
    "kind",
    "state",
    "attempt",
    "max_attempts",
    "max_attempts_explicit",
    "reap_count",
    "payload",
    "meta",
    "run_at",
    "lease_until",
    "lease_token",
    "last_error",
    "event_id",
    "replay",
    "enqueued_at",
    "failed_at",
    "completed_at",
    "dag_id",
    "run_id",
    "task_key",
    "result",
    "signal_name",
    "compensation_kind",
    "ignore_dead_deps",
    "snooze_budget",
    "deadline_at",
    "started_at",
    "idempotency_key",
    "updated_at",
)


def job_columns(alias: str = "") -> str:
    """The job column list for a SELECT/RETURNING, optionally qualified by ``alias``.

    Output names stay the bare column names, so ``job_from_row`` reads either form.
    """
    prefix = f"{alias}." if alias else ""
    return ", ".join(f"{prefix}{name}" for name in _JOB_FIELDS)


JOB_COLUMNS = job_columns()
"""``SELECT {JOB_COLUMNS} FROM azync_jobs``: every column ``job_from_row`` reads."""

EVENT_PREFIX = "ev_"
_EVENT_FIELDS = (
    "id",
    "type",
    "aggregate_type",
    "aggregate_id",
    "version",
    "occurred_at",
    "payload",
    "meta",
)


def event_columns(alias: str = "e", prefix: str = EVENT_PREFIX) -> str:
    """Ledger columns renamed with ``prefix`` so they can ride along a job row
    (the event-source dequeue rehydrates ``Job.event`` this way)."""
    return ", ".join(f"{alias}.{name} AS {prefix}{name}" for name in _EVENT_FIELDS)


def utc(value: datetime | None) -> datetime | None:
    """A timestamptz in UTC: psycopg returns it in the session's TimeZone, which is
    the server's default (left alone so CURRENT_DATE stats days match azync's)."""
    return None if value is None else value.astimezone(UTC)


def as_utc(value: datetime) -> datetime:
    """``utc`` for a NOT NULL column."""
    return value.astimezone(UTC)


def _meta(value: Any) -> dict[str, str]:
    return dict(value) if isinstance(value, dict) else {}


def job_from_row(row: Row) -> Job:
    """A ``Job`` from a row holding ``JOB_COLUMNS`` (and, when present, the ``ev_``
    event columns of ``event_columns``, which become ``Job.event``)."""
    job = Job(
        id=row["id"],
        source=Source(row["source"]),
        kind=row["kind"],
        state=JobState(row["state"]),
        attempt=row["attempt"],
        max_attempts=row["max_attempts"],
        reap_count=row["reap_count"],
        payload=row["payload"],
        meta=_meta(row["meta"]),
        run_at=utc(row["run_at"]),
        lease_until=utc(row["lease_until"]),
        lease_token=row["lease_token"],
        last_error=row["last_error"] or "",
        event_id=row["event_id"],
        replay=row["replay"],
        dag_id=row["dag_id"],
        run_id=row["run_id"],
        task_key=row["task_key"] or "",
        result=row["result"],
        signal_name=row["signal_name"] or "",
        compensation_kind=row["compensation_kind"] or "",
        ignore_dead_deps=row["ignore_dead_deps"],
        snooze_budget=timedelta(seconds=row["snooze_budget"] or 0),
        deadline_at=utc(row["deadline_at"]),
        enqueued_at=utc(row["enqueued_at"]),
        failed_at=utc(row["failed_at"]),
        completed_at=utc(row["completed_at"]),
        started_at=utc(row["started_at"]),
        idempotency_key=row["idempotency_key"] or "",
        max_attempts_explicit=row["max_attempts_explicit"],
        updated_at=utc(row["updated_at"]),
    )
    if f"{EVENT_PREFIX}id" in row and row[f"{EVENT_PREFIX}id"] is not None:
        job.event = event_record_from_row(row, EVENT_PREFIX)
    return job


def jobs_from_rows(rows: Iterable[Row]) -> list[Job]:
    return [job_from_row(r) for r in rows]


def event_record_from_row(row: Row, prefix: str = "") -> EventRecord:
    return EventRecord(
        id=row[f"{prefix}id"],
        type=row[f"{prefix}type"],
        aggregate_type=row[f"{prefix}aggregate_type"],
        aggregate_id=row[f"{prefix}aggregate_id"],
        version=row[f"{prefix}version"],
        occurred_at=as_utc(row[f"{prefix}occurred_at"]),
        payload=row[f"{prefix}payload"],
        meta=_meta(row[f"{prefix}meta"]),
    )


def event_admin_from_row(row: Row) -> EventAdminRow:
    return EventAdminRow(
        id=row["id"],
        type=row["type"],
        aggregate_type=row["aggregate_type"],
        aggregate_id=row["aggregate_id"],
        version=row["version"],
        occurred_at=as_utc(row["occurred_at"]),
        # azync reports an event with deliveries as dispatched when it occurred.
        dispatched_at=utc(row["occurred_at"]) if row["deliveries"] > 0 else None,
        meta=_meta(row["meta"]),
        payload=row["payload"],
        deliveries=row["deliveries"],
    )


def subscriber_from_row(row: Row) -> Subscriber:
    return Subscriber(
        name=row["name"], event_type=row["event_type"], max_attempts=row["max_attempts"]
    )


def subscriber_view_from_row(row: Row) -> SubscriberView:
    return SubscriberView(
        event_type=row["event_type"],
        subscriber=row["name"],
        max_attempts=row["max_attempts"],
        created_at=as_utc(row["created_at"]),
        updated_at=as_utc(row["updated_at"]),
    )


_PLACEHOLDERS = {
    "{jobs}": JOB_COLUMNS,
    "{jobs_j}": job_columns("j"),
    "{event_e}": event_columns("e"),
}


@cache
def job_queries(filename: str) -> Queries:
    """``queries(filename)`` with the column-list placeholders (``{jobs}`` = every job
    column, ``{jobs_j}`` = the same under alias ``j``, ``{event_e}`` = the ``ev_``
    ledger columns under alias ``e``) expanded, so the lists live in one place."""
    out = Queries()
    for name, text in queries(filename).items():
        for token, columns in _PLACEHOLDERS.items():
            text = text.replace(token, columns)
        out[name] = text
    return out
