"""Admin reads and actions over jobs on PostgreSQL (azync's ``driver/azyncpgx/store_admin.go``),
plus the console's ``AdminStore`` extensions: prefix lookup on the uuid primary key,
any-source lookup, keyset search in ``list_jobs``' order, estimated counts and the
console's refresh read of depths (``live_depths``: live states on their indexes, huge
terminal ones from the planner's statistics)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from qctl_kit.errors import NotFound
from qctl_kit.postgres import tune
from qctl_kit.postgres.connect import Cursor
from qctl_kit.sqlfile import fill
from qctl_kit.values import PageCursor
from qctl_store import validate
from qctl_store.actions import JobActions, JobReads
from qctl_store.columns import listed_job_columns
from qctl_store.listing import (
    DAILY_WINDOW_DAYS,
    entity_table,
    hex_prefix,
    kind_clause,
    order_for,
    order_sql,
    search_where,
)
from qctl_store.postgres.base import PgBase, azync_errors, queries
from qctl_store.postgres.maintenance import keyset_batches, run_batches
from qctl_store.postgres.rows import DIALECT, ROWS, arg_id, fetch_jobs
from qctl_store.types import (
    CAPPED_DEPTHS,
    LIVE_DEPTH_CAP,
    DailyCount,
    Depths,
    Job,
    JobFilter,
    JobSearch,
    JobState,
    Source,
)

Q = queries("admin.sql")

ESTIMATE_THRESHOLD = 100_000
"""Below this planner estimate a count is cheap enough to be exact."""

EXACT_LIMIT = 10_000
"""Dead and paused jobs pile up: ``count_jobs`` counts them no further than this and
answers with the planner's estimate (marked) beyond it."""


def _state_index(state: str, order: str) -> str:
    return (
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS qctl_jobs_{state}_idx"
        f" ON azync_jobs (source, kind, {order}, id) WHERE state = '{state}'"
    )


UNINDEXED_STATES = (JobState.PAUSED, JobState.CANCELLED, JobState.UNCERTAIN, JobState.SKIPPED)
"""The job states azync's schema has no index for (its migrations index pending,
scheduled, active, dead and succeeded, and blocked and waiting by DAG): counting or
listing one reads the whole job table until ``tune`` creates its console index."""

STATE_INDEXES = {
    state: f"qctl_jobs_{state.value}_idx" for state in (*UNINDEXED_STATES, JobState.DEAD)
}
"""The console index a page of a state across kinds merges from (``across_kinds``):
one per unindexed state, and one for dead jobs, whose azync index holds ``enqueued_at``
while the console lists them in failure order."""

CONSOLE_INDEXES = {
    name: _state_index(state.value, order_for(state, search=True)[0])
    for state, name in STATE_INDEXES.items()
}
"""The console's opt-in indexes and their definitions (``qctl db tune``), each (source,
kind) then the state's ``search_jobs`` order, so a first page across kinds merges index
ranges, a count reads only the state's rows and ``throughput`` counts them. Created
only on request; every object azync's migrations create is named ``azync_*``, so they
can never take these names."""

PAUSED_INDEX = STATE_INDEXES[JobState.PAUSED]

_ESTIMABLE_STATES = (None, JobState.SUCCEEDED, JobState.SKIPPED)

_DEPTH_FIELDS = {
    JobState.PENDING: "pending",
    JobState.SCHEDULED: "scheduled",
    JobState.ACTIVE: "active",
    JobState.DEAD: "dead",
    JobState.PAUSED: "paused",
    JobState.SUCCEEDED: "succeeded",
    JobState.WAITING: "waiting",
    JobState.BLOCKED: "blocked",
    JobState.UNCERTAIN: "uncertain",
}


_MERGED_STATES = (JobState.PENDING, JobState.SCHEDULED, JobState.ACTIVE)
"""States whose azync index leads with (source, kind) and then holds ``search_jobs``'
order, so a page across kinds merges index ranges (``across_kinds``); the states of
``STATE_INDEXES`` too once their console index exists."""

_CAPPED_STATES = (JobState.DEAD, JobState.PAUSED, JobState.CANCELLED, JobState.UNCERTAIN)

_SOURCE = "source = %(source)s"
_SOURCES = "source = ANY(%(sources)s)"
_SOURCE_KIND = "source = %(source)s AND kind = %(kind)s"


def _estimate(cur: Cursor, where: str, args: dict[str, Any]) -> int:
    """The planner's row estimate for ``where``: free on a huge table, and never below
    one row (the planner clamps it)."""
    cur.execute(fill(Q.estimate_jobs, where=where), args)
    return _plan_rows(cur)


