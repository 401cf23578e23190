"""azync for the contract suite (``tests/systems``): a PostgreSQL schema migrated by
``qctl db migrate`` (qctl_store is azync's store), with a job in each state a verb takes,
a running DAG, a running workflow with an uncertain operation, and an event with its
subscriber's delivery."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from qctl_store import Config, open_store
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
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
from tests.conftest import PG_DSN, raw_pg, raw_sqlite
from tests.systems.contract import Target
from tests.systems.hostile import Hostile, HostileRow, open_row

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
    paused = EnqueueParams(kind="ct.paused")
    store.enqueue(paused)
    store.pause_job(Source.QUEUE, paused.id)
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
    aged = ["--older-than", "1s"]  # a vacuum refuses 0: it would remove everything
    return {
        "jobs retry": ["--kind", "ct.dead"],
        "jobs delete": ["--kind", "ct.pending", "--state", "pending"],
        "jobs pause": ["--kind", "ct.pending"],
        "jobs resume": ["--kind", "ct.paused"],
        "jobs run-now": ["--kind", "ct.scheduled"],
        "jobs archive": ["--kind", "ct.pending"],
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
        "vacuum all": aged,
        "vacuum completed": aged,
        "vacuum dags": aged,
        "vacuum dead": old,
        "vacuum idempotency": [],
        "vacuum stats": aged,
        "vacuum workflows": aged,
        "db tune": [],
        "db migrate": [],
    }


def _store(target: Target) -> PostgresStore:
    return PostgresStore(target.dsn, Config(schema=target.schema, pooled=False))


def _lease(store: PostgresStore, kind: str) -> None:
    [leased] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
    assert leased.kind == kind


def verb_rows(target: Target, verb: str, n: int) -> tuple[list[str], list[str]]:
    """``n`` queue jobs in a state the verb takes, made through the store as azync's
    producers and workers make them: each of its own kind (``change`` leases one), all
    with one meta tag, the filter that selects exactly them."""
    tag = uuid.uuid4().hex[:8]
    store = _store(target)
    ids = []
    try:
        for i in range(n):
            kind = f"ct.verb.{tag}.{i}"
            later = datetime.now(UTC) + timedelta(hours=1) if verb == "jobs run-now" else None
            p = EnqueueParams(kind=kind, meta={"ct": tag}, run_at=later, max_attempts=1)
            store.enqueue(p)
            if verb in ("jobs retry", "jobs delete"):
                [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
                store.dead(job.id, job.lease_token, "boom")
            elif verb == "jobs resume":
                store.pause_job(Source.QUEUE, p.id)
            ids.append(str(p.id))
    finally:
        store.close()
    where = ["--meta", f"ct={tag}"]
    return ids, [*where, "--state", "dead"] if verb == "jobs delete" else where


def change(target: Target, verb: str, job_id: str) -> str:
    """The job moved on: a worker leases a waiting one (pause, archive); another
    operator retries a dead one (retry, delete), runs a scheduled one now or resumes a
    paused one; the reason the verb's engine counts it under."""
    store = _store(target)
    try:
        id = uuid.UUID(job_id)
        if verb in ("jobs pause", "jobs archive"):
            _lease(store, store.find_job(id).kind)
            return "active: a worker holds it"
        {
            "jobs retry": store.retry_job,
            "jobs delete": store.retry_job,
            "jobs run-now": store.run_now,
            "jobs resume": store.resume_job,
        }[verb](Source.QUEUE, id)
        return "pending"
    finally:
        store.close()


@contextlib.contextmanager
def handle(target: Target) -> Iterator[Any]:
    store = open_store(target.dsn, Config(schema=target.schema, pooled=False))
    try:
        yield store
    finally:
        store.close()


HOSTILE_BACKENDS = ("postgres", "sqlite")


@contextlib.contextmanager
def hostile_database(backend: str, tmp: Path) -> Iterator[Target]:
    """An empty store migrated by ``qctl_store`` (a schema of its own on PostgreSQL)."""
    if backend == "sqlite":
        path = tmp / "azync.db"
        with contextlib.closing(SqliteStore(str(path), Config())) as st:
            st.migrate()
        yield Target(["--dsn", f"sqlite:///{path}"], f"sqlite://{path}", "")
        return
    schema = f"qt_hostile_azync_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        with contextlib.closing(PostgresStore(PG_DSN, Config(schema=schema))) as pg:
            pg.migrate()
        yield Target(["--dsn", PG_DSN, "--schema", schema], PG_DSN, schema)
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def insert_hostile(target: Target, case: Hostile) -> HostileRow | None:
    """A pending queue job of kind ``hostile.<case>``, its payload (jsonb; TEXT on SQLite)
    or its run and enqueue instants rewritten as another producer would."""
    kind = f"hostile.{case.name}"
    p = EnqueueParams(kind=kind)
    sets: dict[str, Any] = {}
    if case.instant:
        sets = {"run_at": case.instant, "enqueued_at": case.instant}
    if target.schema:
        if case.raw is not None and case.json is None:
            return None  # jsonb holds JSON only
        with contextlib.closing(PostgresStore(PG_DSN, Config(schema=target.schema))) as st:
            st.enqueue(p)
        if case.json is not None:
            sets["payload"] = case.json
        try:
            with raw_pg(target.schema) as conn:
                conn.execute("SET max_stack_depth = '7MB'")  # jsonb's parser recurses
                assigned = ", ".join(f"{c} = %({c})s" for c in sets)
                conn.execute(
                    f"UPDATE azync_jobs SET {assigned} WHERE id = %(id)s", {**sets, "id": p.id}
                )
        except (psycopg.errors.DataError, psycopg.errors.StatementTooComplex):
            return None  # not a value jsonb takes (NaN, \u0000, 100,000 levels)
    else:
        path = target.dsn.removeprefix("sqlite://")
        with contextlib.closing(SqliteStore(path, Config())) as st:
            st.enqueue(p)
        sets["payload"] = case.raw if case.raw is not None else case.json
        with raw_sqlite(path) as conn:
            assigned = ", ".join(f"{c} = :{c}" for c in sets if sets[c] is not None)
            conn.execute(
                f"UPDATE azync_jobs SET {assigned} WHERE id = :id", {**sets, "id": str(p.id)}
            )
    return HostileRow(str(p.id), ["jobs", "list", "--kind", kind], ["jobs", "show", str(p.id)])


async def show_in_dashboard(app: Any, pilot: Any, row: HostileRow) -> None:
    from qctl.systems.azync.tui import JobsPane

    await pilot.press("2")
    app.screen.query_one(JobsPane).open_with(None, row.list_args[-1], None)
    await open_row(app, pilot, "2", "jobs-table", row.key)
