"""Admin reads and operator actions on SQLite (Go ``store_admin.go`` semantics), plus
the console's ``AdminStore`` extensions (prefix lookup, cross-source search with a
keyset cursor, exact counts).

List calls treat ``limit <= 0`` as no limit (SQLite's ``LIMIT -1``) and a negative
offset as 0. Bulk actions run in batches (see ``maintenance.batched``).
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl_store import errors, validate
from qctl_store.sqlite.base import SqliteBase, queries, td_us, to_us, utc_day
from qctl_store.sqlite.maintenance import batched, source_kind
from qctl_store.sqlite.rows import (
    EVENT_ADMIN_COLUMNS,
    JOB_COLUMNS,
    arg_id,
    dt_required,
    event_admin_from_row,
    job_from_row,
    jobs_from_rows,
    subscriber_view_from_row,
)
from qctl_store.types import (
    AttemptError,
    DailyCount,
    Depths,
    EventAdminRow,
    EventFilter,
    Job,
    JobFilter,
    JobPageCursor,
    JobSearch,
    JobState,
    NukeReport,
    OpsStats,
    Source,
    SubscriberView,
)

Q = queries("admin.sql")

# Listing order per state filter (azync's orderForState): column, descending. The id
# tiebreak is always ascending.
_ORDER: dict[JobState | None, tuple[str, bool]] = {
    JobState.SCHEDULED: ("run_at", False),
    JobState.PAUSED: ("run_at", False),
    JobState.ACTIVE: ("lease_until", False),
    JobState.SUCCEEDED: ("completed_at", True),
    JobState.SKIPPED: ("completed_at", True),
    JobState.PENDING: ("enqueued_at", False),
    JobState.DEAD: ("enqueued_at", False),
}
_DEFAULT_ORDER = ("enqueued_at", True)  # newest first for browsing


def _order(state: JobState | None) -> tuple[str, bool]:
    return _ORDER.get(state, _DEFAULT_ORDER)


def _order_sql(state: JobState | None) -> str:
    """NULLs sort as PostgreSQL sorts them (last ascending, first descending), so both
    backends page the same way."""
    column, desc = _order(state)
    return f"{column} {'DESC NULLS FIRST' if desc else 'ASC NULLS LAST'}, id"


def _keyset_sql(state: JobState | None, after: JobPageCursor) -> str:
    """The rows strictly after ``after`` in ``_order_sql(state)``."""
    column, desc = _order(state)
    if after.sort_key is None:
        tail = f"({column} IS NULL AND id > :after_id)"
        return f"({tail} OR {column} IS NOT NULL)" if desc else tail
    if desc:
        return f"({column} < :after_key OR ({column} = :after_key AND id > :after_id))"
    return (
        f"({column} > :after_key OR ({column} = :after_key AND id > :after_id) OR {column} IS NULL)"
    )


_GET_JOB = Q.get_job.format(columns=JOB_COLUMNS)
_FIND_JOB = Q.find_job.format(columns=JOB_COLUMNS)
_COUNT_EVENTS = Q.count_events.format(where=Q.event_where)
_LIST_EVENTS = Q.list_events.format(columns=EVENT_ADMIN_COLUMNS, where=Q.event_where)
_GET_EVENT = Q.get_event.format(columns=EVENT_ADMIN_COLUMNS)
_PREFIX_TABLES = {
    "job": "azync_jobs",
    "dag": "azync_dags",
    "event": "azync_events",
    "workflow": "azync_workflow_executions",
}
_HEX = re.compile(r"^[0-9a-f]{1,32}$")


def _job_where(search: JobSearch) -> tuple[str, dict[str, Any]]:
    """A WHERE from fixed fragments and its parameters. The state is inlined as the enum's
    literal (never caller text) because SQLite only uses a partial index whose WHERE the
    query states literally."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if search.source is not None:
        clauses.append("source = :source")
        params["source"] = validate.source(search.source).value
    if search.kind:
        clauses.append("kind = :kind")
        params["kind"] = search.kind
    if search.state is not None:
        clauses.append(f"state = '{validate.job_state(search.state).value}'")
    if search.meta:
        clauses.append(Q.meta_filter)
        params["meta"] = json.dumps(validate.meta(search.meta))
    if search.error:
        clauses.append(Q.error_filter)
        params["error"] = search.error
    return " AND ".join(clauses) or "1", params


def _page(offset: int, limit: int) -> dict[str, int]:
    """azync's paging rules with the PostgreSQL backend's bounds: a negative offset is 0,
    ``limit <= 0`` is no limit (SQLite's ``LIMIT -1``)."""
    validate.limit(offset, "offset", maximum=2**62)
    validate.limit(limit, "limit", maximum=2**62)
    return {"offset": max(offset, 0), "limit": limit if limit > 0 else -1}


