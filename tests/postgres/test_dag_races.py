"""azync's DAG race tests (``driver/azyncpgx/integration/dag_race_test.go``) on PostgreSQL.

Each test holds an open transaction that has made a competing change under the DAG
header's row lock, starts the verb under test in a thread, sleeps 300ms so the verb
blocks on that lock, then commits: the verb must observe the committed winner and
never overwrite it.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from qctl_kit.errors import NotFound
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    KIND_SIGNAL,
    DAGDep,
    DAGParams,
    DAGSignalParams,
    DAGState,
    DAGTask,
    JobState,
    OnFailurePolicy,
    Source,
)
from tests.conformance.helpers import dag_task_by_key, finish_wf_task, kill_wf_task, wf_task
from tests.conftest import PG_DSN

RACE_WAIT = 0.3


@pytest.fixture
def competitor(pg_schema: str) -> Iterator[psycopg.Connection[Any]]:
    """A second session on the module's schema, for the competing transaction."""
    with psycopg.connect(PG_DSN, options=f"-c search_path={pg_schema}") as conn:
        yield conn


def run_blocked(verb: Callable[[], object], commit: Callable[[], None]) -> object:
    """Start ``verb`` in a thread, let it block on the held lock, commit the competing
    transaction, and return what the verb returned (or the exception it raised)."""
    out: list[object] = []

    def call() -> None:
        try:
            out.append(verb())
        except Exception as exc:
            out.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    time.sleep(RACE_WAIT)
    assert worker.is_alive(), "the verb must block on the DAG header lock"
    commit()
    worker.join(10)
    assert not worker.is_alive(), "the verb never returned"
    return out[0]


def begin_compensate(conn: psycopg.Connection[Any], dag_id: uuid.UUID, comp_kind: str) -> None:
    """What a winning cancel policy or CompensateDAG does, left uncommitted."""
    row = conn.execute("SELECT state FROM azync_dags WHERE id = %s FOR UPDATE", (dag_id,))
    assert row.fetchone() == ("running",)
    conn.execute(
        "INSERT INTO azync_jobs (id, source, kind, state, run_at, max_attempts, payload,"
        " enqueued_at, dag_id, task_key) VALUES (%s, 'dag', %s, 'pending', now(), 3,"
        " '{}'::jsonb, now(), %s, 'comp:a')",
        (uuid.uuid4(), comp_kind, dag_id),
    )
    conn.execute(
        "UPDATE azync_dags SET state = 'compensating', failure_reason = 'dead tasks: c',"
        " updated_at = now() WHERE id = %s",
        (dag_id,),
    )


def create(store: PostgresStore, p: DAGParams) -> uuid.UUID:
    assert store.create_dag(p) == (True, None)
    return p.id


def test_cancel_dag_losing_the_settle_race_is_not_found(
    store: PostgresStore, competitor: psycopg.Connection[Any]
) -> None:
    dag_id = create(store, DAGParams(name="race-cancel", tasks=[wf_task("a", "race_cn_a")]))
    finish_wf_task(store, "race_cn_a")

    competitor.execute(
        "UPDATE azync_dags SET state = 'succeeded', completed_at = now(), updated_at = now()"
        " WHERE id = %s",
        (dag_id,),
    )
    result = run_blocked(lambda: store.cancel_dag(dag_id), competitor.commit)
    assert isinstance(result, NotFound), f"a cancel that lost the race must be NotFound: {result}"
    assert store.get_dag(dag_id).state == DAGState.SUCCEEDED


def test_retry_dag_losing_the_policy_race_resets_only_compensations(
    store: PostgresStore, competitor: psycopg.Connection[Any]
) -> None:
    dag_id = create(
        store,
        DAGParams(
            name="race-retry",
            on_failure=OnFailurePolicy.CANCEL,
            tasks=[
                wf_task(
                    "a",
                    "race_rt_a",
                    compensation_kind="race_rt_undo_a",
                    compensation_payload={"undo": "a"},
                ),
                wf_task("c", "race_rt_c", max_attempts=1),
            ],
        ),
    )
    finish_wf_task(store, "race_rt_a")
    kill_wf_task(store, "race_rt_c")

    begin_compensate(competitor, dag_id, "race_rt_undo_a")
    result = run_blocked(lambda: store.retry_dag(dag_id), competitor.commit)
    assert result is None, f"the retry must succeed: {result}"
    assert store.get_dag(dag_id).state == DAGState.COMPENSATING
    assert dag_task_by_key(store, dag_id, "c").state == JobState.DEAD


def test_apply_failure_policy_losing_the_compensate_race_skips(
    store: PostgresStore, competitor: psycopg.Connection[Any]
) -> None:
    dag_id = create(
        store,
        DAGParams(
            name="race-suspend",
            on_failure=OnFailurePolicy.SUSPEND,
            tasks=[
                wf_task("a", "race_sp_a", compensation_kind="race_sp_undo_a"),
                wf_task("c", "race_sp_c", max_attempts=1),
            ],
        ),
    )
    finish_wf_task(store, "race_sp_a")
    kill_wf_task(store, "race_sp_c")

    begin_compensate(competitor, dag_id, "race_sp_undo_a")
    result = run_blocked(store.apply_failure_policy, competitor.commit)
    assert isinstance(result, list), f"the policy pass must not fail: {result}"
    assert all(f.dag_id != dag_id for f in result), "a losing pass must not report the DAG"
    assert store.get_dag(dag_id).state == DAGState.COMPENSATING
    assert dag_task_by_key(store, dag_id, "comp:a").source == Source.DAG


def test_buffered_delivery_losing_the_signal_race_keeps_the_winner(
    store: PostgresStore, competitor: psycopg.Connection[Any]
) -> None:
    # Not one of azync's three: the open transaction is a concurrent immediate Signal
    # that completed the waiting task. The buffered pass, which picked the task while it
    # still waited, must re-check its state under the row lock: it neither overwrites the
    # winner's result nor consumes the older buffered signal.
    dag_id = create(
        store,
        DAGParams(
            name="race-deliver",
            tasks=[
                wf_task("gate", "race_dl_gate"),
                DAGTask(key="approval", kind=KIND_SIGNAL, payload=None, signal_name="approval"),
            ],
            deps=[DAGDep("approval", "gate")],
        ),
    )
    assert store.signal(DAGSignalParams(dag_id, "approval", payload={"by": "buffered"})) == (
        0,
        False,
    )
    finish_wf_task(store, "race_dl_gate")
    store.promote_unblocked()
    assert dag_task_by_key(store, dag_id, "approval").state == JobState.WAITING

    competitor.execute(
        "UPDATE azync_jobs SET state = 'succeeded', result = '{\"by\": \"live\"}'::jsonb,"
        " completed_at = now(), updated_at = now() WHERE dag_id = %s AND task_key = 'approval'",
        (dag_id,),
    )
    result = run_blocked(store.deliver_buffered_signals, competitor.commit)
    assert result == 0, f"nothing is left to deliver to: {result}"
    assert dag_task_by_key(store, dag_id, "approval").result == {"by": "live"}
    unconsumed = competitor.execute(
        "SELECT count(*) FROM azync_dag_signals WHERE dag_id = %s AND NOT consumed", (dag_id,)
    ).fetchone()
    assert unconsumed == (1,), "the buffered signal was not handed to anyone"
