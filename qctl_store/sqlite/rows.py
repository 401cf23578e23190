"""Mapping of SQLite rows (``sqlite3.Row``) to the contract's dataclasses.

One place for every capability module (jobs, events, admin, maintenance, DAGs,
workflows): select ``JOB_COLUMNS`` (or ``job_columns("j")`` of the shared
``qctl_store.columns`` under an alias) and turn each row into a ``Job`` with
``job_from_row``. SQLite hands back plain values, so this module
decodes what PostgreSQL's driver would: INTEGER µs instants -> aware UTC datetimes, uuid
TEXT -> ``uuid.UUID``, JSON TEXT -> Python values, INTEGER 0/1 -> bool, REAL seconds ->
timedelta; and applies azync's zero-value mapping (NULL text -> "", NULL meta -> {}).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from qctl_store import errors
from qctl_store.columns import EVENT_PREFIX, job_columns
from qctl_store.sqlite.base import SqliteBase, Tx, from_us, mapped_errors, now_us, parse_uuid
from qctl_store.types import (
    JSON,
    EventAdminRow,
    EventRecord,
    Job,
    JobState,
    Source,
    Subscriber,
    SubscriberView,
)

Row = Any
"""A ``sqlite3.Row`` (indexable by column name)."""

JOB_COLUMNS = job_columns()
"""``SELECT {JOB_COLUMNS} FROM azync_jobs``: every column ``job_from_row`` reads."""

dt = from_us
"""An INTEGER µs instant column as an aware UTC datetime (NULL stays None)."""


def json_value(value: str | None) -> JSON:
    """Decoded JSON; SQL NULL is None (Go's nil RawMessage)."""
    return None if value is None else json.loads(value)


def meta(value: str | None) -> dict[str, str]:
    decoded = json_value(value)
    return dict(decoded) if isinstance(decoded, dict) else {}


def dt_required(value: int) -> datetime:
    out = from_us(value)
    assert out is not None
    return out


def job_from_row(row: Row) -> Job:
    """A ``Job`` from a row holding ``JOB_COLUMNS`` (and, when present, the ``ev_``
    event columns of ``event_columns``, which become ``Job.event``)."""
    job = Job(
        id=uuid.UUID(row["id"]),
        source=Source(row["source"]),
        kind=row["kind"],
        state=JobState(row["state"]),
        attempt=row["attempt"],
        max_attempts=row["max_attempts"],
        reap_count=row["reap_count"],
        payload=json_value(row["payload"]),
        meta=meta(row["meta"]),
        run_at=dt(row["run_at"]),
        lease_until=dt(row["lease_until"]),
        lease_token=parse_uuid(row["lease_token"]),
        last_error=row["last_error"] or "",
        event_id=parse_uuid(row["event_id"]),
        replay=bool(row["replay"]),
        dag_id=parse_uuid(row["dag_id"]),
        run_id=parse_uuid(row["run_id"]),
        task_key=row["task_key"] or "",
        result=json_value(row["result"]),
        signal_name=row["signal_name"] or "",
        compensation_kind=row["compensation_kind"] or "",
        ignore_dead_deps=bool(row["ignore_dead_deps"]),
        snooze_budget=timedelta(seconds=row["snooze_budget"] or 0),
        deadline_at=dt(row["deadline_at"]),
        enqueued_at=dt(row["enqueued_at"]),
        failed_at=dt(row["failed_at"]),
        completed_at=dt(row["completed_at"]),
        started_at=dt(row["started_at"]),
        idempotency_key=row["idempotency_key"] or "",
        max_attempts_explicit=bool(row["max_attempts_explicit"]),
        updated_at=dt(row["updated_at"]),
    )
    if f"{EVENT_PREFIX}id" in row.keys() and row[f"{EVENT_PREFIX}id"] is not None:  # noqa: SIM118
        job.event = event_record_from_row(row, EVENT_PREFIX)
    return job


def jobs_from_rows(rows: Iterable[Row]) -> list[Job]:
    return [job_from_row(r) for r in rows]


def event_record_from_row(row: Row, prefix: str = "") -> EventRecord:
    return EventRecord(
        id=uuid.UUID(row[f"{prefix}id"]),
        type=row[f"{prefix}type"],
        aggregate_type=row[f"{prefix}aggregate_type"],
        aggregate_id=row[f"{prefix}aggregate_id"],
        version=row[f"{prefix}version"],
        occurred_at=dt_required(row[f"{prefix}occurred_at"]),
        payload=json_value(row[f"{prefix}payload"]),
        meta=meta(row[f"{prefix}meta"]),
    )


EVENT_ADMIN_COLUMNS = (
    "e.id, e.type, e.aggregate_type, e.aggregate_id, e.version, e.occurred_at, e.meta, e.payload"
)
"""Ledger columns of an admin row; the query adds ``deliveries``."""


def event_admin_from_row(row: Row) -> EventAdminRow:
    occurred = dt_required(row["occurred_at"])
    deliveries = row["deliveries"]
    return EventAdminRow(
        id=uuid.UUID(row["id"]),
        type=row["type"],
        aggregate_type=row["aggregate_type"],
        aggregate_id=row["aggregate_id"],
        version=row["version"],
        occurred_at=occurred,
        # azync has no dispatch timestamp: an event with deliveries counts as dispatched
        # when it occurred.
        dispatched_at=occurred if deliveries > 0 else None,
        meta=meta(row["meta"]),
        payload=json_value(row["payload"]),
        deliveries=deliveries,
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
        created_at=dt_required(row["created_at"]),
        updated_at=dt_required(row["updated_at"]),
    )


def arg_id(value: uuid.UUID, what: str = "id") -> str:
    """A uuid argument as the canonical text the tables store; anything else is refused."""
    if not isinstance(value, uuid.UUID):
        raise errors.InvalidInput(f"{what} must be a uuid.UUID, not {type(value).__name__}")
    return str(value)


@contextlib.contextmanager
def caller_tx(store: SqliteBase, conn: sqlite3.Connection) -> Iterator[Tx]:
    """A ``Tx`` over the caller's connection inside the caller's open transaction (the
    ``*_tx`` methods): named-column rows while we use it, the caller's row factory after."""
    if store.config.read_only:
        raise errors.ReadOnly("the store is read-only; the write was refused")
    if not conn.in_transaction:
        raise errors.InvalidInput("the connection must be inside a transaction (BEGIN first)")
    saved = conn.row_factory
    conn.row_factory = sqlite3.Row
    try:
        with mapped_errors():
            yield Tx(conn, now_us())
    finally:
        conn.row_factory = saved