def _plan_rows(cur: Cursor) -> int:
    row = cur.fetchone()
    plan = row["QUERY PLAN"] if row else None
    return int(plan[0]["Plan"]["Plan Rows"]) if plan else 0


def _size_and_tuning(cur: Cursor) -> tuple[bool, bool]:
    """Whether the table is huge (its ``_estimate`` at least ``ESTIMATE_THRESHOLD``) and
    whether the paused index exists, asked in one round trip (a pipeline).

    Neither statement is prepared: psycopg names a statement it prepares in a pipeline
    as prepared even when the server skipped its Parse because an earlier statement of
    the pipeline failed (the estimate behind a lock, at the lock timeout), and the next
    run of it on that connection then fails with ``prepared statement "_pg3_N" does
    not exist``."""
    conn = cur.connection
    with conn.cursor(row_factory=cur.row_factory) as indexes:
        with conn.pipeline():
            cur.execute(fill(Q.estimate_jobs, where="TRUE"), {}, prepare=False)
            indexes.execute(
                tune.PRESENT, {"table": "azync_jobs", "names": [PAUSED_INDEX]}, prepare=False
            )
        return _plan_rows(cur) >= ESTIMATE_THRESHOLD, bool(indexes.fetchall())


def console_indexes_of(cur: Cursor) -> set[str]:
    """The names of ``CONSOLE_INDEXES`` that exist, valid, on this schema's job table."""
    cur.execute(tune.PRESENT, {"table": "azync_jobs", "names": list(CONSOLE_INDEXES)})
    return {r["name"] for r in cur.fetchall()}


def _merges(cur: Cursor, search: JobSearch, state: JobState | None) -> bool:
    """Whether a page is read with ``across_kinds``: one state of one source across
    kinds, on an index that holds its order, with no id filter (which has its own)."""
    if search.source is None or search.kind or search.event_id or search.run_id or search.dag_id:
        return False
    if state in STATE_INDEXES:
        return STATE_INDEXES[state] in console_indexes_of(cur)
    return state in _MERGED_STATES


def _cheap_count(
    cur: Cursor, where: str, args: dict[str, Any], state: JobState | None
) -> tuple[int, bool] | None:
    """``count_jobs``' answer where an exact count could be expensive, or None to count.
    A state without its console index (``tune``) is estimated once the table is huge
    (counting it would read all of it); huge unfiltered terminal states come from the
    planner's estimate; the states that pile up are counted up to ``EXACT_LIMIT`` on
    their index and estimated beyond it."""
    if state in UNINDEXED_STATES and STATE_INDEXES[state] not in console_indexes_of(cur):
        if _estimate(cur, "TRUE", {}) < ESTIMATE_THRESHOLD:
            return None
        estimate = _estimate(cur, where, args)
        return (estimate if estimate > 1 else 0), True  # the planner's one-row floor: none
    if state in _ESTIMABLE_STATES:
        # The planner's row estimate costs nothing on a huge table; trust it only where
        # an exact count would be the expensive one.
        estimate = _estimate(cur, where, args)
        return (estimate, True) if estimate >= ESTIMATE_THRESHOLD else None
    if state not in _CAPPED_STATES:
        return None
    cur.execute(fill(Q.count_capped, where=where), {**args, "cap": EXACT_LIMIT})
    row = cur.fetchone()
    n = int(row["n"]) if row else 0
    return (n, False) if n < EXACT_LIMIT else (max(n, _estimate(cur, where, args)), True)


def _kind_depths(cur: Cursor, where: str, args: dict[str, Any]) -> dict[str, Depths]:
    cur.execute(fill(Q.depths, where=where), args)
    return _add_depths({}, cur)


def _add_depths(
    out: dict[str, Depths], cur: Cursor, rows: list[dict[str, Any]] | None = None
) -> dict[str, Depths]:
    """Folds (kind, state, n, pending_age) rows (``rows``, else the cursor's) into
    ``out``; a row with no count only names a kind."""
    for r in cur.fetchall() if rows is None else rows:
        d = out.setdefault(r["kind"], Depths())
        if r["n"] is None:
            continue
        field = _DEPTH_FIELDS.get(JobState(r["state"]))
        if field is not None:
            setattr(d, field, int(r["n"]))
        if r["pending_age"] is not None:
            d.oldest_pending_age = timedelta(seconds=float(r["pending_age"]))
    return out


def _daily(cur: Cursor, where: str, args: dict[str, Any]) -> list[DailyCount]:
    cur.execute(fill(Q.daily, where=where), {**args, "days": DAILY_WINDOW_DAYS})
    return [ROWS.daily(r) for r in cur.fetchall()]


