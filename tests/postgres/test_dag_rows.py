"""The rows qctl writes for a DAG are exactly the rows azync's ``createDAG`` (and its
compensation insert) write for the same DAGParams, column by column, so a Go worker
can run a DAG qctl created and the other way round (azync's ``dag_store.go``)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from qctl_kit.errors import NotFound
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    KIND_SIGNAL,
    KIND_SLEEP,
    DAGDep,
    DAGParams,
    DAGSignalParams,
    DAGTask,
    OnFailurePolicy,
)
from tests.conformance.helpers import finish_wf_task, kill_wf_task
from tests.conftest import PG_DSN

Row = dict[str, Any]


@pytest.fixture
def db(pg_schema: str) -> Iterator[psycopg.Connection[Row]]:
    with psycopg.connect(
        PG_DSN, autocommit=True, row_factory=dict_row, options=f"-c search_path={pg_schema}"
    ) as conn:
        yield conn


def task_rows(db: psycopg.Connection[Row], dag_id: uuid.UUID) -> dict[str, Row]:
    rows = db.execute(
        "SELECT *, payload::text AS payload_text FROM azync_jobs WHERE dag_id = %s", (dag_id,)
    ).fetchall()
    return {r["task_key"]: r for r in rows}


# Columns azync's task insert leaves at their defaults (or NULL) on every task.
UNTOUCHED = {
    "attempt": 0,
    "reap_count": 0,
    "lease_until": None,
    "lease_token": None,
    "idempotency_key": None,
    "event_id": None,
    "replay": False,
    "last_error": None,
    "failed_at": None,
    "completed_at": None,
    "result": None,
    "run_id": None,
    "deadline_at": None,
    "started_at": None,
}


def enqueued_by_kind(db: psycopg.Connection[Row]) -> dict[str, int]:
    """The stats rows' enqueued count by kind, for the kinds of the DAG below."""
    rows = db.execute(
        "SELECT kind, sum(enqueued)::int AS n FROM azync_stats_daily WHERE source = 'dag'"
        " AND kind IN ('rows_a', 'rows_b', 'rows_nil', '$sleep', '$signal') GROUP BY kind"
    ).fetchall()
    return {r["kind"]: r["n"] for r in rows}


