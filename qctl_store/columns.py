"""Column lists of ``azync_jobs`` and ``azync_events`` that both backends select, so the
row mappers (``<backend>/rows.py``) read the same names on either. The tables have the
same column names on PostgreSQL and SQLite; only the value decoding differs."""

from __future__ import annotations

from qctl_kit.sqlfile import Vocabulary

JOB_FIELDS = (
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
"""Every ``azync_jobs`` column a ``types.Job`` is read from."""

EVENT_FIELDS = (
    "id",
    "type",
    "aggregate_type",
    "aggregate_id",
    "version",
    "occurred_at",
    "payload",
    "meta",
)
"""The ``azync_events`` columns of a ``types.EventRecord``."""

EVENT_PREFIX = "ev_"


def job_columns(alias: str = "") -> str:
    """The job column list for a SELECT/RETURNING, optionally qualified by ``alias``;
    the output names stay the bare column names either way."""
    if not alias:
        return ", ".join(JOB_FIELDS)
    return ", ".join(f"{alias}.{name} AS {name}" for name in JOB_FIELDS)


def listed_job_columns(payload: bool) -> str:
    """``job_columns()``, or without ``payload`` the same list with the payload and the
    result read as NULL: a listing that shows neither never reads (or decodes) them,
    however large they are."""
    if payload:
        return job_columns()
    return ", ".join(
        f"NULL AS {name}" if name in ("payload", "result") else name for name in JOB_FIELDS
    )


def event_columns(alias: str = "e", prefix: str = EVENT_PREFIX) -> str:
    """Ledger columns renamed with ``prefix`` so they can ride along a job row (the
    event-source lease rehydrates ``Job.event`` this way)."""
    return ", ".join(f"{alias}.{name} AS {prefix}{name}" for name in EVENT_FIELDS)


def event_admin_columns(alias: str = "e") -> str:
    """The ledger columns of an admin event row (``records.RowMapper.event_admin``) under
    ``alias``; the query adds ``deliveries``."""
    return ", ".join(f"{alias}.{name}" for name in EVENT_FIELDS)


AZYNC_SQL = Vocabulary(
    columns=(
        ("jobs", job_columns()),
        ("jobs_j", job_columns("j")),
        ("event_e", event_columns("e")),
        ("event_admin", event_admin_columns("e")),
    ),
    fragments=frozenset({"claim", "input", "paused", "cancelled", "uncertain", "skipped"}),
)
"""The tokens of azync's SQL files besides every system's: ``{jobs}`` (every job column a
``types.Job`` is read from), ``{jobs_j}`` (the same under alias ``j``), ``{event_e}`` (the
ledger columns of alias ``e`` renamed ``ev_*``, riding along a job row) and
``{event_admin}`` (an admin event row's ledger columns of alias ``e``), filled when a file
is loaded; ``{claim}`` and ``{input}`` (each one of two named queries of the enqueue
statement, ``postgres/queries/jobs.sql``) and ``{paused}``, ``{cancelled}``,
``{uncertain}`` and ``{skipped}`` (TRUE or FALSE: whether that state's console index
exists), filled per call."""
