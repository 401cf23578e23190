"""azync for the contract suite (``tests/systems``): a PostgreSQL schema migrated by
``qctl db migrate`` (qctl_store is azync's store), with a job in each state a verb takes,
a running DAG, a running workflow with an uncertain operation, and an event with its
subscriber's delivery."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    DAGParams,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    PublishParams,
    ScheduleOperationParams,
    Source,
    Subscriber,
    WorkflowStartParams,
)
from tests.conftest import PG_DSN
from tests.systems.contract import Target

NONE = "00000000-0000-7000-8000-000000000000"

REAL_WRITE = ["jobs", "enqueue", "ct.audited"]
"""A write that changes nothing the other contract tests' arguments need, audited for real
(``test_a_real_write_is_audited``)."""
WRITES: dict[str, list[str]] = {}
"""Filled by ``database()`` with the ids it made (the keys are fixed: see ``VERBS``)."""


@contextlib.contextmanager
def database() -> Iterator[Target]:
    schema = f"qt_contract_azync_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    store = PostgresStore(PG_DSN, Config(schema=schema, pooled=False))
    try:
        store.migrate()
        WRITES.clear()
        WRITES.update(_arrange(store))
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema)
    finally:
        store.close()
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _arrange(store: PostgresStore) -> dict[str, list[str]]:
    store.enqueue(EnqueueParams(kind="ct.pending"))
    store.enqueue(EnqueueParams(kind="ct.done"))
    [done] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind="ct.done"))
    store.ack(done.id, done.lease_token)
    store.enqueue(EnqueueParams(kind="ct.dead", max_attempts=1))
    [dead] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind="ct.dead"))
    store.dead(dead.id, dead.lease_token, "boom")
    later = datetime.now(UTC) + timedelta(hours=1)
    store.enqueue(EnqueueParams(kind="ct.scheduled", run_at=later))
    dag = DAGParams(name="ct.dag", tasks=[DAGTask("a", "ct.task")])
    store.create_dag(dag)
    wf = WorkflowStartParams(name="ct.wf", version="v1", input={})
    store.start_workflow(wf)
    op = store.schedule_operation(ScheduleOperationParams(workflow_id=wf.id, kind="ct.op"))
    [leased] = store.dequeue_batch(Source.WORKFLOW, DequeueParams(kind="ct.op", limit=1))
    store.mark_uncertain(leased.id, leased.lease_token, "timeout")
    store.register_subscriber(Subscriber(name="ct.sub", event_type="ct.event"))
    store.publish(PublishParams(type="ct.event", payload={}))
    old = ["--older-than", "0"]
    return {
        "jobs retry": ["--kind", "ct.dead"],
        "jobs delete": ["--kind", "ct.pending", "--state", "pending"],
        "jobs pause": ["--kind", "ct.pending"],
        "jobs resume": ["--kind", "ct.pending"],
        "jobs run-now": ["--kind", "ct.scheduled"],
        "jobs archive": ["--kind", "ct.dead"],
        "jobs vacuum-dead": old,
        "dags cancel": [str(dag.id)],
        "dags compensate": [str(dag.id)],
        "dags retry": [str(dag.id)],
        "workflows cancel": [str(wf.id)],
        "workflows resolve": [str(op), "fail"],
        "events retain": old,
        "subscribers delete": ["ct.sub"],
        "replay": ["--event-type", "ct.event"],
        "nuke": [],
        "vacuum all": ["--completed", "0"],
        "vacuum completed": old,
        "vacuum dags": old,
        "vacuum dead": old,
        "vacuum idempotency": [],
        "vacuum stats": old,
        "vacuum workflows": old,
        "db tune": [],
        "db migrate": [],
    }


@contextlib.contextmanager
def handle(target: Target) -> Iterator[Any]:
    store = PostgresStore(target.dsn, Config(schema=target.schema, pooled=False))
    try:
        yield store
    finally:
        store.close()
