"""Backend-independent rules and SQL builders of the admin listings, so both backends
filter, order, page and resolve ids the same way: ``list_jobs``' order per state filter,
the job, event and DAG / workflow header WHERE builders, the keyset conditions of deep
pages (jobs in their per-state order, the other listings newest first), offset/limit paging,
the console's entity tables for id-prefix lookup, and the daily stats window.

The builders write SQL through a ``Dialect`` (``qctl_store.dialect``), one per backend
(``<backend>/rows.py``): its placeholder style and the few fragments whose SQL differs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import Any

from qctl_kit import values
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import fill
from qctl_kit.values import PageCursor
from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.dialect import Dialect
from qctl_store.types import (
    DAGFilter,
    DAGState,
    DAGView,
    EventAdminRow,
    EventFilter,
    JobSearch,
    JobState,
    Source,
    WorkflowExecutionView,
    WorkflowFilter,
    WorkflowState,
)

DAILY_WINDOW_DAYS = 30
"""azync's admin window (``queue/manager.go`` statsWindowDays): 30 days, zero-filled."""


def stats_retention_days(retention: timedelta) -> int:
    """``vacuum_stats``' retention in whole days, rounded up so that a day still inside
    the retention is never trimmed; 0 (a zero retention) deletes nothing."""
    return -(-values.duration(retention, "retention") // timedelta(days=1))


ENTITY_TABLES = {
    "job": "azync_jobs",
    "dag": "azync_dags",
    "event": "azync_events",
    "workflow": "azync_workflow_executions",
}
"""``find_ids_by_prefix`` entities and the table whose uuid ``id`` each one is."""

_HEX = re.compile(r"^[0-9a-f]{1,32}$")

_NOT_NULL_ORDER = ("enqueued_at", "run_at")
"""Ascending sort columns the schema declares NOT NULL (on both backends)."""

DELIVERED = "EXISTS (SELECT 1 FROM azync_jobs j WHERE j.event_id = e.id AND j.source = 'event')"
"""An event row ``e`` has been fanned out: at least one delivery job exists."""


STAT_COLUMNS = ("enqueued", "processed", "failed", "reaped")
"""The counters of ``azync_stats_daily``."""


@cache
def stats_bump_sql(placeholder: str, day: str, column: str) -> str:
    """The upsert adding ``n`` to one ``column`` counter of (source, kind) on today's
    stats row of a shard ``slot`` (azync's ``driver/azyncpgx/azyncpgx.go`` spreads each
    day's counters over slots so concurrent bumps rarely wait on one row): named
    parameters in ``placeholder`` style, today spelled ``day``."""
    assert column in STAT_COLUMNS
    p = placeholder.format
    return (
        f"INSERT INTO azync_stats_daily (source, kind, day, slot, {column}) "
        f"VALUES ({p('source')}, {p('kind')}, {day}, {p('slot')}, {p('n')}) "
        f"ON CONFLICT (source, kind, day, slot) DO UPDATE "
        f"SET {column} = azync_stats_daily.{column} + excluded.{column}"
    )


def order_for(
    state: JobState | None, reverse: bool = False, *, search: bool = False
) -> tuple[str, bool]:
    """(column, descending) of ``list_jobs``' order for ``state`` (azync's
    orderForState; skipped sorts like succeeded), the other way with ``reverse``;
    ``id`` ascending breaks ties either way.

    With ``search``, the order of ``search_jobs`` and its cursors: the same, except that
    pending jobs come in lease order, ``(run_at, id)``, the order their partial index
    holds within a kind. A console page of pending jobs across kinds is then a merge of
    each kind's index range; in ``enqueued_at`` order, which no index holds, it would be
    a sort of the whole pending state. Dead jobs come in failure order, ``(failed_at,
    id)``, what an operator triages by (``list_jobs`` keeps azync's ``enqueued_at``, as
    Go's ``ListJobs`` does); a dead job azync's ``resolveUncertain`` wrote without a
    ``failed_at`` sorts after every failure time, where its btree index holds NULLs, so
    newest first shows it first."""
    if search and state == JobState.PENDING:
        return "run_at", reverse
    if search and state == JobState.DEAD:
        return "failed_at", reverse
    column, desc = _state_order(state)
    return column, desc != reverse


def _state_order(state: JobState | None) -> tuple[str, bool]:
    if state in (JobState.SCHEDULED, JobState.PAUSED):
        return "run_at", False
    if state == JobState.ACTIVE:
        return "lease_until", False
    if state in (JobState.SUCCEEDED, JobState.SKIPPED):
        return "completed_at", True
    if state in (JobState.PENDING, JobState.DEAD):
        return "enqueued_at", False
    return "enqueued_at", True  # no state: newest first, for browsing


def order_sql(state: JobState | None, reverse: bool = False, *, search: bool = False) -> str:
    """The ORDER BY of ``order_for(state, reverse, search=search)`` with PostgreSQL's
    NULL placement spelled out (last ascending, first descending), so SQLite, which
    sorts NULLs the other way, pages identically."""
    column, desc = order_for(state, reverse, search=search)
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


def kind_clause(
    d: Dialect, source: Source, kind: str, state: JobState | None = None
) -> tuple[str, dict[str, Any]]:
    """``source = ..`` plus ``kind = ..`` unless kind is "" (every kind): a plain equality
    keeps the (source, kind, ...) indexes usable, where ``(kind = '' OR ..)`` would not.
    A ``state`` is checked and bound as ``state`` for the statement's own condition."""
    args: dict[str, Any] = {"source": validate.source(source).value}
    if state is not None:
        args["state"] = validate.job_state(state).value
    where = f"source = {d.param('source')}"
    if not validate.optional_kind(kind):
        return where, args
    args["kind"] = kind
    return f"{where} AND kind = {d.param('kind')}", args


def job_where(d: Dialect, search: JobSearch) -> tuple[str, dict[str, Any]]:
    """A WHERE from fixed fragments, only the filters given, and its arguments. The state
    is inlined as the enum's literal (never caller text): SQLite matches a bound state to
    the per-state partial indexes only by re-preparing the statement for each value, and
    with the literal each state's plan is prepared once on either backend."""
    clauses: list[str] = []
    args: dict[str, Any] = {}
    if search.source is not None:
        clauses.append(f"source = {d.param('source')}")
        args["source"] = validate.source(search.source).value
    if search.kind:
        clauses.append(f"kind = {d.param('kind')}")
        args["kind"] = str(search.kind)
    if search.state is not None:
        clauses.append(f"state = '{validate.job_state(search.state).value}'")
    if search.meta:
        clauses.append(d.meta_filter)
        args["meta"] = validate.json_text(validate.meta(search.meta), "meta")
    if search.error:
        clauses.append(d.error_filter)
        args["error"] = d.contains_arg(search.error)
    if search.text:
        clauses.append(d.text_filter)
        args["text"] = d.contains_arg(search.text)
        args["id_text"] = d.contains_arg(search.text.lower().replace("-", ""))
    if search.event_id is not None:
        clauses.append(f"event_id = {d.param('event_id')}")
        args["event_id"] = d.arg_id(search.event_id, "event_id")
    if search.run_id is not None:
        clauses.append(f"run_id = {d.param('run_id')}")
        args["run_id"] = d.arg_id(search.run_id, "run_id")
    if search.dag_id is not None:
        clauses.append(f"dag_id = {d.param('dag_id')}")
        args["dag_id"] = d.arg_id(search.dag_id, "dag_id")
    if search.payload is not None:
        clauses.append(d.payload_filter)
        args["payload"] = validate.json_text(search.payload, "payload")
    if search.older_than is not None:
        clauses.append(d.older_than_filter)
        args["older_than"] = d.older_than_arg(values.duration(search.older_than, "older_than"))
    return " AND ".join(clauses) or "TRUE", args


def search_where(
    d: Dialect, search: JobSearch, after: PageCursor | None = None
) -> tuple[str, dict[str, Any], JobState | None]:
    """``job_where`` with the conditions ``index_clauses`` spells out and, given a cursor,
    the keyset condition of the page after it; its arguments and the state filtered on,
    which picks the order (``order_sql(state, search.reverse, search=True)``)."""
    where, args = job_where(d, search)
    state = None if search.state is None else JobState(search.state)
    where += index_clauses(search.source, state)
    if after is not None:
        keyset, keyset_args = keyset_sql(d, state, after, search.reverse)
        where += " AND " + keyset
        args.update(keyset_args)
    return where, args, state


def seeks_index(search: JobSearch) -> bool:
    """Whether an index bounds the rows ``search`` reads before its other filters: a
    kind within a state (the per-state ``(source, kind, ...)`` indexes), an event, a
    DAG run or a workflow execution. Otherwise payload, meta and error filters read
    every job of the source."""
    return bool(
        (search.kind and search.state is not None)
        or search.event_id is not None
        or search.dag_id is not None
        or search.run_id is not None
    )


def keyset_sql(
    d: Dialect, state: JobState | None, after: PageCursor, reverse: bool = False
) -> tuple[str, dict[str, Any]]:
    """The rows strictly after ``after`` in ``search_jobs``' order,
    ``order_sql(state, reverse, search=True)`` (NULLs last ascending, first descending),
    and the condition's arguments."""
    column, desc = order_for(state, reverse, search=True)
    key, id = d.param("after_key"), d.param("after_id")
    args = {
        "after_id": d.arg_id(after.id, "after.id"),
        "after_key": d.instant(validate.instant(after.sort_key, "after.sort_key")),
    }
    if after.sort_key is None:
        tail = f"({column} IS NULL AND id > {id})"
        return (f"({tail} OR {column} IS NOT NULL)" if desc else tail), args
    if not desc and column in _NOT_NULL_ORDER:
        # Never NULL, so the bound below holds and can start an index range scan.
        return (
            f"{column} >= {key} AND ({column} > {key} OR ({column} = {key} AND id > {id}))"
        ), args
    if desc:
        # The redundant upper bound is what an index range scan can start from; the
        # OR alone is only a filter, which walks every earlier row of a deep page.
        return (
            f"{column} <= {key} AND ({column} < {key} OR ({column} = {key} AND id > {id}))"
        ), args
    return f"(({column}, id) > ({key}, {id}) OR {column} IS NULL)", args


def event_where(d: Dialect, filter: EventFilter) -> tuple[str, dict[str, Any]]:
    """A WHERE over ledger rows ``e`` from fixed fragments, only the filters given, so
    each list is an index (or anti-join) plan rather than a catch-all
    ``(:type = '' OR ...)`` scan."""
    clauses: list[str] = []
    args: dict[str, Any] = {}
    if filter.type:
        clauses.append(f"e.type = {d.param('type')}")
        args["type"] = str(filter.type)
    if (since := validate.instant(filter.since, "since")) is not None:
        clauses.append(f"e.occurred_at >= {d.param('since')}")
        args["since"] = d.instant(since)
    if (until := validate.instant(filter.until, "until")) is not None:
        clauses.append(f"e.occurred_at <= {d.param('until')}")
        args["until"] = d.instant(until)
    if filter.undispatched is not None:
        clauses.append(f"NOT {DELIVERED}" if filter.undispatched else DELIVERED)
    for column in ("aggregate_type", "aggregate_id"):
        if value := getattr(filter, column):
            clauses.append(f"e.{column} = {d.param(column)}")
            args[column] = str(value)
    return " AND ".join(clauses) or "TRUE", args


def dag_where(d: Dialect, filter: DAGFilter) -> tuple[str, dict[str, Any]]:
    """The WHERE of ``list_dags``: see ``_header_where``."""
    return _header_where(d, filter.name, _state_value(DAGState, filter.state, "DAG"))


def workflow_where(d: Dialect, filter: WorkflowFilter) -> tuple[str, dict[str, Any]]:
    """The WHERE of ``list_workflow_executions``: see ``_header_where``."""
    return _header_where(d, filter.name, _state_value(WorkflowState, filter.state, "workflow"))


def _state_value(enum: type[DAGState] | type[WorkflowState], value: str | None, what: str) -> str:
    if not value:
        return ""
    try:
        return enum(value).value
    except ValueError:
        raise InvalidInput(
            f"unknown {what} state {value!r} (one of {', '.join(s.value for s in enum)})"
        ) from None


def _header_where(d: Dialect, name: str, state: str) -> tuple[str, dict[str, Any]]:
    """A WHERE over DAG or workflow execution headers: only the filters given, so a name
    walks its ``(name, created_at)`` index instead of a catch-all ``(:name = '' OR ..)``
    scan."""
    clauses: list[str] = []
    args: dict[str, Any] = {}
    if name:
        clauses.append(f"name = {d.param('name')}")
        args["name"] = str(name)
    if state:
        clauses.append(f"state = {d.param('state')}")
        args["state"] = state
    return " AND ".join(clauses) or "TRUE", args


def newest_page(
    d: Dialect,
    column: str,
    where: str,
    args: dict[str, Any],
    page: tuple[int, int, PageCursor | None],
    alias: str = "",
) -> tuple[str, dict[str, Any]]:
    """The WHERE and arguments of one page, ``page = (offset, limit, after)``, of a
    newest-first listing ``ORDER BY column DESC, id DESC`` over a NOT NULL ``column``
    (DAG runs, workflow executions, ledger events) filtered by ``where``: with
    ``after``, only the rows strictly after that cursor. The redundant upper bound is
    what an index range scan starts from; the OR alone would only filter."""
    offset, limit, after = page
    args = {**args, **d.page(offset, limit)}
    if after is None:
        return where, args
    col, id_col = (f"{alias}.{column}", f"{alias}.id") if alias else (column, "id")
    key, id = d.param("after_key"), d.param("after_id")
    args["after_id"] = d.arg_id(after.id, "after.id")
    args["after_key"] = d.instant(validate.required_instant(after.sort_key, "after.sort_key"))
    return (
        f"{where} AND {col} <= {key} AND ({col} < {key} OR ({col} = {key} AND {id_col} < {id}))"
    ), args


@dataclass(frozen=True)
class Newest:
    """One newest-first listing: its page and count statements, its WHERE builder, the
    NOT NULL column it is ordered by, the alias its list statement gives the table, and
    the mapping of its rows."""

    list_sql: str
    count_sql: str
    where: Callable[[Dialect, Any], tuple[str, dict[str, Any]]]
    column: str
    alias: str
    row: Callable[[Any], Any]


class NewestFirst(StoreBase):
    """The newest-first admin listings of both backends, each a shared mixin of its
    backend module: one page in ``ORDER BY <column> DESC, id DESC`` (``newest_page``),
    with the total of the filter read in the same transaction (``list_*``) or without
    it (``*_page``: a walk past its first page needs no count, which on millions of rows
    costs more than the page)."""

    def _newest(
        self,
        listing: Newest,
        filter: Any,
        page: tuple[int, int, PageCursor | None],
        counted: bool = True,
    ) -> tuple[list[Any], int]:
        """The page's rows and, when ``counted``, the filter's total (else 0)."""
        where, args = listing.where(self.dialect, filter)
        in_page, page_args = newest_page(
            self.dialect, listing.column, where, args, page, listing.alias
        )
        with self.read() as cur:
            total = (
                cur.execute(fill(listing.count_sql, where=where), args).fetchone()
                if counted
                else None
            )
            rows = cur.execute(fill(listing.list_sql, where=in_page), page_args).fetchall()
        return [listing.row(r) for r in rows], int(total["n"]) if total else 0


class EventListing(NewestFirst):
    def _events(self) -> Newest:
        q = self.queries("events.sql")
        return Newest(
            q.list_events, q.count_events, event_where, "occurred_at", "e", self.rows.event_admin
        )

    def list_events(
        self,
        filter: EventFilter,
        offset: int = 0,
        limit: int = 0,
        after: PageCursor | None = None,
    ) -> tuple[list[EventAdminRow], int]:
        return self._newest(self._events(), filter, (offset, limit, after))

    def event_page(
        self, filter: EventFilter, limit: int, after: PageCursor | None = None
    ) -> list[EventAdminRow]:
        return self._newest(self._events(), filter, (0, limit, after), counted=False)[0]


class DAGListing(NewestFirst):
    def _dags(self) -> Newest:
        q = self.queries("dags.sql")
        return Newest(q.list_dags, q.count_dags, dag_where, "created_at", "", self.rows.dag_view)

    def list_dags(
        self,
        filter: DAGFilter,
        offset: int = 0,
        limit: int = 0,
        after: PageCursor | None = None,
    ) -> tuple[list[DAGView], int]:
        return self._newest(self._dags(), filter, (offset, limit, after))

    def dag_page(
        self, filter: DAGFilter, limit: int, after: PageCursor | None = None
    ) -> list[DAGView]:
        return self._newest(self._dags(), filter, (0, limit, after), counted=False)[0]


class WorkflowListing(NewestFirst):
    def _executions(self) -> Newest:
        q = self.queries("workflows.sql")
        return Newest(
            q.list_executions,
            q.count_executions,
            workflow_where,
            "created_at",
            "",
            self.rows.workflow_execution,
        )

    def list_workflow_executions(
        self,
        filter: WorkflowFilter,
        offset: int = 0,
        limit: int = 0,
        after: PageCursor | None = None,
    ) -> tuple[list[WorkflowExecutionView], int]:
        return self._newest(self._executions(), filter, (offset, limit, after))

    def execution_page(
        self, filter: WorkflowFilter, limit: int, after: PageCursor | None = None
    ) -> list[WorkflowExecutionView]:
        return self._newest(self._executions(), filter, (0, limit, after), counted=False)[0]
