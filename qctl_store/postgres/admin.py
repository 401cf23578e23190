"""Admin reads and actions over jobs on PostgreSQL (notes 1.A Admin/ListJobs, 2.5, 2.10),
plus the console's ``AdminStore`` extensions: prefix lookup on the uuid primary key,
any-source lookup, keyset search in ``list_jobs``' order, estimated counts and the
console's refresh read of depths (``live_depths``: live states on their indexes, huge
terminal ones from the planner's statistics)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from qctl_store import validate
from qctl_store.actions import JobActions
from qctl_store.errors import NotFound
from qctl_store.listing import (
    DAILY_WINDOW_DAYS,
    entity_table,
    hex_prefix,
    index_clauses,
    job_where,
    keyset_sql,
    kind_clause,
    order_sql,
)
from qctl_store.postgres.base import Cursor, PgBase, queries
from qctl_store.postgres.maintenance import run_batches
from qctl_store.postgres.rows import DIALECT, ROWS, arg_id, job_from_row
from qctl_store.sqlfile import fill
from qctl_store.types import (
    AttemptError,
    DailyCount,
    Depths,
    Job,
    JobFilter,
    JobPageCursor,
    JobSearch,
    JobState,
    Source,
)

Q = queries("admin.sql")

ESTIMATE_THRESHOLD = 100_000
"""Below this planner estimate a count is cheap enough to be exact."""

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


_SOURCE = "source = %(source)s"
_SOURCE_KIND = "source = %(source)s AND kind = %(kind)s"
_KIND_STATE = "source = %(source)s AND kind = %(kind)s AND state = %(state)s"


def _estimate(cur: Cursor, where: str, args: dict[str, Any]) -> int:
    """The planner's row estimate for ``where``: free on a huge table, and never below
    one row (the planner clamps it)."""
    cur.execute(fill(Q.estimate_jobs, where=where), args)
    row = cur.fetchone()
    plan = row["QUERY PLAN"] if row else None
    return int(plan[0]["Plan"]["Plan Rows"]) if plan else 0


def _kind_depths(cur: Cursor, where: str, args: dict[str, Any]) -> dict[str, Depths]:
    cur.execute(fill(Q.depths, where=where), args)
    return _add_depths({}, cur)


def _add_depths(out: dict[str, Depths], cur: Cursor) -> dict[str, Depths]:
    """Folds (kind, state, n, pending_age) rows into ``out``."""
    for r in cur.fetchall():
        d = out.setdefault(r["kind"], Depths())
        field = _DEPTH_FIELDS.get(JobState(r["state"]))
        if field is not None:
            setattr(d, field, int(r["n"]))
        if r["pending_age"] is not None:
            d.oldest_pending_age = timedelta(seconds=float(r["pending_age"]))
    return out


def _daily(cur: Cursor, where: str, args: dict[str, Any]) -> list[DailyCount]:
    cur.execute(fill(Q.daily, where=where), {**args, "days": DAILY_WINDOW_DAYS})
    return [ROWS.daily(r) for r in cur.fetchall()]


class AdminMixin(JobActions, PgBase):
    # --- kinds, depths, throughput --------------------------------------------------

    def list_kinds(self, source: Source) -> list[str]:
        with self.read() as cur:
            cur.execute(Q.list_kinds, {"source": validate.source(source).value})
            return [r["kind"] for r in cur.fetchall()]

    def kind_depths(self, source: Source) -> dict[str, Depths]:
        args = {"source": validate.source(source).value}
        with self.read() as cur:
            return _kind_depths(cur, _SOURCE, args)

    def stats(self, source: Source, kind: str) -> tuple[Depths, list[DailyCount]]:
        args = {"source": validate.source(source).value, "kind": str(kind)}
        with self.read() as cur:
            depths = _kind_depths(cur, _SOURCE_KIND, args).get(str(kind), Depths())
            daily = _daily(cur, _SOURCE_KIND, args)
        return depths, daily

    def live_depths(self, source: Source) -> tuple[dict[str, Depths], bool]:
        args: dict[str, Any] = {"source": validate.source(source).value}
        with self.read() as cur:
            if _estimate(cur, "TRUE", {}) < ESTIMATE_THRESHOLD:
                return _kind_depths(cur, _SOURCE, args), False
            cur.execute(Q.live_depths, args)
            out = _add_depths({}, cur)
            if args["source"] == Source.DAG:
                cur.execute(Q.dag_live_depths, args)
                _add_depths(out, cur)
            cur.execute(Q.terminal_kinds, args)
            for r in cur.fetchall():
                out.setdefault(r["kind"], Depths())
            # Paused has no index: on a huge table its count is always the planner's.
            # Succeeded is counted on its index where the estimate says that is cheap.
            exact: list[str] = []
            for kind, d in out.items():
                of_kind = {**args, "kind": kind}
                succeeded = _estimate(cur, _KIND_STATE, {**of_kind, "state": "succeeded"})
                if succeeded >= ESTIMATE_THRESHOLD:
                    d.succeeded = succeeded
                else:
                    exact.append(kind)
                paused = _estimate(cur, _KIND_STATE, {**of_kind, "state": "paused"})
                d.paused = paused if paused > 1 else 0  # the planner's one-row floor: none
                if args["source"] == Source.WORKFLOW:  # uncertain has no index either
                    uncertain = _estimate(cur, _KIND_STATE, {**of_kind, "state": "uncertain"})
                    d.uncertain = uncertain if uncertain > 1 else 0
            if exact:
                cur.execute(Q.succeeded_depths, {**args, "kinds": exact})
                _add_depths(out, cur)
        return out, bool(out)  # every kind's paused count is an estimate

    def all_daily(self, source: Source) -> list[DailyCount]:
        with self.read() as cur:
            return _daily(cur, _SOURCE, {"source": validate.source(source).value})

    # --- listing and detail ---------------------------------------------------------

    def list_jobs(
        self, source: Source, filter: JobFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[Job], int]:
        search = JobSearch(source=validate.source(source), kind=filter.kind, state=filter.state)
        where, args = job_where(DIALECT, search)
        where += index_clauses(search.source, search.state)
        args.update(DIALECT.page(offset, limit))
        with self.read() as cur:
            cur.execute(fill(Q.count_jobs, where=where), args)
            total_row = cur.fetchone()
            sql = fill(Q.list_jobs, where=where, order=order_sql(search.state))
            cur.execute(sql, args)
            rows = cur.fetchall()
        return [job_from_row(r) for r in rows], int(total_row["n"]) if total_row else 0

    def get_job(self, source: Source, id: uuid.UUID) -> Job:
        with self.read() as cur:
            cur.execute(Q.get_job, {"id": arg_id(id), "source": validate.source(source).value})
            row = cur.fetchone()
        if row is None:
            raise NotFound("get job")
        return job_from_row(row)

    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]:
        with self.read() as cur:
            cur.execute(Q.job_attempts, {"id": arg_id(id), "source": validate.source(source).value})
            return [ROWS.attempt(r) for r in cur.fetchall()]

    # --- actions --------------------------------------------------------------------

    def _act(self, op: str, statement: str, source: Source, id: uuid.UUID, **extra: Any) -> None:
        args = {"id": arg_id(id), "source": validate.source(source).value, **extra}
        with self.tx() as cur:
            cur.execute(Q[statement], args)
            if cur.rowcount == 0:
                raise NotFound(op)

    def retry_all_dead(self, source: Source, kind: str = "") -> int:
        where, args = kind_clause(DIALECT, source, kind)
        return run_batches(self, fill(Q.retry_all_dead, where=where), args)

    def run_now(self, source: Source, id: uuid.UUID) -> None:
        source = validate.source(source)
        with self.tx() as cur:
            cur.execute(Q.run_now, {"id": arg_id(id), "source": source.value})
            row = cur.fetchone()
        if row is None:
            raise NotFound("run now")
        self.notify_after_commit(source, [row["kind"]])

    def delete_all(self, source: Source, kind: str, state: JobState) -> int:
        where, args = kind_clause(DIALECT, source, kind)
        args["state"] = validate.job_state(state).value
        return run_batches(self, fill(Q.delete_all, where=where), args)

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

    def find_job(self, id: uuid.UUID) -> Job:
        with self.read() as cur:
            cur.execute(Q.find_job, {"id": arg_id(id)})
            row = cur.fetchone()
        if row is None:
            raise NotFound("get job")
        return job_from_row(row)

    def search_jobs(
        self, search: JobSearch, limit: int = 50, after: JobPageCursor | None = None
    ) -> list[Job]:
        where, args = job_where(DIALECT, search)
        state = None if search.state is None else JobState(search.state)
        where += index_clauses(search.source, state)
        if after is not None:
            keyset, keyset_args = keyset_sql(DIALECT, state, after, search.reverse)
            where += " AND " + keyset
            args.update(keyset_args)
        args.update(DIALECT.page(0, limit))
        if state == JobState.DEAD and search.source is not None and not search.kind:
            sql = fill(Q.dead_across_kinds, where=where, order=order_sql(state, search.reverse))
        else:
            sql = fill(Q.list_jobs, where=where, order=order_sql(state, search.reverse))
        with self.read() as cur:
            cur.execute(sql, args)
            return [job_from_row(r) for r in cur.fetchall()]

    def count_jobs(self, search: JobSearch, exact: bool = False) -> tuple[int, bool]:
        where, args = job_where(DIALECT, search)
        estimable = (
            not exact
            and not search.meta
            and not search.error
            and search.payload is None
            and (search.state is None or JobState(search.state) in _ESTIMABLE_STATES)
        )
        where += index_clauses(search.source, search.state)
        with self.read() as cur:
            if estimable:
                # The planner's row estimate costs nothing on a huge table; trust it
                # only where an exact count would be the expensive one.
                estimate = _estimate(cur, where, args)
                if estimate >= ESTIMATE_THRESHOLD:
                    return estimate, True
            cur.execute(fill(Q.count_jobs, where=where), args)
            total = cur.fetchone()
        return (int(total["n"]) if total else 0), False