def _add_depth(d: Depths, state: str, n: int, pending_age: int | None) -> None:
    if state in ("pending", "scheduled", "active", "dead", "paused", "succeeded"):
        setattr(d, state, n)
    if pending_age is not None:
        d.oldest_pending_age = timedelta(microseconds=pending_age)


DAILY_WINDOW_DAYS = 30
"""azync's admin window (``queue/manager.go`` statsWindowDays), as the PostgreSQL backend."""


def _window(now: int) -> dict[str, Any]:
    return {"today": utc_day(now), "days": DAILY_WINDOW_DAYS}


def _daily(rows: list[Any]) -> list[DailyCount]:
    return [
        DailyCount(
            date=datetime.strptime(r["day"], "%Y-%m-%d").replace(tzinfo=UTC),
            enqueued=r["enqueued"],
            processed=r["processed"],
            failed=r["failed"],
            reaped=r["reaped"],
        )
        for r in rows
    ]


def canonical_prefix(prefix: str) -> str:
    """Lower-case hex with or without dashes -> the prefix of the canonical uuid text."""
    digits = prefix.strip().lower().replace("-", "")
    if not _HEX.match(digits):
        raise errors.InvalidInput(f"{prefix!r} is not a hex id prefix")
    out = ""
    for i, ch in enumerate(digits):
        if i in (8, 12, 16, 20):
            out += "-"
        out += ch
    return out


