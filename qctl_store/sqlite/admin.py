"""Admin reads and operator actions on SQLite (Go ``store_admin.go`` semantics), plus
the console's ``AdminStore`` extensions (prefix lookup, cross-source search with a
keyset cursor, exact counts).

List calls treat ``limit <= 0`` as no limit (SQLite's ``LIMIT -1``) and a negative
offset as 0. Bulk actions run in batches (see ``maintenance.run_batches``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import fields
from datetime import timedelta
from typing import Any

from qctl_kit import errors
from qctl_kit.sqlfile import fill
from qctl_kit.values import PageCursor
from qctl_store import validate
from qctl_store.actions import JobActions, JobReads
from qctl_store.columns import listed_job_columns
from qctl_store.listing import (
    DAILY_WINDOW_DAYS,
    entity_table,
    hex_prefix,
    job_where,
    kind_clause,
    order_sql,
    search_where,
)
from qctl_store.sqlite.base import SqliteBase, queries, utc_day
from qctl_store.sqlite.maintenance import run_batches
from qctl_store.sqlite.rows import (
    DIALECT,
    ROWS,
    arg_id,
    jobs_from_rows,
)
from qctl_store.types import DailyCount, Depths, Job, JobFilter, JobSearch, JobState, Source

Q = queries("admin.sql")


DEPTH_STATES = frozenset(f.name for f in fields(Depths)) - {"oldest_pending_age"}


def _add_depth(d: Depths, state: str, n: int, pending_age: int | None) -> None:
    if state in DEPTH_STATES:
        setattr(d, state, n)
    if pending_age is not None:
        d.oldest_pending_age = timedelta(microseconds=pending_age)


def _window(now: int) -> dict[str, Any]:
    return {"today": utc_day(now), "days": DAILY_WINDOW_DAYS}


def canonical_prefix(prefix: str) -> str:
    """A typed uuid prefix as the prefix of the canonical (dashed) id text."""
    digits = hex_prefix(prefix)
    groups = (digits[i:j] for i, j in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32)))
    return "-".join(g for g in groups if g)


class AdminMixin(JobActions, JobReads, SqliteBase):
    # --- depths and throughput ------------------------------------------------------------

    def kind_depths(self, source: Source) -> dict[str, Depths]:
        return self.sources_depths([source], exact=True)[source][0]

    def live_depths(self, source: Source) -> tuple[dict[str, Depths], bool]:
        return self.sources_depths([source])[source]

    def sources_depths(
        self, sources: Sequence[Source], exact: bool = False
    ) -> dict[Source, tuple[dict[str, Depths], bool]]:
        # Embedded tables stay small enough for the exact read.
        out: dict[Source, dict[str, Depths]] = {validate.source(s): {} for s in sources}
        with self.read() as t:
            args = {"sources": self.dialect.array([s.value for s in out]), "now": t.now}
            for r in t.all(Q.kind_depths, args):
                d = out[Source(r["source"])].setdefault(r["kind"], Depths())
                _add_depth(d, r["state"], r["n"], r["pending_age"])
        return {s: (d, False) for s, d in out.items()}

    def stats(self, source: Source, kind: str) -> tuple[Depths, list[DailyCount]]:
        source = validate.source(source)
        depths = Depths()
        with self.read() as t:
            params = {"source": source.value, "kind": kind, "now": t.now}
            for r in t.all(Q.depths, params):
                _add_depth(depths, r["state"], r["n"], r["pending_age"])
            daily = [ROWS.daily(r) for r in t.all(Q.daily, {**params, **_window(t.now)})]
        return depths, daily

    def all_daily(self, source: Source) -> list[DailyCount]:
        source = validate.source(source)
        with self.read() as t:
            params = {"source": source.value, "kind": None, **_window(t.now)}
            return [ROWS.daily(r) for r in t.all(Q.daily, params)]

    # --- jobs -------------------------------------------------------------------------

    def list_jobs(
        self, source: Source, filter: JobFilter, offset: int = 0, limit: int = 0
    ) -> tuple[list[Job], int]:
        search = JobSearch(source=validate.source(source), kind=filter.kind, state=filter.state)
        where, params, state = search_where(DIALECT, search)
        paging = DIALECT.page(offset, limit)
        sql = fill(
            Q.list_jobs, where=where, order=order_sql(state), columns=listed_job_columns(True)
        )
        with self.read() as t:
            total = t.one(fill(Q.count_jobs, where=where), params)["n"]  # type: ignore[index]
            rows = t.all(sql, {**params, **paging})
        return jobs_from_rows(rows), total

    def _act(self, op: str, statement: str, source: Source, id: uuid.UUID, **extra: Any) -> None:
        args = {"id": arg_id(id), "source": validate.source(source).value, **extra}
        with self.tx() as t:
            if t.execute(Q[statement], {**args, "now": t.now}).rowcount == 0:
                raise errors.NotFound(op)

    def run_now(self, source: Source, id: uuid.UUID) -> None:
        self._act("run now", "run_now", source, id)

    def retry_all_dead(self, source: Source, kind: str = "") -> int:
        where, params = kind_clause(DIALECT, source, kind)
        return run_batches(self, fill(Q.retry_all_dead, where=where), params)

    def delete_all(self, source: Source, kind: str, state: JobState) -> int:
        where, params = kind_clause(DIALECT, source, kind, state)
        return run_batches(self, fill(Q.delete_all, where=where), params)

    def _act_many(
        self, statement: str, ids: Sequence[uuid.UUID], sources: Sequence[Source], **extra: Any
    ) -> list[Any]:
        args = {
            "ids": DIALECT.array([arg_id(i) for i in ids]),
            "sources": DIALECT.array([validate.source(s).value for s in sources]),
            **{k: DIALECT.array(v) for k, v in extra.items()},
        }
        with self.tx() as t:
            return t.all(Q[statement], {**args, "now": t.now})

    def run_now_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        return self._changed("run_now_jobs", ids, sources)

    # --- AdminStore extensions -----------------------------------------------------------

    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]:
        table = entity_table(entity)
        params = {"prefix": canonical_prefix(prefix), "limit": DIALECT.page(0, limit)["limit"]}
        with self.read() as t:
            rows = t.all(fill(Q.find_ids_by_prefix, table=table), params)
        return [uuid.UUID(r["id"]) for r in rows]

    def search_jobs(
        self,
        search: JobSearch,
        limit: int = 50,
        after: PageCursor | None = None,
        payload: bool = True,
    ) -> list[Job]:
        paging = DIALECT.page(0, limit)
        where, params, state = search_where(DIALECT, search, after)
        order = order_sql(state, search.reverse, search=True)
        sql = fill(Q.list_jobs, where=where, order=order, columns=listed_job_columns(payload))
        with self.read() as t:
            return jobs_from_rows(t.all(sql, {**params, **paging}))

    def count_jobs(self, search: JobSearch, exact: bool = False) -> tuple[int, bool]:
        # SQLite counts are exact and cheap enough at embedded scale: never estimated.
        where, params = job_where(DIALECT, search)
        with self.read() as t:
            row = t.one(fill(Q.count_jobs, where=where), params)
        assert row is not None
        return int(row["n"]), False
