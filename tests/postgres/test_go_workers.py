"""Go azync workers and schedulers on rows qctl wrote: azync's own statements (see
``tests/azync_go.py``) lease and signal them as they would rows Go's producers wrote."""

from __future__ import annotations

from datetime import timedelta

from qctl_store.postgres import PostgresStore
from qctl_store.types import EnqueueParams, JobState
from tests.azync_go import GO_DELIVER_SIGNAL, GO_DEQUEUE, go_exhausted
from tests.conformance.helpers import dag_task_by_key, unique, wait_and_timer_dag
from tests.conftest import raw_pg


def go_worker(kind: str, *, override_default: bool, default_max_attempts: int) -> dict[str, object]:
    """The parameters of one Go queue worker's dequeue of ``kind`` (60 s leases, 10 jobs)."""
    return {
        "lease_seconds": 60,
        "override_default": override_default,
        "default_max_attempts": default_max_attempts,
        "source": "queue",
        "kind": kind,
        "limit": 10,
    }


def test_a_go_worker_retries_what_qctl_enqueued(store: PostgresStore) -> None:
    kind = unique("mix_go")
    plain, zero, pinned = (
        EnqueueParams(kind=kind),
        EnqueueParams(kind=kind, max_attempts=0),
        EnqueueParams(kind=kind, max_attempts=3, max_attempts_explicit=True),
    )
    store.enqueue(plain)
    store.enqueue_many([zero, pinned])
    with raw_pg(store.schema) as pg:
        # A worker registered without MaxRetries: OverrideDefault is false.
        leased = {
            id: (attempt, budget)
            for id, attempt, budget in pg.execute(
                GO_DEQUEUE, go_worker(kind, override_default=False, default_max_attempts=25)
            )
        }
    assert leased == {plain.id: (1, 25), zero.id: (1, 25), pinned.id: (1, 3)}
    assert not any(go_exhausted(*v) for v in leased.values()), "a first failure is retried"

    other = unique("mix_go_override")
    unpinned = EnqueueParams(kind=other)
    kept = EnqueueParams(kind=other, max_attempts=3, max_attempts_explicit=True)
    store.enqueue_many([unpinned, kept])
    with raw_pg(store.schema) as pg:
        # A worker registered with MaxRetries(7) replaces only an unpinned budget.
        leased = {
            id: budget
            for id, _, budget in pg.execute(
                GO_DEQUEUE, go_worker(other, override_default=True, default_max_attempts=7)
            )
        }
    assert leased == {unpinned.id: 7, kept.id: 3}


def test_a_go_scheduler_signals_the_tasks_qctl_created(store: PostgresStore) -> None:
    p = wait_and_timer_dag("mix_go_signal")
    assert store.create_dag(p)[0]
    with raw_pg(store.schema) as pg:
        for name in ("approve", "cool"):
            row = pg.execute(
                GO_DELIVER_SIGNAL, {"dag": p.id, "name": name, "payload": '{"ok": true}'}
            ).fetchone()
            assert row is not None and row[0] == 1, f"Go delivers signal {name!r}"
    assert dag_task_by_key(store, p.id, "approve").state == JobState.SUCCEEDED
    cool = dag_task_by_key(store, p.id, "cool")
    assert cool.run_at is not None and cool.enqueued_at is not None
    assert cool.run_at < cool.enqueued_at + timedelta(minutes=1), "Go woke the timer"