class AdminMixin(SqliteBase):
    # --- depths and throughput ------------------------------------------------------------

    def list_kinds(self, source: Source) -> list[str]:
        source = validate.source(source)
        with self.read() as t:
            return [r["kind"] for r in t.all(Q.list_kinds, {"source": source.value})]

    def kind_depths(self, source: Source) -> dict[str, Depths]:
        source = validate.source(source)
        out: dict[str, Depths] = {}
        with self.read() as t:
            for r in t.all(Q.kind_depths, {"source": source.value, "now": t.now}):
                _add_depth(
                    out.setdefault(r["kind"], Depths()), r["state"], r["n"], r["pending_age"]
                )
        return out

    def stats(self, source: Source, kind: str) -> tuple[Depths, list[DailyCount]]:
        source = validate.source(source)
        depths = Depths()
        with self.read() as t:
            params = {"source": source.value, "kind": kind, "now": t.now}
            for r in t.all(Q.depths, params):
                _add_depth(depths, r["state"], r["n"], r["pending_age"])
            daily = _daily(t.all(Q.daily, {**params, **_window(t.now)}))
        return depths, daily

    def all_daily(self, source: Source) -> list[DailyCount]:
        source = validate.source(source)
        with self.read() as t:
            params = {"source": source.value, "kind": None, **_window(t.now)}
            return _daily(t.all(Q.daily, params))

    # --- jobs -------------------------------------------------------------------------

    def list_jobs(
        self, source: Source, filter: JobFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[Job], int]:
        search = JobSearch(source=validate.source(source), kind=filter.kind, state=filter.state)
        where, params = _job_where(search)
        page = _page(offset, limit)
        sql = Q.list_jobs.format(columns=JOB_COLUMNS, where=where, order=_order_sql(search.state))
        with self.read() as t:
            total = t.one(Q.count_jobs.format(where=where), params)["n"]  # type: ignore[index]
            rows = t.all(sql, {**params, **page})
        return jobs_from_rows(rows), total

    def get_job(self, source: Source, id: uuid.UUID) -> Job:
        source = validate.source(source)
        with self.read() as t:
            row = t.one(_GET_JOB, {"id": arg_id(id), "source": source.value})
        if row is None:
            raise errors.NotFound("get job")
        return job_from_row(row)

    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]:
        source = validate.source(source)
        with self.read() as t:
            rows = t.all(Q.job_attempts, {"id": arg_id(id), "source": source.value})
        return [
            AttemptError(attempt=r["attempt"], error=r["error"], at=dt_required(r["failed_at"]))
            for r in rows
        ]

    def _transition(self, op: str, sql: str, source: Source, id: uuid.UUID, **extra: Any) -> None:
        source = validate.source(source)
        with self.tx() as t:
            params = {"id": arg_id(id), "source": source.value, "now": t.now, **extra}
            if t.execute(sql, params).rowcount == 0:
                raise errors.NotFound(op)

    def retry_job(self, source: Source, id: uuid.UUID) -> None:
        self._transition("retry", Q.retry_job, source, id)

    def run_now(self, source: Source, id: uuid.UUID) -> None:
        self._transition("run now", Q.run_now, source, id)

    def archive_job(self, source: Source, id: uuid.UUID) -> None:
        self._transition("archive", Q.archive_job, source, id)

    def pause_job(self, source: Source, id: uuid.UUID) -> None:
        self._transition("pause", Q.pause_job, source, id)

    def resume_job(self, source: Source, id: uuid.UUID) -> None:
        self._transition("resume", Q.resume_job, source, id)

    def delete_job(self, source: Source, id: uuid.UUID, state: JobState) -> None:
        state = validate.job_state(state)
        self._transition("delete", Q.delete_job, source, id, state=state.value)

    def retry_all_dead(self, source: Source, kind: str = "") -> int:
        where, params = source_kind(source, kind)
        return batched(self, Q.retry_all_dead.format(where=where), params)

    def delete_all(self, source: Source, kind: str, state: JobState) -> int:
        where, params = source_kind(source, kind)
        params["state"] = validate.job_state(state).value
        return batched(self, Q.delete_all.format(where=where), params)

    def vacuum_dead(self, source: Source, kind: str, older_than: timedelta) -> int:
        where, params = source_kind(source, kind)
        params["older_than"] = td_us(validate.duration(older_than, "older_than"))
        return batched(self, Q.vacuum_dead.format(where=where), params)

    def nuke_all(self, source: Source) -> NukeReport:
        params = {"source": validate.source(source).value}
        # Jobs go in batches (their attempt rows cascade); the event ledger stays.
        jobs = batched(self, Q.nuke_jobs, params)
        with self.tx() as t:
            stats = t.execute(Q.nuke_stats, params).rowcount
            keys = t.execute(Q.nuke_keys, params).rowcount
        return NukeReport(jobs=jobs, stats=stats, keys=keys)

    # --- events and subscribers --------------------------------------------------------

    def list_events(
        self, filter: EventFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[EventAdminRow], int]:
        page = _page(offset, limit)
        params = {
            "type": filter.type,
            "since": to_us(validate.instant(filter.since, "since")),
            "until": to_us(validate.instant(filter.until, "until")),
            "undispatched": None if filter.undispatched is None else int(filter.undispatched),
        }
        with self.read() as t:
            total = t.one(_COUNT_EVENTS, params)["n"]  # type: ignore[index]
            rows = t.all(_LIST_EVENTS, {**params, **page})
        return [event_admin_from_row(r) for r in rows], total

    def get_event(self, id: uuid.UUID) -> EventAdminRow:
        with self.read() as t:
            row = t.one(_GET_EVENT, {"id": arg_id(id)})
        if row is None:
            raise errors.NotFound("get event")
        return event_admin_from_row(row)

    def list_subscriber_views(self, event_type: str = "") -> list[SubscriberView]:
        with self.read() as t:
            rows = t.all(Q.subscriber_views, {"event_type": event_type})
        return [subscriber_view_from_row(r) for r in rows]

    def ops_stats(self) -> OpsStats:
        with self.read() as t:
            r = t.one(Q.ops_stats, {"since": t.now - td_us(timedelta(hours=24))})
        assert r is not None
        return OpsStats(
            undispatched=r["undispatched"],
            total_24h=r["total_24h"],
            types_24h=r["types_24h"],
            subscribers=r["subscribers"],
        )

    # --- AdminStore extensions -----------------------------------------------------------

    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]:
        table = _PREFIX_TABLES.get(entity)
        if table is None:
            raise errors.InvalidInput(
                f"unknown entity {entity!r} (one of {', '.join(_PREFIX_TABLES)})"
            )
        params = {"prefix": canonical_prefix(prefix), "limit": _page(0, limit)["limit"]}
        with self.read() as t:
            rows = t.all(Q.ids_by_prefix.format(table=table), params)
        return [uuid.UUID(r["id"]) for r in rows]

    def find_job(self, id: uuid.UUID) -> Job:
        with self.read() as t:
            row = t.one(_FIND_JOB, {"id": arg_id(id)})
        if row is None:
            raise errors.NotFound("get job")
        return job_from_row(row)

    def search_jobs(
        self, search: JobSearch, limit: int = 50, after: JobPageCursor | None = None
    ) -> list[Job]:
        page = _page(0, limit)
        where, params = _job_where(search)
        state = None if search.state is None else JobState(search.state)
        if after is not None:
            where += " AND " + _keyset_sql(state, after)
            params["after_id"] = arg_id(after.id, "after.id")
            params["after_key"] = to_us(validate.instant(after.sort_key, "after.sort_key"))
        sql = Q.list_jobs.format(columns=JOB_COLUMNS, where=where, order=_order_sql(state))
        with self.read() as t:
            return jobs_from_rows(t.all(sql, {**params, **page}))

    def count_jobs(self, search: JobSearch, exact: bool = False) -> tuple[int, bool]:
        # SQLite counts are exact and cheap enough at embedded scale: never estimated.
        where, params = _job_where(search)
        with self.read() as t:
            row = t.one(Q.count_jobs.format(where=where), params)
        assert row is not None
        return int(row["n"]), False
