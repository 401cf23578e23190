"""azync's ``RunDAGConformance`` (``driver/drivertest/dag_conformance.go``) on both backends.

One test per subtest, in azync's order, sharing the module's store as the Go suite
shares one: DAG names and kinds are unique per test, and the set-based scheduler
passes are asserted only through each test's own DAG (``dag_tasks``/``get_dag``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from qctl_kit.errors import InvalidInput, NotFound
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    KIND_SIGNAL,
    KIND_SLEEP,
    TASK_KEY_COMPENSATION_PREFIX,
    DAGDep,
    DAGFilter,
    DAGParams,
    DAGSignalParams,
    DAGState,
    DAGTask,
    DequeueParams,
    JobState,
    OnFailurePolicy,
    Source,
)
from tests.conformance.helpers import (
    MINUTE,
    REAP_LEASE,
    REAP_WAIT,
    TICK,
    AnyStore,
    apply_policy_for,
    dag_task_by_key,
    dag_view,
    dequeue_n,
    enqueue_due,
    finish_wf_task,
    host_now,
    kill_wf_task,
    lease_one,
    token,
    wf_task,
)
from tests.conftest import PG_DSN

HOUR = timedelta(hours=1)


def create_wf(store: AnyStore, name: str, tasks: list[DAGTask], **params: object) -> uuid.UUID:
    """CreateDAG with a fresh id; it must be inserted."""
    p = DAGParams(name=name, tasks=tasks, **params)  # type: ignore[arg-type]
    inserted, _ = store.create_dag(p)
    assert inserted is True
    return p.id


def state_of(store: AnyStore, dag_id: uuid.UUID, key: str) -> JobState:
    return dag_task_by_key(store, dag_id, key).state


def dag_state(store: AnyStore, dag_id: uuid.UUID) -> DAGState:
    return dag_view(store, dag_id).state


def edges(*pairs: tuple[str, str]) -> list[DAGDep]:
    return [DAGDep(task_key=a, depends_on_key=b) for a, b in pairs]


def signal(
    store: AnyStore, dag_id: uuid.UUID, name: str, payload: object = None, message_id: str = ""
) -> tuple[int, bool]:
    return store.signal(
        DAGSignalParams(dag_id=dag_id, name=name, payload=payload, message_id=message_id)
    )


# --- Create / Dedupe ------------------------------------------------------------------------


def test_create(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_create",
        [
            wf_task("a", "wfc_create_a"),
            wf_task("b", "wfc_create_b"),
            DAGTask(key="s", kind=KIND_SLEEP, payload=None, sleep_for=HOUR),
            DAGTask(key="s2", kind=KIND_SLEEP, payload=None, sleep_for=HOUR),
            DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="go"),
        ],
        deps=edges(("b", "a"), ("s2", "a")),
        on_failure=OnFailurePolicy.CANCEL,
        meta={"tenant": "t1"},
    )
    assert state_of(store, dag_id, "a") == JobState.PENDING
    assert state_of(store, dag_id, "b") == JobState.BLOCKED
    s = dag_task_by_key(store, dag_id, "s")
    assert s.state == JobState.SCHEDULED
    assert s.run_at is not None and s.run_at > host_now() + timedelta(minutes=30)
    s2 = dag_task_by_key(store, dag_id, "s2")
    assert s2.state == JobState.BLOCKED
    assert s2.run_at is not None and s2.run_at < host_now() + timedelta(minutes=30)
    assert state_of(store, dag_id, "g") == JobState.WAITING

    w = dag_view(store, dag_id)
    assert w.state == DAGState.RUNNING
    assert w.on_failure == OnFailurePolicy.CANCEL
    assert w.meta == {"tenant": "t1"}
    assert w.created_at is not None
    assert w.completed_at is None

    a = dag_task_by_key(store, dag_id, "a")
    assert a.source == Source.DAG
    assert a.dag_id == dag_id
    assert a.meta == {"tenant": "t1"}

    with pytest.raises(NotFound):
        store.get_dag(uuid.uuid4())
    with pytest.raises(NotFound):
        store.dag_tasks(uuid.uuid4())

    views, total = store.list_dags(DAGFilter(name="wfc_create"), 0, 10)
    assert total == 1
    assert [v.id for v in views] == [dag_id]


def test_dedupe(store: AnyStore) -> None:
    def params() -> DAGParams:
        return DAGParams(
            name="wfc_dedupe",
            idempotency_key="k1",
            on_failure="",
            tasks=[wf_task("a", "wfc_dedupe_a")],
        )

    first = params()
    assert store.create_dag(first) == (True, None)
    assert dag_view(store, first.id).on_failure == OnFailurePolicy.CANCEL

    inserted, existing = store.create_dag(params())
    assert inserted is False
    assert existing == first.id

    finish_wf_task(store, "wfc_dedupe_a")
    store.complete_dags()
    assert dag_state(store, first.id) == DAGState.SUCCEEDED

    inserted, _ = store.create_dag(params())
    assert inserted is True, "a terminal workflow frees the idempotency key"


# --- PromoteUnblocked / sleeps / signals ----------------------------------------------------


def test_promotion_cascade(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_cascade",
        [wf_task(k, f"wfc_cas_{k}") for k in "abcd"],
        deps=edges(("b", "a"), ("c", "a"), ("d", "b"), ("d", "c")),
    )
    finish_wf_task(store, "wfc_cas_a")
    store.promote_unblocked()
    assert state_of(store, dag_id, "b") == JobState.PENDING
    assert state_of(store, dag_id, "c") == JobState.PENDING
    assert state_of(store, dag_id, "d") == JobState.BLOCKED

    finish_wf_task(store, "wfc_cas_b")
    store.promote_unblocked()
    assert state_of(store, dag_id, "d") == JobState.BLOCKED, "the fan-in still waits for c"

    finish_wf_task(store, "wfc_cas_c")
    store.promote_unblocked()
    assert state_of(store, dag_id, "d") == JobState.PENDING


def test_sleep(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_sleep",
        [
            DAGTask(key="short", kind=KIND_SLEEP, payload=None, sleep_for=REAP_LEASE),
            DAGTask(key="long", kind=KIND_SLEEP, payload=None, sleep_for=HOUR, signal_name="hurry"),
        ],
    )
    time.sleep(REAP_WAIT)
    store.complete_due_sleeps()
    short = dag_task_by_key(store, dag_id, "short")
    assert short.state == JobState.SUCCEEDED
    assert short.completed_at is not None
    assert state_of(store, dag_id, "long") == JobState.SCHEDULED

    assert signal(store, dag_id, "hurry") == (1, False)
    store.complete_due_sleeps()
    assert state_of(store, dag_id, "long") == JobState.SUCCEEDED


def test_signal(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_signal",
        [DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="approved")],
    )
    assert signal(store, dag_id, "other", {}) == (0, False), "an unmatched name buffers"

    payload = {"by": "ops"}
    assert signal(store, dag_id, "approved", payload) == (1, False)
    g = dag_task_by_key(store, dag_id, "g")
    assert g.state == JobState.SUCCEEDED
    assert g.result == payload

    delivered, _ = signal(store, dag_id, "approved", payload)
    assert delivered == 0, "a completed signal task never re-delivers"

    assert store.task_results(dag_id, ["g"])["g"].result == payload


# --- ApplyFailurePolicy ---------------------------------------------------------------------


def test_failure_policy_cancel(store: AnyStore) -> None:
    a = wf_task(
        "a", "wfc_fpc_a", compensation_kind="wfc_fpc_undo_a", compensation_payload={"undo": "a"}
    )
    b = wf_task(
        "b", "wfc_fpc_b", compensation_kind="wfc_fpc_undo_b", compensation_payload={"undo": "b"}
    )
    c = wf_task("c", "wfc_fpc_c", max_attempts=1)
    dag_id = create_wf(
        store,
        "wfc_fpc",
        [a, b, c, wf_task("d", "wfc_fpc_d")],
        deps=edges(("d", "c")),
        on_failure=OnFailurePolicy.CANCEL,
    )
    finish_wf_task(store, "wfc_fpc_a")
    time.sleep(TICK)
    finish_wf_task(store, "wfc_fpc_b")
    kill_wf_task(store, "wfc_fpc_c")

    failure = apply_policy_for(store, dag_id)
    assert failure.policy == OnFailurePolicy.CANCEL
    assert failure.dead_tasks == ["c"]

    w = dag_view(store, dag_id)
    assert w.state == DAGState.COMPENSATING
    assert "c" in w.failure_reason
    assert state_of(store, dag_id, "d") == JobState.CANCELLED

    comp_b = dag_task_by_key(store, dag_id, "comp:b")
    assert comp_b.state == JobState.PENDING
    assert comp_b.kind == "wfc_fpc_undo_b"
    assert comp_b.payload == {"undo": "b"}
    comp_a = dag_task_by_key(store, dag_id, "comp:a")
    assert comp_a.state == JobState.BLOCKED, "the older compensation waits for the newer one"
    assert comp_a.kind == "wfc_fpc_undo_a"

    finish_wf_task(store, "wfc_fpc_undo_b")
    store.promote_unblocked()
    finish_wf_task(store, "wfc_fpc_undo_a")
    store.complete_dags()
    w = dag_view(store, dag_id)
    assert w.state == DAGState.FAILED
    assert w.completed_at is not None


def test_failure_policy_suspend_and_retry(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_fps",
        [wf_task("a", "wfc_fps_a", max_attempts=1), wf_task("b", "wfc_fps_b")],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    kill_wf_task(store, "wfc_fps_a")
    failure = apply_policy_for(store, dag_id)
    assert failure.policy == OnFailurePolicy.SUSPEND
    assert failure.dead_tasks == ["a"]

    w = dag_view(store, dag_id)
    assert w.state == DAGState.SUSPENDED
    assert "a" in w.failure_reason
    assert state_of(store, dag_id, "b") == JobState.PENDING, "suspend leaves the tasks untouched"

    store.retry_dag(dag_id)
    assert dag_state(store, dag_id) == DAGState.RUNNING
    retried = dag_task_by_key(store, dag_id, "a")
    assert retried.state == JobState.PENDING
    assert retried.attempt == 0
    assert retried.reap_count == 0

    with pytest.raises(NotFound):
        store.retry_dag(uuid.uuid4())


def test_failure_policy_mixed_ignore_dead_deps(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_mix",
        [
            wf_task("dead", "wfc_mix_dead", max_attempts=1),
            wf_task("tol", "wfc_mix_tol", ignore_dead_deps=True),
            wf_task("strict", "wfc_mix_strict"),
        ],
        deps=edges(("tol", "dead"), ("strict", "dead")),
        on_failure=OnFailurePolicy.SUSPEND,
    )
    kill_wf_task(store, "wfc_mix_dead")
    failure = apply_policy_for(store, dag_id)
    assert failure.policy == OnFailurePolicy.SUSPEND
    assert failure.dead_tasks == ["dead"]
    w = dag_view(store, dag_id)
    assert w.state == DAGState.SUSPENDED
    assert "dead" in w.failure_reason


def test_failure_policy_fully_ignored_completes_failed(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_all",
        [
            wf_task("dead", "wfc_all_dead", max_attempts=1),
            wf_task("tol", "wfc_all_tol", ignore_dead_deps=True),
        ],
        deps=edges(("tol", "dead")),
        on_failure=OnFailurePolicy.CANCEL,
    )
    kill_wf_task(store, "wfc_all_dead")
    assert all(f.dag_id != dag_id for f in store.apply_failure_policy())
    assert dag_state(store, dag_id) == DAGState.RUNNING

    store.promote_unblocked()
    assert state_of(store, dag_id, "tol") == JobState.PENDING
    finish_wf_task(store, "wfc_all_tol")

    store.complete_dags()
    w = dag_view(store, dag_id)
    assert w.state == DAGState.FAILED, "a tolerated dead task still settles failed"
    assert "dead" in w.failure_reason
    assert w.completed_at is not None


def test_failure_policy_dead_leaf_triggers(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_leaf",
        [wf_task("leaf", "wfc_leaf_dead", max_attempts=1), wf_task("other", "wfc_leaf_other")],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    kill_wf_task(store, "wfc_leaf_dead")
    failure = apply_policy_for(store, dag_id)
    assert failure.policy == OnFailurePolicy.SUSPEND
    assert failure.dead_tasks == ["leaf"]
    assert dag_state(store, dag_id) == DAGState.SUSPENDED


# --- CompleteDAGs ---------------------------------------------------------------------------


def test_complete_dags(store: AnyStore) -> None:
    dag_id = create_wf(store, "wfc_done", [wf_task("a", "wfc_done_a"), wf_task("b", "wfc_done_b")])
    finish_wf_task(store, "wfc_done_a")
    store.complete_dags()
    assert dag_state(store, dag_id) == DAGState.RUNNING

    finish_wf_task(store, "wfc_done_b")
    store.complete_dags()
    w = dag_view(store, dag_id)
    assert w.state == DAGState.SUCCEEDED
    assert w.completed_at is not None


def test_complete_dags_defers_non_tolerated_dead(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_defer",
        [
            wf_task(
                "a",
                "wfc_defer_a",
                compensation_kind="wfc_defer_undo_a",
                compensation_payload={"undo": "a"},
            ),
            wf_task("c", "wfc_defer_c", max_attempts=1),
        ],
        on_failure=OnFailurePolicy.CANCEL,
    )
    finish_wf_task(store, "wfc_defer_a")
    kill_wf_task(store, "wfc_defer_c")

    store.complete_dags()
    assert dag_state(store, dag_id) == DAGState.RUNNING, "left running for the policy"

    failure = apply_policy_for(store, dag_id)
    assert failure.policy == OnFailurePolicy.CANCEL
    assert failure.dead_tasks == ["c"]
    assert dag_state(store, dag_id) == DAGState.COMPENSATING
    comp_a = dag_task_by_key(store, dag_id, "comp:a")
    assert comp_a.state == JobState.PENDING
    assert comp_a.kind == "wfc_defer_undo_a"

    finish_wf_task(store, "wfc_defer_undo_a")
    store.complete_dags()
    w = dag_view(store, dag_id)
    assert w.state == DAGState.FAILED
    assert "c" in w.failure_reason
    assert w.completed_at is not None


# --- manager verbs --------------------------------------------------------------------------


def test_cancel_dag(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_cn",
        [wf_task("a", "wfc_cn_a", compensation_kind="wfc_cn_undo_a"), wf_task("b", "wfc_cn_b")],
        deps=edges(("b", "a")),
    )
    store.cancel_dag(dag_id)
    w = dag_view(store, dag_id)
    assert w.state == DAGState.CANCELLED
    assert w.completed_at is not None
    assert state_of(store, dag_id, "a") == JobState.CANCELLED
    assert state_of(store, dag_id, "b") == JobState.CANCELLED
    assert len(store.dag_tasks(dag_id)) == 2, "cancel inserts no compensations"

    with pytest.raises(NotFound):
        store.cancel_dag(dag_id)
    with pytest.raises(NotFound):
        store.cancel_dag(uuid.uuid4())


def test_compensate_dag_manual(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_cmp",
        [
            wf_task(
                "a",
                "wfc_cmp_a",
                compensation_kind="wfc_cmp_undo_a",
                compensation_payload={"undo": "a"},
            ),
            wf_task("b", "wfc_cmp_b", max_attempts=1),
        ],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    finish_wf_task(store, "wfc_cmp_a")
    kill_wf_task(store, "wfc_cmp_b")
    assert apply_policy_for(store, dag_id).policy == OnFailurePolicy.SUSPEND
    assert dag_state(store, dag_id) == DAGState.SUSPENDED

    store.compensate_dag(dag_id)
    assert dag_state(store, dag_id) == DAGState.COMPENSATING
    comp_a = dag_task_by_key(store, dag_id, "comp:a")
    assert comp_a.state == JobState.PENDING
    assert comp_a.kind == "wfc_cmp_undo_a"
    assert comp_a.payload == {"undo": "a"}

    finish_wf_task(store, "wfc_cmp_undo_a")
    store.complete_dags()
    assert dag_state(store, dag_id) == DAGState.FAILED

    with pytest.raises(NotFound):
        store.compensate_dag(dag_id)
    with pytest.raises(NotFound):
        store.compensate_dag(uuid.uuid4())


def test_retry_during_compensating(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_rtc",
        [
            wf_task("a", "wfc_rtc_a", compensation_kind="wfc_rtc_undo_a"),
            wf_task("b", "wfc_rtc_b", compensation_kind="wfc_rtc_undo_b"),
            wf_task("c", "wfc_rtc_c", max_attempts=1),
            wf_task("d", "wfc_rtc_d"),
        ],
        deps=edges(("d", "c")),
        on_failure=OnFailurePolicy.CANCEL,
    )
    finish_wf_task(store, "wfc_rtc_a")
    time.sleep(TICK)
    finish_wf_task(store, "wfc_rtc_b")
    kill_wf_task(store, "wfc_rtc_c")
    assert apply_policy_for(store, dag_id).policy == OnFailurePolicy.CANCEL
    assert dag_state(store, dag_id) == DAGState.COMPENSATING

    kill_wf_task(store, "wfc_rtc_undo_b")
    assert dag_state(store, dag_id) == DAGState.COMPENSATING

    store.retry_dag(dag_id)
    assert dag_state(store, dag_id) == DAGState.COMPENSATING
    assert state_of(store, dag_id, "comp:b") == JobState.PENDING
    assert state_of(store, dag_id, "comp:a") == JobState.BLOCKED
    assert state_of(store, dag_id, "c") == JobState.DEAD, "originals never rerun"

    finish_wf_task(store, "wfc_rtc_undo_b")
    store.promote_unblocked()
    finish_wf_task(store, "wfc_rtc_undo_a")
    store.complete_dags()
    assert dag_state(store, dag_id) == DAGState.FAILED


# --- results --------------------------------------------------------------------------------


def test_task_results(store: AnyStore) -> None:
    dag_id = create_wf(store, "wfc_res", [wf_task(k, f"wfc_res_{k}") for k in "abc"])
    finish_wf_task(store, "wfc_res_a", {"n": 7})
    finish_wf_task(store, "wfc_res_b", None)

    results = store.task_results(dag_id, ["a", "b", "c"])
    assert len(results) == 2
    assert results["a"].result == {"n": 7}
    assert results["b"].result is None
    assert results["b"].skipped is False

    assert len(store.task_results(dag_id, ["a"])) == 1
    assert len(store.task_results(dag_id, None)) == 2


def test_ack_task_result_fencing(store: AnyStore) -> None:
    dag_id = create_wf(store, "wfc_fence", [wf_task("a", "wfc_fence_a")])
    job = lease_one(store, Source.DAG, "wfc_fence_a")
    with pytest.raises(NotFound):
        store.ack_task_result(job.id, uuid.uuid4(), {})
    assert state_of(store, dag_id, "a") == JobState.ACTIVE

    store.ack_task_result(job.id, token(job), {"ok": True})
    a = dag_task_by_key(store, dag_id, "a")
    assert a.state == JobState.SUCCEEDED
    assert a.result == {"ok": True}


def test_internal_kinds_stay_internal(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_internal",
        [
            wf_task("a", "wfc_int_a"),
            DAGTask(key="s", kind=KIND_SLEEP, payload=None, sleep_for=REAP_LEASE),
        ],
    )
    time.sleep(REAP_WAIT)
    store.promote_due(Source.DAG, ["wfc_int_a"])
    assert state_of(store, dag_id, "s") == JobState.SCHEDULED
    assert dequeue_n(store, Source.DAG, KIND_SLEEP, 10) == []


# --- vacuums --------------------------------------------------------------------------------


def test_vacuum(store: AnyStore) -> None:
    done = create_wf(store, "wfc_vac_done", [wf_task("a", "wfc_vac_a")])
    live = create_wf(store, "wfc_vac_live", [wf_task("a", "wfc_vac_b")])
    done_task = finish_wf_task(store, "wfc_vac_a")
    store.complete_dags()
    assert dag_state(store, done) == DAGState.SUCCEEDED

    assert store.vacuum_dags(timedelta(0)) == 0

    time.sleep(0.05)
    assert store.vacuum_dags(timedelta(milliseconds=1)) >= 1
    with pytest.raises(NotFound):
        store.get_dag(done)
    with pytest.raises(NotFound):
        store.get_job(Source.DAG, done_task.id)
    store.get_dag(live)


def test_completed_vacuum_exempts_dag_tasks(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_vac_exempt",
        [wf_task("a", "wfc_vac_exempt_a"), wf_task("b", "wfc_vac_exempt_b")],
        deps=edges(("b", "a")),
    )
    finish_wf_task(store, "wfc_vac_exempt_a", {"n": 1})
    assert state_of(store, dag_id, "b") == JobState.BLOCKED

    queue_id = enqueue_due(store, "wfc_vac_exempt_queue")
    job = lease_one(store, Source.QUEUE, "wfc_vac_exempt_queue")
    store.ack(job.id, token(job))

    time.sleep(0.05)
    assert store.vacuum_completed(Source.DAG, timedelta(milliseconds=1)) == 0
    assert store.vacuum_completed(Source.QUEUE, timedelta(milliseconds=1)) >= 1

    assert state_of(store, dag_id, "a") == JobState.SUCCEEDED
    assert store.task_results(dag_id, ["a"])["a"].result == {"n": 1}
    with pytest.raises(NotFound):
        store.get_job(Source.QUEUE, queue_id)


# --- snooze deadline ------------------------------------------------------------------------


def test_snooze_deadline_escalates_to_dead_and_the_policy_reacts(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_ddl",
        [wf_task("wait", "wfc_ddl_wait", deadline=REAP_LEASE)],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    job = lease_one(store, Source.DAG, "wfc_ddl_wait")
    assert job.deadline_at is None
    assert store.snooze(job.id, token(job), timedelta(0), "not ready") is False
    stamped = dag_task_by_key(store, dag_id, "wait")
    assert stamped.state == JobState.SCHEDULED
    assert stamped.deadline_at is not None

    time.sleep(REAP_WAIT)
    store.promote_due(Source.DAG, ["wfc_ddl_wait"])
    job = lease_one(store, Source.DAG, "wfc_ddl_wait")
    deadlined = store.snooze(
        job.id, token(job), timedelta(0), "snooze deadline exceeded: still not ready"
    )
    assert deadlined is True

    dead = dag_task_by_key(store, dag_id, "wait")
    assert dead.state == JobState.DEAD
    assert "snooze deadline exceeded" in dead.last_error
    assert len(store.job_attempts(Source.DAG, dead.id)) == 1

    assert apply_policy_for(store, dag_id).policy == OnFailurePolicy.SUSPEND
    assert dag_state(store, dag_id) == DAGState.SUSPENDED

    store.retry_dag(dag_id)
    retried = dag_task_by_key(store, dag_id, "wait")
    assert retried.state == JobState.PENDING
    assert retried.deadline_at is None
    job = lease_one(store, Source.DAG, "wfc_ddl_wait")
    assert store.snooze(job.id, token(job), timedelta(0), "not ready") is False


def test_snooze_deadline_parks_normally_before_the_deadline(store: AnyStore) -> None:
    dag_id = create_wf(store, "wfc_ddl_early", [wf_task("wait", "wfc_ddl_early", deadline=HOUR)])
    job = lease_one(store, Source.DAG, "wfc_ddl_early")
    assert job.snooze_budget == HOUR
    assert store.snooze(job.id, token(job), MINUTE, "not ready") is False
    got = dag_task_by_key(store, dag_id, "wait")
    assert got.state == JobState.SCHEDULED
    assert got.attempt == 0


# --- buffered signals -----------------------------------------------------------------------


def test_signal_buffered_before_wait_delivers_on_promotion(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_sigbuf",
        [
            wf_task("gate", "wfc_sigbuf_gate"),
            DAGTask(key="approval", kind=KIND_SIGNAL, payload=None, signal_name="approval"),
        ],
        deps=edges(("approval", "gate")),
    )
    payload = {"by": "ops"}
    assert signal(store, dag_id, "approval", payload) == (0, False)
    assert state_of(store, dag_id, "approval") == JobState.BLOCKED

    finish_wf_task(store, "wfc_sigbuf_gate")
    store.promote_unblocked()
    assert state_of(store, dag_id, "approval") == JobState.WAITING

    assert store.deliver_buffered_signals() >= 1
    g = dag_task_by_key(store, dag_id, "approval")
    assert g.state == JobState.SUCCEEDED
    assert g.result == payload

    assert store.deliver_buffered_signals() == 0


def test_signal_dedupe_by_message_id(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_sigdedupe",
        [
            DAGTask(key="gate", kind=KIND_SIGNAL, payload=None, signal_name="gate"),
            DAGTask(key="late", kind=KIND_SIGNAL, payload=None, signal_name="late"),
        ],
        deps=edges(("late", "gate")),
    )
    first = {"decision": "approve"}
    assert signal(store, dag_id, "late", first, message_id="wh-1") == (0, False)
    assert signal(store, dag_id, "late", {"decision": "tampered"}, message_id="wh-1") == (0, True)

    assert signal(store, dag_id, "gate") == (1, False)
    _, dedup = signal(store, dag_id, "gate")
    assert dedup is False, "no MessageID, no dedupe"

    store.promote_unblocked()
    assert store.deliver_buffered_signals() >= 1
    late = dag_task_by_key(store, dag_id, "late")
    assert late.state == JobState.SUCCEEDED
    assert late.result == first, "the FIRST payload is delivered, not the tampered repeat"


def test_signal_missing_or_terminal_dag_is_not_found(store: AnyStore) -> None:
    with pytest.raises(NotFound):
        signal(store, uuid.uuid4(), "ghost")
    dag_id = create_wf(
        store,
        "wfc_sigterm",
        [DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="g")],
    )
    store.cancel_dag(dag_id)
    with pytest.raises(NotFound):
        signal(store, dag_id, "g")
    assert store.deliver_buffered_signals() == 0


def test_signal_sleep_early_wake_deferred(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_sigslp",
        [
            wf_task("gate", "wfc_sigslp_gate"),
            DAGTask(key="nap", kind=KIND_SLEEP, payload=None, sleep_for=HOUR, signal_name="nap"),
        ],
        deps=edges(("nap", "gate")),
    )
    delivered, _ = signal(store, dag_id, "nap")
    assert delivered == 0

    finish_wf_task(store, "wfc_sigslp_gate")
    store.promote_unblocked()
    assert state_of(store, dag_id, "nap") == JobState.SCHEDULED

    assert store.deliver_buffered_signals() >= 1
    store.complete_due_sleeps()
    assert state_of(store, dag_id, "nap") == JobState.SUCCEEDED


# --- skip / pause / lookups -----------------------------------------------------------------


def test_skip_settles_terminal_and_satisfies_deps(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_skip",
        [
            wf_task(
                "submit",
                "wfc_skip_submit",
                compensation_kind="wfc_skip_undo",
                compensation_payload={},
            ),
            wf_task("downstream", "wfc_skip_down"),
        ],
        deps=edges(("downstream", "submit")),
    )
    job = lease_one(store, Source.DAG, "wfc_skip_submit")
    store.skip(job.id, token(job), "already VERIFIED")

    skipped = dag_task_by_key(store, dag_id, "submit")
    assert skipped.state == JobState.SKIPPED
    assert skipped.last_error == "already VERIFIED"
    assert skipped.result is None
    assert skipped.completed_at is not None
    assert store.job_attempts(Source.DAG, skipped.id) == []

    store.promote_unblocked()
    assert state_of(store, dag_id, "downstream") == JobState.PENDING

    results = store.task_results(dag_id, ["submit"])
    assert results["submit"].skipped is True
    assert results["submit"].result is None

    finish_wf_task(store, "wfc_skip_down")
    store.complete_dags()
    assert dag_state(store, dag_id) == DAGState.SUCCEEDED

    id2 = create_wf(
        store,
        "wfc_skip2",
        [
            wf_task(
                "submit",
                "wfc_skip2_submit",
                compensation_kind="wfc_skip2_undo",
                compensation_payload={},
            ),
            wf_task("boom", "wfc_skip2_boom", max_attempts=1),
        ],
        deps=edges(("boom", "submit")),
        on_failure=OnFailurePolicy.CANCEL,
    )
    job = lease_one(store, Source.DAG, "wfc_skip2_submit")
    store.skip(job.id, token(job), "already done")
    store.promote_unblocked()
    kill_wf_task(store, "wfc_skip2_boom")
    apply_policy_for(store, id2)
    assert not any(
        j.task_key.startswith(TASK_KEY_COMPENSATION_PREFIX) for j in store.dag_tasks(id2)
    ), "a skipped task did no work, so nothing compensates"
    assert dag_state(store, id2) == DAGState.FAILED


def test_pause_freezes_and_retry_resumes(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_pause",
        [
            wf_task("work", "wfc_pause_work"),
            DAGTask(key="approval", kind=KIND_SIGNAL, payload=None, signal_name="approval"),
            wf_task("after", "wfc_pause_after"),
        ],
        deps=edges(("after", "approval")),
    )
    store.pause_dag(dag_id, "provider outage")
    w = dag_view(store, dag_id)
    assert w.state == DAGState.PAUSED
    assert w.failure_reason == "provider outage"
    assert state_of(store, dag_id, "work") == JobState.PAUSED
    assert state_of(store, dag_id, "approval") == JobState.WAITING

    leased = store.dequeue_batch(
        Source.DAG, DequeueParams(kind="wfc_pause_work", limit=1, lease=MINUTE)
    )
    assert leased == [], "a paused task never dequeues"
    assert signal(store, dag_id, "approval")[0] == 1, "a paused DAG still takes signals"
    store.promote_unblocked()
    assert state_of(store, dag_id, "after") == JobState.BLOCKED

    with pytest.raises(NotFound):
        store.pause_dag(dag_id, "again")

    store.retry_dag(dag_id)
    assert dag_state(store, dag_id) == DAGState.RUNNING
    assert state_of(store, dag_id, "work") == JobState.PENDING
    store.promote_unblocked()
    assert state_of(store, dag_id, "after") == JobState.PENDING
    finish_wf_task(store, "wfc_pause_work")
    finish_wf_task(store, "wfc_pause_after")
    store.complete_dags()
    assert dag_state(store, dag_id) == DAGState.SUCCEEDED
    with pytest.raises(NotFound):
        store.pause_dag(dag_id, "late")

    id2 = create_wf(store, "wfc_pause_cancel", [wf_task("w", "wfc_pause_cx_w")])
    store.pause_dag(id2, "freeze")
    store.cancel_dag(id2)
    assert state_of(store, id2, "w") == JobState.CANCELLED
    assert dag_state(store, id2) == DAGState.CANCELLED


def test_find_dag_by_key_resolves_the_live_run(store: AnyStore) -> None:
    first = create_wf(store, "wfc_bykey", [wf_task("w", "wfc_bykey_w")], idempotency_key="acct-42")
    finish_wf_task(store, "wfc_bykey_w")
    store.complete_dags()
    assert dag_state(store, first) == DAGState.SUCCEEDED

    second = create_wf(
        store,
        "wfc_bykey",
        [DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="g")],
        idempotency_key="acct-42",
    )
    assert store.find_dag_by_key("wfc_bykey", "acct-42") == second

    store.pause_dag(second, "freeze")
    assert store.find_dag_by_key("wfc_bykey", "acct-42") == second
    store.retry_dag(second)

    with pytest.raises(NotFound):
        store.find_dag_by_key("wfc_bykey", "acct-ghost")
    with pytest.raises(NotFound):
        store.find_dag_by_key("wfc_bykey_other", "acct-42")


def test_deps_expose_the_graph(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_deps",
        [
            wf_task("root", "wfc_deps_root", compensation_kind="wfc_deps_undo_root"),
            wf_task("fan_a", "wfc_deps_fan_a"),
            wf_task("fan_b", "wfc_deps_fan_b"),
            wf_task("sink", "wfc_deps_sink", max_attempts=1),
        ],
        deps=edges(("fan_a", "root"), ("fan_b", "root"), ("sink", "fan_a"), ("sink", "fan_b")),
        on_failure=OnFailurePolicy.SUSPEND,
    )
    assert store.dag_deps(dag_id) == edges(
        ("fan_a", "root"), ("fan_b", "root"), ("sink", "fan_a"), ("sink", "fan_b")
    )
    assert store.dag_deps(uuid.uuid4()) == []

    finish_wf_task(store, "wfc_deps_root")
    store.promote_unblocked()
    finish_wf_task(store, "wfc_deps_fan_a")
    finish_wf_task(store, "wfc_deps_fan_b")
    store.promote_unblocked()
    kill_wf_task(store, "wfc_deps_sink")
    apply_policy_for(store, dag_id)
    store.compensate_dag(dag_id)

    assert len(store.dag_deps(dag_id)) == 4, "one compensation adds no edge"
    assert dag_task_by_key(store, dag_id, "comp:root").kind == "wfc_deps_undo_root"


def test_state_counts(store: AnyStore) -> None:
    before = store.dag_name_state_counts()
    assert "wfc_counts_live" not in before

    live = create_wf(store, "wfc_counts_live", [wf_task("a", "wfc_counts_live_a")])
    create_wf(store, "wfc_counts_live", [wf_task("a", "wfc_counts_live_b")])
    done = create_wf(store, "wfc_counts_done", [wf_task("a", "wfc_counts_done_a")])
    finish_wf_task(store, "wfc_counts_done_a")
    store.complete_dags()
    assert dag_state(store, done) == DAGState.SUCCEEDED

    # complete_dags is store-wide, so other tests' DAGs may have moved meanwhile: only
    # this test's names are compared.
    after = store.dag_name_state_counts()
    assert after["wfc_counts_live"] == {DAGState.RUNNING: 2}
    assert after["wfc_counts_done"] == {DAGState.SUCCEEDED: 1}

    store.cancel_dag(live)
    final = store.dag_name_state_counts()
    assert final["wfc_counts_live"][DAGState.RUNNING] == 1
    assert final["wfc_counts_live"][DAGState.CANCELLED] == 1


def test_task_counts(store: AnyStore) -> None:
    first = create_wf(
        store,
        "wfc_tcounts_a",
        [wf_task(k, f"wfc_tcounts_a_{k}") for k in "abc"],
        deps=edges(("c", "a")),
    )
    second = create_wf(store, "wfc_tcounts_b", [wf_task("only", "wfc_tcounts_b_only")])

    counts = store.dag_task_counts([first, second])
    assert counts[first] == {JobState.PENDING: 2, JobState.BLOCKED: 1}
    assert counts[second] == {JobState.PENDING: 1}

    finish_wf_task(store, "wfc_tcounts_a_a")
    counts = store.dag_task_counts([first])
    assert counts[first] == {JobState.PENDING: 1, JobState.BLOCKED: 1, JobState.SUCCEEDED: 1}

    assert store.dag_task_counts([uuid.uuid4()]) == {}
    assert store.dag_task_counts([]) == {}


def test_started_at_tracks_the_current_attempt(store: AnyStore) -> None:
    dag_id = create_wf(store, "wfc_started", [wf_task("a", "wfc_started_a", max_attempts=3)])
    assert dag_task_by_key(store, dag_id, "a").started_at is None

    job = lease_one(store, Source.DAG, "wfc_started_a")
    first = dag_task_by_key(store, dag_id, "a").started_at
    assert first is not None

    store.reschedule(job.id, token(job), timedelta(0), "boom")
    store.promote_due(Source.DAG, ["wfc_started_a"])
    job = lease_one(store, Source.DAG, "wfc_started_a")
    second = dag_task_by_key(store, dag_id, "a")
    assert second.attempt == 2
    assert second.started_at is not None and second.started_at >= first

    store.dead(job.id, token(job), "boom")
    store.retry_dag(dag_id)
    retried = dag_task_by_key(store, dag_id, "a")
    assert retried.attempt == 0
    assert retried.started_at is None


# --- bad input (qctl's edge checks, dagcheck): rejected before anything is written -------


def _bad(**overrides: object) -> DAGParams:
    base: dict[str, object] = {
        "name": "wfc_bad",
        "tasks": [wf_task("a", "wfc_bad_a"), wf_task("b", "wfc_bad_b")],
        "deps": edges(("b", "a")),
    }
    base.update(overrides)
    return DAGParams(**base)  # type: ignore[arg-type]


BAD_DAGS = {
    "empty name": (_bad(name=""), "name must be a non-empty"),
    "no tasks": (_bad(tasks=[], deps=[]), "has no tasks"),
    "duplicate key": (
        _bad(tasks=[wf_task("a", "wfc_bad_a"), wf_task("a", "wfc_bad_b")], deps=[]),
        "duplicate task key 'a'",
    ),
    "empty key": (_bad(tasks=[wf_task("", "wfc_bad_a")], deps=[]), "key must be a non-empty"),
    "dollar key": (_bad(tasks=[wf_task("$x", "wfc_bad_a")], deps=[]), "reserved prefix '\\$'"),
    "comp key": (_bad(tasks=[wf_task("comp:a", "wfc_bad_a")], deps=[]), "reserved prefix 'comp:'"),
    "empty kind": (_bad(tasks=[wf_task("a", "")], deps=[]), "kind must be a non-empty"),
    "unknown edge task": (_bad(deps=edges(("b", "zz"))), "unknown task 'zz'"),
    "unknown edge dependent": (_bad(deps=edges(("zz", "a"))), "unknown task 'zz'"),
    "self edge": (_bad(deps=edges(("a", "a"))), "depends on itself"),
    "duplicate edge": (_bad(deps=edges(("b", "a"), ("b", "a"))), "declared twice"),
    "cycle": (
        _bad(
            tasks=[wf_task(k, f"wfc_bad_{k}") for k in "abc"],
            deps=edges(("b", "a"), ("c", "b"), ("a", "c")),
        ),
        "dependency cycle",
    ),
    "negative sleep": (
        _bad(tasks=[DAGTask(key="s", kind=KIND_SLEEP, sleep_for=-HOUR)], deps=[]),
        "sleep_for must not be negative",
    ),
    "negative deadline": (
        _bad(tasks=[wf_task("a", "wfc_bad_a", deadline=-HOUR)], deps=[]),
        "deadline must not be negative",
    ),
    "negative max attempts": (
        _bad(tasks=[wf_task("a", "wfc_bad_a", max_attempts=-1)], deps=[]),
        "max_attempts must not be negative",
    ),
    "unknown policy": (_bad(on_failure="retry"), "unknown on_failure 'retry'"),
    "non-JSON payload": (
        _bad(tasks=[wf_task("a", "wfc_bad_a", payload={1, 2})], deps=[]),
        "payload is not JSON",
    ),
    "NaN payload": (
        _bad(tasks=[wf_task("a", "wfc_bad_a", payload={"x": float("nan")})], deps=[]),
        "payload is not JSON",
    ),
    "non-JSON compensation payload": (
        _bad(tasks=[wf_task("a", "wfc_bad_a", compensation_payload=object())], deps=[]),
        "compensation_payload is not JSON",
    ),
    "non-string meta": (_bad(meta={"n": 1}), "meta must map strings to strings"),
}


def dag_depth_counts(store: AnyStore) -> dict[str, tuple[int, ...]]:
    return {
        kind: (d.pending, d.scheduled, d.active, d.dead, d.paused, d.succeeded)
        for kind, d in store.kind_depths(Source.DAG).items()
    }


@pytest.mark.parametrize("case", list(BAD_DAGS))
def test_bad_dag_params_are_rejected_before_writing(store: AnyStore, case: str) -> None:
    params, message = BAD_DAGS[case]
    depths = dag_depth_counts(store)
    _, dags = store.list_dags(DAGFilter(), 0, 1)
    with pytest.raises(InvalidInput, match=message):
        store.create_dag(params)
    assert store.list_dags(DAGFilter(), 0, 1)[1] == dags
    with pytest.raises(NotFound):
        store.get_dag(params.id)
    assert dag_depth_counts(store) == depths


def test_bad_signal_and_result_payloads_are_rejected(store: AnyStore) -> None:
    dag_id = create_wf(
        store,
        "wfc_bad_payloads",
        [
            wf_task("a", "wfc_bad_payloads_a"),
            DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="g"),
        ],
    )
    with pytest.raises(InvalidInput, match="signal payload is not JSON"):
        signal(store, dag_id, "g", {1, 2})
    with pytest.raises(InvalidInput, match="signal name"):
        signal(store, dag_id, "")
    assert state_of(store, dag_id, "g") == JobState.WAITING
    assert store.deliver_buffered_signals() == 0, "a rejected signal left no inbox row"

    job = lease_one(store, Source.DAG, "wfc_bad_payloads_a")
    with pytest.raises(InvalidInput, match="result is not JSON"):
        store.ack_task_result(job.id, token(job), float("inf"))
    assert state_of(store, dag_id, "a") == JobState.ACTIVE


# --- daily stats (the fused bumps of driver/azyncpgx/dag_store.go) ------------------------


def counters(store: AnyStore, kind: str) -> tuple[int, int, int, int]:
    """(enqueued, processed, failed, reaped) of ``dag:<kind>``, summed over the days."""
    _, days = store.stats(Source.DAG, kind)
    return (
        sum(d.enqueued for d in days),
        sum(d.processed for d in days),
        sum(d.failed for d in days),
        sum(d.reaped for d in days),
    )


def test_stats_count_tasks_compensations_and_results(store: AnyStore) -> None:
    # CreateDAG bumps enqueued once per task, internal kinds included; each inserted
    # compensation bumps its kind; AckTaskResult bumps processed. Completing a timer or
    # a signal task bumps nothing. The internal kinds are shared with the other tests
    # of this module, so they are compared as deltas.
    sleep0, signal0 = counters(store, KIND_SLEEP), counters(store, KIND_SIGNAL)
    dag_id = create_wf(
        store,
        "wfc_stats",
        [
            wf_task("a", "wfc_stats_a", compensation_kind="wfc_stats_undo"),
            wf_task("a2", "wfc_stats_a"),
            wf_task("c", "wfc_stats_c", max_attempts=1),
            DAGTask(key="s", kind=KIND_SLEEP, payload=None, sleep_for=timedelta(milliseconds=1)),
            DAGTask(key="g", kind=KIND_SIGNAL, payload=None, signal_name="wfc_stats_go"),
        ],
        on_failure=OnFailurePolicy.CANCEL,
    )
    assert counters(store, "wfc_stats_a") == (2, 0, 0, 0)
    assert counters(store, KIND_SLEEP)[0] == sleep0[0] + 1
    assert counters(store, KIND_SIGNAL)[0] == signal0[0] + 1

    finish_wf_task(store, "wfc_stats_a", {"n": 1})
    assert counters(store, "wfc_stats_a") == (2, 1, 0, 0)
    finish_wf_task(store, "wfc_stats_a")
    assert counters(store, "wfc_stats_a") == (2, 2, 0, 0)
    time.sleep(0.02)
    store.complete_due_sleeps()
    assert signal(store, dag_id, "wfc_stats_go") == (1, False)
    assert state_of(store, dag_id, "s") == JobState.SUCCEEDED
    assert counters(store, KIND_SLEEP)[1:] == sleep0[1:]
    assert counters(store, KIND_SIGNAL)[1:] == signal0[1:]

    kill_wf_task(store, "wfc_stats_c")
    assert counters(store, "wfc_stats_c") == (1, 0, 1, 0)
    apply_policy_for(store, dag_id)
    assert dag_state(store, dag_id) == DAGState.COMPENSATING
    assert counters(store, "wfc_stats_undo") == (1, 0, 0, 0)


def test_negative_vacuum_retention_is_rejected(store: AnyStore) -> None:
    # As every other retention in qctl; azync's Go treats it as zero (deletes nothing).
    with pytest.raises(InvalidInput, match="retention must not be negative"):
        store.vacuum_dags(timedelta(seconds=-1))


# --- TxDAGStore: create_dag_tx rides the caller's transaction -----------------------------


def caller_connection(store: AnyStore) -> Any:
    """The application's own connection to the store's database (not the store's)."""
    if isinstance(store, PostgresStore):
        return psycopg.connect(PG_DSN)
    return sqlite3.connect(store.path, timeout=30, isolation_level=None)


def begin(conn: Any) -> None:
    if isinstance(conn, sqlite3.Connection):
        conn.execute("BEGIN IMMEDIATE")


def test_create_dag_tx_commits_and_rolls_back_with_the_caller(store: AnyStore) -> None:
    def params() -> DAGParams:
        return DAGParams(name="wfc_tx", idempotency_key="k", tasks=[wf_task("a", "wfc_tx_a")])

    rolled_back, committed = params(), params()
    with contextlib.closing(caller_connection(store)) as conn:
        begin(conn)
        assert store.create_dag_tx(conn, rolled_back) == (True, None)
        conn.rollback()
        with pytest.raises(NotFound):
            store.get_dag(rolled_back.id)

        begin(conn)
        assert store.create_dag_tx(conn, committed) == (True, None)
        assert store.create_dag_tx(conn, params()) == (False, committed.id), (
            "the live key dedupes inside the caller's transaction too"
        )
        conn.commit()
    assert dag_state(store, committed.id) == DAGState.RUNNING
    assert state_of(store, committed.id, "a") == JobState.PENDING