def _live_depths(cur: Cursor, source: Source, tuned: bool) -> tuple[dict[str, Depths], bool]:
    """``live_depths`` of one source on a huge table (``tuned``: the paused index exists)."""
    args: dict[str, Any] = {"source": source.value}
    live = {**args, "cap": LIVE_DEPTH_CAP}
    cur.execute(fill(Q.live_depths, where="TRUE" if tuned else "FALSE"), live)
    rows = cur.fetchall()
    out = _add_depths({}, cur, [r for r in rows if r["estimate"] is None])
    estimates = {
        (r["kind"], r["state"]): int(r["estimate"]) for r in rows if r["estimate"] is not None
    }
    if source == Source.DAG:
        cur.execute(Q.dag_live_depths, args)
        _add_depths(out, cur)
    if not out:
        return out, False
    # Succeeded is counted on its index for the smallest kinds while their
    # estimates add up to less than EXACT_LIMIT (so the refresh reads a bounded
    # part of the index however many mid-sized kinds there are); the rest are
    # the statistics'.
    exact: list[str] = []
    estimated = not tuned  # then every kind's paused count is the statistics'
    budget = EXACT_LIMIT
    for kind in sorted(out, key=lambda k: estimates.get((k, "succeeded"), 0)):
        d = out[kind]
        succeeded = estimates.get((kind, "succeeded"), 0)
        if succeeded < budget:
            exact.append(kind)
            budget -= succeeded
        else:
            d.succeeded, estimated = succeeded, True
        for state in CAPPED_DEPTHS:
            n = getattr(d, state)
            if n >= LIVE_DEPTH_CAP:
                setattr(d, state, max(n, estimates.get((kind, state), 0)))
                estimated = True
        if not tuned:
            d.paused = estimates.get((kind, "paused"), 0)
        if source == Source.WORKFLOW:  # uncertain has no index either
            d.uncertain = estimates.get((kind, "uncertain"), 0)
    if exact:
        cur.execute(Q.succeeded_depths, {**args, "kinds": exact})
        _add_depths(out, cur)
    return out, estimated


