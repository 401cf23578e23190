"""A page of one kind's dead jobs on SQLite walks ``qctl_jobs_dead_idx`` (migration
0003) in failure order, newest first or oldest, rather than sorting every dead job of
the kind: checked with EXPLAIN QUERY PLAN on the statement ``search_jobs`` runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from qctl_kit.sqlfile import fill
from qctl_store.columns import listed_job_columns
from qctl_store.listing import order_sql, search_where
from qctl_store.sqlite import SqliteStore
from qctl_store.sqlite.admin import Q
from qctl_store.sqlite.rows import DIALECT
from qctl_store.types import JobSearch, JobState, Source


@pytest.mark.parametrize("newest_first", [True, False])
def test_a_kind_s_dead_page_walks_the_failure_order_index(
    tmp_path: Path, newest_first: bool
) -> None:
    path = tmp_path / "qctl.db"
    SqliteStore(str(path)).migrate()
    search = JobSearch(source=Source.QUEUE, kind="k", state=JobState.DEAD, reverse=newest_first)
    where, args, state = search_where(DIALECT, search)
    order = order_sql(state, search.reverse, search=True)
    sql = fill(Q.list_jobs, where=where, order=order, columns=listed_job_columns(False))
    args.update(DIALECT.page(0, 5))
    with sqlite3.connect(path) as c:
        plan = [r[3] for r in c.execute(f"EXPLAIN QUERY PLAN {sql}", args)]
    assert plan[0].startswith("SEARCH azync_jobs USING INDEX qctl_jobs_dead_idx"), plan
    # At most the ties of one failure time are sorted (by id), never the whole kind.
    assert all("TEMP B-TREE FOR ORDER BY" not in step for step in plan), plan
