"""Rows to the contract's dataclasses, for both backends.

The tables have the same column names on PostgreSQL and SQLite (``columns.py``); only how
a value comes back differs: psycopg decodes uuid, jsonb and timestamptz itself, SQLite
hands back uuid TEXT, JSON TEXT and INTEGER µs. Each backend's ``rows.py`` builds one
``RowMapper`` from its value decoders, and azync's zero-value mapping (NULL text -> "",
NULL meta -> {}, NULL snooze budget -> 0) is written here once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from qctl_store.columns import EVENT_PREFIX
from qctl_store.types import (
    JSON,
    AttemptError,
    DAGState,
    DAGView,
    DailyCount,
    EventAdminRow,
    EventRecord,
    HistoryEvent,
    Job,
    JobState,
    OnFailurePolicy,
    OpsStats,
    Source,
    StalledWorkflow,
    Subscriber,
    SubscriberView,
    WorkflowExecutionView,
    WorkflowState,
)

Row = Any
"""A row indexable by column name with ``keys()`` (psycopg ``dict_row``, ``sqlite3.Row``)."""


@dataclass(frozen=True)
class RowMapper:
    decode_uuid: Callable[[Any], uuid.UUID | None]
    """A uuid column's value as ``uuid.UUID``; NULL stays None."""
    decode_instant: Callable[[Any], datetime | None]
    """An instant column's value as an aware UTC datetime; NULL stays None."""
    decode_json: Callable[[Any], JSON]
    """A JSON column's value decoded; NULL is None (Go's nil RawMessage)."""
    decode_day: Callable[[Any], datetime]
    """A stats day as midnight UTC."""

    def id(self, value: Any) -> uuid.UUID:
        """A NOT NULL uuid column."""
        out = self.decode_uuid(value)
        assert out is not None
        return out

    def at(self, value: Any) -> datetime:
        """A NOT NULL instant column."""
        out = self.decode_instant(value)
        assert out is not None
        return out

    def meta(self, value: Any) -> dict[str, str]:
        decoded = self.decode_json(value)
        return dict(decoded) if isinstance(decoded, dict) else {}

    def job(self, row: Row) -> Job:
        """A ``Job`` from a row holding ``columns.JOB_FIELDS`` (and, when present, the
        ``ev_`` event columns of ``columns.event_columns``, which become ``Job.event``)."""
        uid, at, js = self.decode_uuid, self.decode_instant, self.decode_json
        job = Job(
            id=self.id(row["id"]),
            source=Source(row["source"]),
            kind=row["kind"],
            state=JobState(row["state"]),
            attempt=row["attempt"],
            max_attempts=row["max_attempts"],
            reap_count=row["reap_count"],
            payload=js(row["payload"]),
            meta=self.meta(row["meta"]),
            run_at=at(row["run_at"]),
            lease_until=at(row["lease_until"]),
            lease_token=uid(row["lease_token"]),
            last_error=row["last_error"] or "",
            event_id=uid(row["event_id"]),
            replay=bool(row["replay"]),
            dag_id=uid(row["dag_id"]),
            run_id=uid(row["run_id"]),
            task_key=row["task_key"] or "",
            result=js(row["result"]),
            signal_name=row["signal_name"] or "",
            compensation_kind=row["compensation_kind"] or "",
            ignore_dead_deps=bool(row["ignore_dead_deps"]),
            snooze_budget=timedelta(seconds=row["snooze_budget"] or 0),
            deadline_at=at(row["deadline_at"]),
            enqueued_at=at(row["enqueued_at"]),
            failed_at=at(row["failed_at"]),
            completed_at=at(row["completed_at"]),
            started_at=at(row["started_at"]),
            idempotency_key=row["idempotency_key"] or "",
            max_attempts_explicit=bool(row["max_attempts_explicit"]),
            updated_at=at(row["updated_at"]),
        )
        if f"{EVENT_PREFIX}id" in row.keys() and row[f"{EVENT_PREFIX}id"] is not None:  # noqa: SIM118
            job.event = self.event_record(row, EVENT_PREFIX)
        return job

    def jobs(self, rows: Iterable[Row]) -> list[Job]:
        return [self.job(r) for r in rows]

    def event_record(self, row: Row, prefix: str = "") -> EventRecord:
        return EventRecord(
            id=self.id(row[f"{prefix}id"]),
            type=row[f"{prefix}type"],
            aggregate_type=row[f"{prefix}aggregate_type"],
            aggregate_id=row[f"{prefix}aggregate_id"],
            version=row[f"{prefix}version"],
            occurred_at=self.at(row[f"{prefix}occurred_at"]),
            payload=self.decode_json(row[f"{prefix}payload"]),
            meta=self.meta(row[f"{prefix}meta"]),
        )

    def event_admin(self, row: Row) -> EventAdminRow:
        """An admin ledger row: the event columns plus ``deliveries``."""
        occurred = self.at(row["occurred_at"])
        deliveries = row["deliveries"]
        return EventAdminRow(
            id=self.id(row["id"]),
            type=row["type"],
            aggregate_type=row["aggregate_type"],
            aggregate_id=row["aggregate_id"],
            version=row["version"],
            occurred_at=occurred,
            # azync has no dispatch timestamp: an event with deliveries counts as
            # dispatched when it occurred.
            dispatched_at=occurred if deliveries > 0 else None,
            meta=self.meta(row["meta"]),
            payload=self.decode_json(row["payload"]),
            deliveries=deliveries,
        )

    @staticmethod
    def subscriber(row: Row) -> Subscriber:
        return Subscriber(
            name=row["name"], event_type=row["event_type"], max_attempts=row["max_attempts"]
        )

    def subscriber_view(self, row: Row) -> SubscriberView:
        return SubscriberView(
            event_type=row["event_type"],
            subscriber=row["name"],
            max_attempts=row["max_attempts"],
            created_at=self.at(row["created_at"]),
            updated_at=self.at(row["updated_at"]),
        )

    def attempt(self, row: Row) -> AttemptError:
        """A row of ``azync_job_attempts`` (attempt, error, failed_at)."""
        return AttemptError(
            attempt=row["attempt"], error=row["error"], at=self.at(row["failed_at"])
        )

    def daily(self, row: Row) -> DailyCount:
        """A day of the throughput window (day, enqueued, processed, failed, reaped)."""
        return DailyCount(
            date=self.decode_day(row["day"]),
            enqueued=int(row["enqueued"]),
            processed=int(row["processed"]),
            failed=int(row["failed"]),
            reaped=int(row["reaped"]),
        )

    @staticmethod
    def ops_stats(row: Row) -> OpsStats:
        return OpsStats(
            undispatched=row["undispatched"],
            total_24h=row["total_24h"],
            types_24h=row["types_24h"],
            subscribers=row["subscribers"],
        )

    def workflow_execution(self, row: Row) -> WorkflowExecutionView:
        """A row of ``azync_workflow_executions``."""
        return WorkflowExecutionView(
            id=self.id(row["id"]),
            name=row["name"],
            version=row["version"],
            state=WorkflowState(row["state"]),
            business_idempotency_key=row["business_idempotency_key"] or "",
            task_queue=row["task_queue"],
            input=self.decode_json(row["input"]),
            result=self.decode_json(row["result"]),
            failure_reason=row["failure_reason"] or "",
            meta=self.meta(row["meta"]),
            created_at=self.decode_instant(row["created_at"]),
            updated_at=self.decode_instant(row["updated_at"]),
            completed_at=self.decode_instant(row["completed_at"]),
        )

    def history_event(self, row: Row) -> HistoryEvent:
        """A row of ``azync_workflow_history`` (workflow_id, event_seq, event_type,
        payload, created_at)."""
        return HistoryEvent(
            workflow_id=self.id(row["workflow_id"]),
            seq=int(row["event_seq"]),
            type=row["event_type"],
            payload=self.decode_json(row["payload"]),
            created_at=self.at(row["created_at"]),
        )

    def stalled_workflow(self, row: Row) -> StalledWorkflow:
        return StalledWorkflow(id=self.id(row["id"]), name=row["name"])

    def dag_view(self, row: Row) -> DAGView:
        """A row of ``azync_dags``."""
        return DAGView(
            id=self.id(row["id"]),
            name=row["name"],
            state=DAGState(row["state"]),
            on_failure=OnFailurePolicy(row["on_failure"]),
            idempotency_key=row["idempotency_key"] or "",
            failure_reason=row["failure_reason"] or "",
            meta=self.meta(row["meta"]),
            created_at=self.decode_instant(row["created_at"]),
            updated_at=self.decode_instant(row["updated_at"]),
            completed_at=self.decode_instant(row["completed_at"]),
        )
