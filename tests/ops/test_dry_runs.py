"""Every dry run of the operations layer writes nothing, on both backends: the whole
database (every row of every azync table) is the same before and after, while the dry
run still counts what the action would do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from qctl.core import verbs
from qctl.core.verbs import Selection
from qctl.systems.azync.ops import dags as ops_dags
from qctl.systems.azync.ops import events as ops_events
from qctl.systems.azync.ops import jobs as ops_jobs
from qctl.systems.azync.ops import vacuum as ops_vacuum
from qctl.systems.azync.ops import workflows as ops_wf
from qctl_store.types import (
    DAGParams,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    JobSearch,
    JobState,
    PublishParams,
    ReplayFilter,
    Source,
    Subscriber,
    UncertainDecision,
)
from tests.conformance.helpers import unique
from tests.conftest import raw_pg, raw_sqlite
from tests.ops.test_guards import uncertain_operation


def snapshot(module_db: tuple[str, str, Path]) -> dict[str, list[str]]:
    """Every row of every table, as text, sorted."""
    backend, schema, path = module_db
    if backend == "postgres":
        with raw_pg(schema) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                    (schema,),
                )
            ]
            return {
                t: sorted(str(r) for r in conn.execute(f'SELECT * FROM "{t}"').fetchall())
                for t in tables
            }
    with raw_sqlite(str(path)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            t: sorted(str(r) for r in conn.execute(f'SELECT * FROM "{t}"').fetchall())
            for t in tables
        }


def test_dry_runs_write_nothing(store: Any, module_db: tuple[str, str, Path]) -> None:
    kind = unique("dry")
    for _ in range(3):
        store.enqueue(EnqueueParams(kind=kind, max_attempts=1))
    for job in store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=3)):
        store.dead(job.id, job.lease_token, "boom")
    (dead,) = store.search_jobs(JobSearch(kind=kind), limit=1)
    dag = DAGParams(name=unique("dag"), tasks=[DAGTask("a", unique("dk"))])
    store.create_dag(dag)
    _, op_id, _ = uncertain_operation(store)
    sub = unique("sub")
    etype = unique("ev")
    store.register_subscriber(Subscriber(name=sub, event_type=etype))
    store.publish(PublishParams(type=etype, payload={}))

    before = snapshot(module_db)
    by_filter = Selection(filter=ops_jobs.job_filter(JobSearch(kind=kind, state=JobState.DEAD)))
    job_plans = [
        verbs.plan(store, ops_jobs.RETRY, Selection.of_ids([str(dead.id)]), "dry"),
        verbs.plan(store, ops_jobs.DELETE, Selection.of_ids([str(dead.id)]), "dry"),
        verbs.plan(store, ops_jobs.RETRY, by_filter, "dry"),
        verbs.plan(store, ops_jobs.deleting([JobState.DEAD]), by_filter, "dry"),
    ]
    plans = [
        ops_jobs.vacuum_dead(store, timedelta(0), kind=kind, dry_run=True),
        ops_dags.cancel(store, dag.id, dry_run=True),
        ops_dags.compensate(store, dag.id, dry_run=True),
        ops_dags.retry(store, dag.id, dry_run=True),
        ops_wf.resolve(store, op_id, UncertainDecision.COMPLETE, {"ok": 1}, dry_run=True),
        ops_events.replay(store, ReplayFilter(subscriber=sub), dry_run=True),
        ops_events.retain(store, datetime.now(UTC) + timedelta(minutes=1), 10, dry_run=True),
        ops_events.delete_subscriber(store, sub, drain=True, dry_run=True),
        *ops_vacuum.execute(store, ops_vacuum.dead(Source.QUEUE, kind, timedelta(0)), True),
        ops_vacuum.nuke(store, Source.QUEUE, dry_run=True),
    ]
    assert snapshot(module_db) == before
    assert all(p.dry_run for p in plans)
    # retry and delete would each touch the one job by id and all three by filter
    assert [len(p.ids) for p in job_plans] == [1, 1, 3, 3]
    assert plans[0].count == 3  # type: ignore[union-attr]  # and vacuum all three
    assert plans[8].count == 3  # type: ignore[union-attr]
    assert plans[4].history_event == "OperationCompleted"  # type: ignore[union-attr]
    assert (plans[5].events, plans[5].subscribers) == (1, 1)  # type: ignore[union-attr]
    assert plans[7].drained == 1  # type: ignore[union-attr]