def test_create_dag_rows_match_azync(store: PostgresStore, db: psycopg.Connection[Row]) -> None:
    p = DAGParams(
        name="rows_dag",
        on_failure="",
        idempotency_key="",
        meta={"tenant": "t1", "origin": "qctl"},
        tasks=[
            DAGTask(
                key="a",
                kind="rows_a",
                payload={"x": [1, 2]},
                max_attempts=5,
                compensation_kind="rows_undo_a",
                compensation_payload={"undo": "a"},
                deadline=timedelta(seconds=90),
            ),
            DAGTask(key="b", kind="rows_b", payload={}, max_attempts=0, ignore_dead_deps=True),
            DAGTask(key="nil", kind="rows_nil", payload=None),
            DAGTask(
                key="s", kind=KIND_SLEEP, payload={"ignored": True}, sleep_for=timedelta(hours=1)
            ),
            DAGTask(
                key="s2",
                kind=KIND_SLEEP,
                payload=None,
                sleep_for=timedelta(milliseconds=1500),
                signal_name="wake",
            ),
            DAGTask(key="s3", kind=KIND_SLEEP, payload=None, sleep_for=timedelta(milliseconds=40)),
            DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="go"),
        ],
        deps=[DAGDep("b", "a"), DAGDep("s2", "a"), DAGDep("s2", "nil")],
    )
    enqueued_before = Counter(enqueued_by_kind(db))
    assert store.create_dag(p) == (True, None)

    header = db.execute("SELECT * FROM azync_dags WHERE id = %s", (p.id,)).fetchone()
    assert header is not None
    assert header["name"] == "rows_dag"
    assert header["state"] == "running"
    assert header["on_failure"] == "cancel", "an empty policy is stored as cancel"
    assert header["idempotency_key"] is None, "an empty key is NULL (outside the live index)"
    assert header["failure_reason"] is None
    assert header["cancel_requested"] is False
    assert header["meta"] == {"tenant": "t1", "origin": "qctl"}
    assert header["created_at"] == header["updated_at"]
    assert header["completed_at"] is None

    rows = task_rows(db, p.id)
    assert set(rows) == {"a", "b", "nil", "s", "s2", "s3", "g"}
    now = header["created_at"]
    for key, r in rows.items():
        assert r["source"] == "dag", key
        assert r["meta"] == p.meta, key
        assert r["enqueued_at"] == now and r["created_at"] == now and r["updated_at"] == now
        assert {c: r[c] for c in UNTOUCHED} == UNTOUCHED, key

    def cols(key: str, *names: str) -> tuple[Any, ...]:
        return tuple(rows[key][n] for n in names)

    shape = (
        "kind",
        "state",
        "max_attempts",
        "max_attempts_explicit",
        "compensation_kind",
        "compensation_payload",
        "signal_name",
        "ignore_dead_deps",
        "snooze_budget",
    )
    assert cols("a", *shape) == (
        "rows_a",
        "pending",
        5,
        True,
        "rows_undo_a",
        {"undo": "a"},
        None,
        False,
        90.0,
    )
    assert cols("b", *shape) == ("rows_b", "blocked", 0, False, None, None, None, True, None)
    assert cols("nil", *shape) == ("rows_nil", "pending", 0, False, None, None, None, False, None)
    # A timer without a signal name is named after its key, as azync's DAG client names it.
    assert cols("s", *shape) == (KIND_SLEEP, "scheduled", 0, False, None, None, "s", False, None)
    assert cols("s2", *shape) == (KIND_SLEEP, "blocked", 0, False, None, None, "wake", False, None)
    assert cols("s3", *shape) == (KIND_SLEEP, "scheduled", 0, False, None, None, "s3", False, None)
    assert cols("g", *shape) == (KIND_SIGNAL, "waiting", 0, False, None, None, "go", False, None)

    # Payloads: handler payloads verbatim, nil as SQL NULL, timers replaced by their
    # duration in Go's float encoding.
    assert rows["a"]["payload"] == {"x": [1, 2]}
    assert rows["b"]["payload_text"] == "{}"
    assert rows["nil"]["payload"] is None
    assert rows["g"]["payload"] is None
    assert rows["s"]["payload_text"] == '{"sleepSeconds": 3600}'
    assert rows["s2"]["payload_text"] == '{"sleepSeconds": 1.5}'
    assert rows["s3"]["payload_text"] == '{"sleepSeconds": 0.04}'

    # run_at: only a root timer starts at creation.
    assert rows["s"]["run_at"] == now + timedelta(hours=1)
    assert rows["s3"]["run_at"] == now + timedelta(milliseconds=40)
    for key in ("a", "b", "nil", "s2", "g"):
        assert rows[key]["run_at"] == now, key

    deps = db.execute(
        "SELECT task_key, depends_on_key FROM azync_dag_deps WHERE dag_id = %s"
        " ORDER BY task_key, depends_on_key",
        (p.id,),
    ).fetchall()
    assert [(d["task_key"], d["depends_on_key"]) for d in deps] == [
        ("b", "a"),
        ("s2", "a"),
        ("s2", "nil"),
    ]

    # Counted from before this DAG: the module's other tests create sleeps and signals.
    assert Counter(enqueued_by_kind(db)) - enqueued_before == {
        "rows_a": 1,
        "rows_b": 1,
        "rows_nil": 1,
        KIND_SLEEP: 3,
        KIND_SIGNAL: 1,
    }


def test_idempotency_key_is_stored_and_dedupes(
    store: PostgresStore, db: psycopg.Connection[Row]
) -> None:
    p = DAGParams(
        name="rows_key",
        idempotency_key="k-1",
        on_failure=OnFailurePolicy.SUSPEND,
        tasks=[DAGTask(key="a", kind="rows_key_a")],
    )
    assert store.create_dag(p) == (True, None)
    header = db.execute("SELECT * FROM azync_dags WHERE id = %s", (p.id,)).fetchone()
    assert header is not None
    assert (header["idempotency_key"], header["on_failure"]) == ("k-1", "suspend")
    dup = DAGParams(name="rows_key", idempotency_key="k-1", tasks=[DAGTask("a", "rows_key_a")])
    assert store.create_dag(dup) == (False, p.id)
    assert db.execute(
        "SELECT count(*) AS n FROM azync_dags WHERE name = 'rows_key'"
    ).fetchone() == {"n": 1}