class AdminMixin(JobActions, JobReads, PgBase):
    # --- kinds, depths, throughput --------------------------------------------------

    def kind_depths(self, source: Source) -> dict[str, Depths]:
        return self.sources_depths([source], exact=True)[source][0]

    def stats(self, source: Source, kind: str) -> tuple[Depths, list[DailyCount]]:
        args = {"source": validate.source(source).value, "kind": str(kind)}
        with self.read() as cur:
            depths = _kind_depths(cur, _SOURCE_KIND, args).get(str(kind), Depths())
            daily = _daily(cur, _SOURCE_KIND, args)
        return depths, daily

    def live_depths(self, source: Source) -> tuple[dict[str, Depths], bool]:
        return self.sources_depths([source])[source]

    def sources_depths(
        self, sources: Sequence[Source], exact: bool = False
    ) -> dict[Source, tuple[dict[str, Depths], bool]]:
        srcs = [validate.source(s) for s in sources]
        with self.read() as cur:
            huge, tuned = (False, False) if exact else _size_and_tuning(cur)
            if huge:
                return {s: _live_depths(cur, s, tuned) for s in srcs}
            cur.execute(fill(Q.depths, where=_SOURCES), {"sources": [s.value for s in srcs]})
            rows = cur.fetchall()
        return {
            s: (_add_depths({}, cur, [r for r in rows if r["source"] == s]), False) for s in srcs
        }

    def console_indexes(self) -> list[str]:
        """The console's opt-in indexes (``CONSOLE_INDEXES``) this schema has."""
        with self.read() as cur:
            return sorted(console_indexes_of(cur))

    def tune(self, dry_run: bool = False) -> list[str]:
        """Create the console's opt-in indexes that are missing without blocking
        writers: CREATE INDEX CONCURRENTLY, so outside any transaction (a build left
        invalid by an interruption is dropped and redone)."""
        with self.read() as cur:
            missing = [n for n in CONSOLE_INDEXES if n not in console_indexes_of(cur)]
        if dry_run or not missing:
            return missing
        self._check_writable()
        with azync_errors(self.dsn, self.config), self._provider.connection() as conn:
            for name in missing:
                for statement in tune.build(name, CONSOLE_INDEXES[name]):
                    conn.execute(statement)
        return missing

    def all_daily(self, source: Source) -> list[DailyCount]:
        with self.read() as cur:
            return _daily(cur, _SOURCE, {"source": validate.source(source).value})

    # --- listing and detail ---------------------------------------------------------

    def list_jobs(
        self, source: Source, filter: JobFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[Job], int]:
        search = JobSearch(source=validate.source(source), kind=filter.kind, state=filter.state)
        where, args, state = search_where(DIALECT, search)
        args.update(DIALECT.page(offset, limit))
        with self.read() as cur:
            cur.execute(fill(Q.count_jobs, where=where), args)
            total_row = cur.fetchone()
            columns = listed_job_columns(payload=True)
            cur.execute(
                fill(Q.list_jobs, where=where, order=order_sql(state), columns=columns), args
            )
            jobs = fetch_jobs(cur)
        return jobs, int(total_row["n"]) if total_row else 0

    # --- actions --------------------------------------------------------------------

    def _act(self, op: str, statement: str, source: Source, id: uuid.UUID, **extra: Any) -> None:
        args = {"id": arg_id(id), "source": validate.source(source).value, **extra}
        with self.tx() as cur:
            cur.execute(Q[statement], args)
            if cur.rowcount == 0:
                raise NotFound(op)

    def retry_all_dead(self, source: Source, kind: str = "") -> int:
        where, args = kind_clause(DIALECT, source, kind)
        sql = fill(Q.retry_all_dead, where=where)
        return keyset_batches(self, sql, args, ("kind", "enqueued_at", "id"))

    def run_now(self, source: Source, id: uuid.UUID) -> None:
        source = validate.source(source)
        with self.tx() as cur:
            cur.execute(Q.run_now, {"id": arg_id(id), "source": source.value})
            row = cur.fetchone()
        if row is None:
            raise NotFound("run now")
        self.notify_after_commit(source, [row["kind"]])

    def delete_all(self, source: Source, kind: str, state: JobState) -> int:
        where, args = kind_clause(DIALECT, source, kind, state)
        return run_batches(self, fill(Q.delete_all, where=where), args)

    def _act_many(
        self, statement: str, ids: Sequence[uuid.UUID], sources: Sequence[Source], **extra: Any
    ) -> list[Any]:
        args = {
            "ids": [arg_id(i) for i in ids],
            "sources": [validate.source(s).value for s in sources],
            **extra,
        }
        with self.write() as cur:  # one statement: its own transaction
            cur.execute(Q[statement], args)
            return cur.fetchall()

    def run_now_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        rows = self._act_many("run_now_jobs", ids, sources) if ids else []
        # The wake run_now sends, once per (source, kind) made due.
        kinds: dict[str, set[str]] = {}
        for r in rows:
            kinds.setdefault(r["source"], set()).add(r["kind"])
        for source, names in kinds.items():
            self.notify_after_commit(source, names)
        return [r["id"] for r in rows]

    # --- AdminStore extensions ------------------------------------------------------

    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]:
        table = entity_table(entity)
        hexits = hex_prefix(prefix)
        args = {
            "lo": hexits.ljust(32, "0"),
            "hi": hexits.ljust(32, "f"),
            "limit": DIALECT.page(0, limit)["limit"],
        }
        with self.read() as cur:
            cur.execute(fill(Q.find_ids_by_prefix, table=table), args)
            return [r["id"] for r in cur.fetchall()]

    def search_jobs(
        self,
        search: JobSearch,
        limit: int = 50,
        after: PageCursor | None = None,
        payload: bool = True,
    ) -> list[Job]:
        where, args, state = search_where(DIALECT, search, after)
        args.update(DIALECT.page(0, limit))
        order = order_sql(state, search.reverse, search=True)
        columns = listed_job_columns(payload)
        with self.read() as cur:
            if state is not None and _merges(cur, search, state):
                args["state"] = state.value
                sql = fill(Q.across_kinds, where=where, order=order, columns=columns)
            else:
                sql = fill(Q.list_jobs, where=where, order=order, columns=columns)
            cur.execute(sql, args)
            return fetch_jobs(cur)

    def listing_scans(self, state: JobState | None) -> bool:
        """On a huge table, whether a page of ``state`` across kinds has no index to
        walk and reads the whole job table: paused, cancelled, uncertain and skipped jobs
        until ``tune`` creates their index, dead jobs until their console index holds
        their failure order (every dead job is read and sorted), and every state at once
        (newest first, an order no index holds)."""
        if state is not None and JobState(state) not in STATE_INDEXES:
            return False
        with self.read() as cur:
            if _estimate(cur, "TRUE", {}) < ESTIMATE_THRESHOLD:
                return False
            return state is None or STATE_INDEXES[JobState(state)] not in console_indexes_of(cur)

    def count_jobs(self, search: JobSearch, exact: bool = False) -> tuple[int, bool]:
        where, args, state = search_where(DIALECT, search)
        with self.read() as cur:
            filtered = search.meta or search.error or search.text or search.payload is not None
            if not exact and not filtered:
                counted = _cheap_count(cur, where, args, state)
                if counted is not None:
                    return counted
            cur.execute(fill(Q.count_jobs, where=where), args)
            total = cur.fetchone()
        return (int(total["n"]) if total else 0), False
