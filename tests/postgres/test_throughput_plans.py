"""``AdminStore.throughput`` and the DAG states of ``live_depths`` on PostgreSQL never
scan the whole job table: every statement they run is planned on an index, checked with
EXPLAIN over some 60,000 analyzed rows (succeeded and dead jobs, attempts, blocked and
waiting DAG tasks). No timing is asserted (bench/ measures it)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from qctl_store.postgres import PostgresStore, admin
from qctl_store.types import Source
from tests.conftest import raw_pg
from tests.postgres.conftest import plans

KINDS = 4
SUCCEEDED = 50_000
DEAD = 2_000


def seed(c: psycopg.Connection[Any]) -> None:
    # Succeeded over the last two days, one a second; dead jobs with one attempt each.
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                enqueued_at, completed_at, payload)
        SELECT gen_random_uuid(), 'queue', 'tp_' || (i %% %s), 'succeeded', now(), 1,
               now() - i * interval '3 second', now() - i * interval '3 second', '{}'
        FROM generate_series(1, %s) AS i
        """,
        (KINDS, SUCCEEDED),
    )
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                enqueued_at, failed_at, last_error, payload)
        SELECT gen_random_uuid(), 'queue', 'tp_' || (i %% %s), 'dead', now(), 1,
               now() - i * interval '60 second', now() - i * interval '60 second',
               'boom', '{}'
        FROM generate_series(1, %s) AS i
        """,
        (KINDS, DEAD),
    )
    c.execute(
        """
        INSERT INTO azync_job_attempts (job_id, attempt, error, failed_at)
        SELECT id, 1, last_error, failed_at FROM azync_jobs WHERE state = 'dead'
        ORDER BY failed_at
        """
    )
    c.execute(
        "INSERT INTO azync_stats_daily (source, kind, day, enqueued) "
        "SELECT 'queue', 'tp_' || i, CURRENT_DATE, 1 FROM generate_series(0, %s) i",
        (KINDS - 1,),
    )
    c.execute(
        """
        INSERT INTO azync_dags (id, name, on_failure) SELECT gen_random_uuid(), 'tp', 'cancel'
        FROM generate_series(1, 50)
        """
    )
    c.execute(
        """
        INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                enqueued_at, payload, dag_id, task_key)
        SELECT gen_random_uuid(), 'dag', 'tp_task', s, now(), 1, now(), '{}', d.id, s
        FROM azync_dags d, unnest(ARRAY['blocked', 'waiting']) AS s
        """
    )


def test_throughput_reads_index_ranges(
    store: PostgresStore,
    statements: list[tuple[str, Any]],
) -> None:
    rows = store.throughput(Source.QUEUE, timedelta(hours=1), timedelta(minutes=1))
    assert {r.kind for r in rows} == {f"tp_{i}" for i in range(KINDS)}
    processed = sum(r.processed for r in rows)
    assert 1150 <= processed <= 1250  # one every 3 s over the hour (bucket edges aside)
    assert 55 <= sum(r.failed for r in rows) <= 61
    assert sum(r.enqueued for r in rows) >= processed
    text = "\n".join(plans(store, statements))
    assert not re.search(r"Seq Scan on azync_jobs\b", text), text
    assert not re.search(r"Seq Scan on azync_job_attempts\b", text), text
    for index in ("succeeded", "dead", "pending"):
        assert f"azync_jobs_{index}_idx" in text, text
    assert "azync_job_attempts_pkey" in text, text
    probes = [sql for sql, _ in statements if "FROM azync_job_attempts WHERE id >=" in sql]
    assert len(probes) <= 16  # a binary search over some 2,000 attempt ids


def test_live_depths_count_blocked_and_waiting_on_their_indexes(
    store: PostgresStore,
    statements: list[tuple[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(admin, "ESTIMATE_THRESHOLD", 1000)
    depths, estimated = store.live_depths(Source.DAG)
    assert estimated
    assert (depths["tp_task"].blocked, depths["tp_task"].waiting) == (50, 50)
    text = "\n".join(plans(store, statements))
    assert not re.search(r"Seq Scan on azync_jobs\b", text), text


def test_throughput_counts_blocked_and_waiting_tasks_on_their_indexes(
    store: PostgresStore,
    statements: list[tuple[str, Any]],
) -> None:
    rows = store.throughput(Source.DAG, timedelta(hours=1), timedelta(hours=1), kind="tp_task")
    assert sum(r.enqueued for r in rows) == 100  # 50 blocked and 50 waiting tasks
    text = "\n".join(plans(store, statements))
    assert not re.search(r"Seq Scan on azync_jobs\b", text), text
    assert "azync_jobs_dag_blocked_idx" in text and "azync_jobs_dag_waiting_idx" in text, text


def test_throughput_counts_unindexed_states_on_the_console_indexes_once_tuned(
    store: PostgresStore,
    statements: list[tuple[str, Any]],
) -> None:
    unindexed = list(admin.UNINDEXED_STATES)
    hour = timedelta(hours=1)
    with raw_pg(store.schema) as c:
        c.execute(
            """
            INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts,
                                    enqueued_at, completed_at, payload)
            SELECT gen_random_uuid(), 'queue', 'tp_late', s, now(), 1, now(),
                   CASE WHEN s = 'skipped' THEN now() END, '{}'
            FROM unnest(%s::text[]) AS s, generate_series(1, 5)
            """,
            ([s.value for s in unindexed],),
        )
        c.execute("ANALYZE azync_jobs")
    assert store.throughput_omits() == unindexed
    untuned = store.throughput(Source.QUEUE, hour, hour, kind="tp_late")
    assert sum(r.enqueued for r in untuned) == 0  # left out, and said so
    assert store.tune() == list(admin.CONSOLE_INDEXES)
    try:
        assert store.throughput_omits() == []
        statements.clear()
        rows = store.throughput(Source.QUEUE, hour, hour, kind="tp_late")
        assert sum(r.enqueued for r in rows) == 5 * len(unindexed)
        text = "\n".join(plans(store, statements))
        assert not re.search(r"Seq Scan on azync_jobs\b", text), text
        for state in unindexed:
            assert admin.STATE_INDEXES[state] in text, text
    finally:
        with raw_pg(store.schema) as c:
            for name in admin.CONSOLE_INDEXES:
                c.execute(f"DROP INDEX {name}")
            c.execute("DELETE FROM azync_jobs WHERE kind = 'tp_late'")