def test_compensation_rows_copy_the_original(
    store: PostgresStore, db: psycopg.Connection[Row]
) -> None:
    p = DAGParams(
        name="rows_comp",
        meta={"tenant": "t2"},
        tasks=[
            DAGTask(
                key="a",
                kind="rows_comp_a",
                max_attempts=4,
                compensation_kind="rows_undo",
                compensation_payload={"undo": 1},
                signal_name="sig",
                deadline=timedelta(minutes=5),
            ),
            DAGTask(key="c", kind="rows_comp_c", max_attempts=1),
        ],
    )
    store.create_dag(p)
    finish_wf_task(store, "rows_comp_a")
    kill_wf_task(store, "rows_comp_c")
    store.apply_failure_policy()

    comp = task_rows(db, p.id)["comp:a"]
    assert (comp["source"], comp["kind"], comp["state"]) == ("dag", "rows_undo", "pending")
    assert comp["payload"] == {"undo": 1}
    assert comp["meta"] == {"tenant": "t2"}
    assert (comp["max_attempts"], comp["max_attempts_explicit"]) == (4, True)
    for col in ("compensation_kind", "compensation_payload", "signal_name", "snooze_budget"):
        assert comp[col] is None, col
    assert comp["ignore_dead_deps"] is False
    assert comp["enqueued_at"] == comp["run_at"] == comp["created_at"]
    header = db.execute("SELECT * FROM azync_dags WHERE id = %s", (p.id,)).fetchone()
    assert header is not None
    assert (header["state"], header["failure_reason"]) == ("compensating", "dead tasks: c")


# --- wakes: NOTIFY dag:<kind> inside the transaction, for tasks born or made
# pending; never for the internal kinds --------------------------------------------------


@pytest.fixture
def listener(store: PostgresStore) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'LISTEN "{store.config.channel}"')
        yield conn


def wakes(listener: psycopg.Connection[Any], timeout: float = 0.5) -> set[str]:
    return {n.payload for n in listener.notifies(timeout=timeout)}


def test_wakes_follow_the_tasks_that_become_pending(
    store: PostgresStore, listener: psycopg.Connection[Any]
) -> None:
    p = DAGParams(
        name="rows_wake",
        tasks=[
            DAGTask(key="a", kind="wake_a", compensation_kind="wake_undo_a"),
            DAGTask(key="b", kind="wake_b", max_attempts=1),
            DAGTask(key="s", kind=KIND_SLEEP, sleep_for=timedelta(hours=1)),
            DAGTask(key="g", kind=KIND_SIGNAL, signal_name="g"),
            DAGTask(key="z", kind=KIND_SLEEP, sleep_for=timedelta(hours=1)),
        ],
        deps=[DAGDep("b", "a"), DAGDep("z", "a")],
    )
    store.create_dag(p)
    assert wakes(listener) == {"dag:wake_a"}, "only tasks born pending wake workers"

    finish_wf_task(store, "wake_a")
    wakes(listener)
    store.promote_unblocked()
    assert wakes(listener) == {"dag:wake_b"}, "a promoted timer wakes nobody"

    kill_wf_task(store, "wake_b")
    store.apply_failure_policy()
    assert wakes(listener) == {"dag:wake_undo_a"}, "the first compensation wakes its kind"

    kill_wf_task(store, "wake_undo_a")
    store.complete_dags()
    wakes(listener)
    store.retry_dag(p.id)
    assert wakes(listener) == {"dag:wake_undo_a"}, "a retried dead task wakes its kind"


def test_unpause_wakes_and_signals_do_not(
    store: PostgresStore, listener: psycopg.Connection[Any]
) -> None:
    p = DAGParams(
        name="rows_wake_pause",
        tasks=[
            DAGTask(key="w", kind="wake_p_w"),
            DAGTask(key="g", kind=KIND_SIGNAL, signal_name="wake_p_go"),
        ],
    )
    store.create_dag(p)
    assert wakes(listener) == {"dag:wake_p_w"}
    store.pause_dag(p.id, "outage")
    assert store.signal(DAGSignalParams(dag_id=p.id, name="wake_p_go")) == (1, False)
    assert wakes(listener) == set(), "pausing and signalling wake nobody"
    store.retry_dag(p.id)
    assert wakes(listener) == {"dag:wake_p_w"}, "an unpaused runnable task wakes its kind"


def test_create_dag_tx_commits_and_rolls_back_with_the_caller(
    store: PostgresStore, listener: psycopg.Connection[Any]
) -> None:
    def params() -> DAGParams:
        return DAGParams(name="rows_tx", tasks=[DAGTask(key="a", kind="rows_tx_a")])

    rolled_back = params()
    with psycopg.connect(PG_DSN) as caller:
        assert store.create_dag_tx(caller, rolled_back) == (True, None)
        caller.rollback()
    with pytest.raises(NotFound):
        store.get_dag(rolled_back.id)
    assert wakes(listener) == set(), "a rolled-back create wakes nobody"

    committed = params()
    with psycopg.connect(PG_DSN) as caller:
        path = caller.execute("SHOW search_path").fetchone()
        assert store.create_dag_tx(caller, committed) == (True, None)
        assert caller.execute("SHOW search_path").fetchone() == path
        assert wakes(listener, 0.3) == set(), "nothing is delivered before the commit"
        caller.commit()
    assert store.get_dag(committed.id).state == "running"
    assert wakes(listener) == {"dag:rows_tx_a"}
