"""hopper's finalize tail is one statement text (``queries/fragments.sql``
finalize_tail) behind qctl's cancel of a waiting job (``actions.sql`` cancel_waiting) and
the stand-in client's finalize (``standin.sql`` finalize): the same workflows, settled
once by each path in a schema of their own, leave the same rows and notifications."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import psycopg

from qctl.core import verbs
from qctl.core.verbs import Selection
from qctl.systems.hopper import actions
from qctl.systems.hopper.database import Database
from qctl.systems.hopper.reads import queries
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.conftest import install
from tests.hopper.worker import Worker

RUN = uuid.uuid4().hex[:8]
A, B, CB = f"tail-a-{RUN}", f"tail-b-{RUN}", f"tail-cb-{RUN}"
"""This run's queues: hopper's channels are the database's, and another run of this
module (another schema) sends the same notices."""
LABELS = {A: "tail-a", B: "tail-b", CB: "tail-cb", f"wf-{A}": "wf-tail-a", f"wf-{B}": "wf-tail-b"}
CALLBACKS = {
    "on_failure": {"kind": "tail.failed", "queue": CB},
    "on_complete": {"kind": "tail.complete", "queue": CB},
}


def test_both_statements_run_the_one_text() -> None:
    tail = queries("fragments.sql").finalize_tail
    assert tail in queries("actions.sql").cancel_waiting
    assert tail in queries("standin.sql").finalize


def _settle(schema: str, finalize: Callable[[Worker, Any], None]) -> dict[str, Any]:
    """Two workflows in a fresh hopper ``schema``, their roots finalized as cancelled by
    ``finalize``; the rows and notifications left, ids replaced by kinds."""
    install(schema)
    worker = Worker(schema)
    listen = psycopg.connect(PG_DSN, autocommit=True)
    try:
        # root <- child <- grandchild (awaited), cancel edges: the cascade finishes
        # the whole batch, which enqueues its failure and completion callbacks
        cascade, (root, _, grandchild) = worker.workflow(
            A, ["a.root", "a.child", "a.grandchild"], [(1, 0), (2, 1)], **CALLBACKS
        )
        # root <- tolerant, an edge whose policy is not cancel: promoted, the batch open
        _, (root_b, tolerant) = worker.workflow(B, ["b.root", "b.tolerant"], [(1, 0)])
        worker.conn.execute("UPDATE hopper_jobs SET await = true WHERE id = %s", [grandchild])
        worker.conn.execute(
            "UPDATE hopper_job_deps SET on_failure = 'ignore' WHERE job_id = %s", [tolerant]
        )
        for channel in (actions.CHANNEL_INSERT, actions.CHANNEL_DONE):
            listen.execute(f"LISTEN {channel}")
        finalize(worker, root)
        finalize(worker, root_b)
        names = {str(i): k for i, k in _kinds(schema).items()}
        names |= {str(cascade): "batch a", **LABELS}
        heard = sorted(
            (n.channel, names[n.payload])
            for n in listen.notifies(timeout=0.5)
            if n.payload in names  # other runs' notices left out
        )
        return {"rows": _rows(schema, names), "heard": heard}
    finally:
        listen.close()
        worker.close()


def _kinds(schema: str) -> dict[Any, str]:
    with raw_pg(schema) as c:
        return dict(
            c.execute(
                "SELECT id, kind FROM hopper_jobs UNION ALL SELECT id, kind FROM hopper_job_history"
            ).fetchall()
        )


def _rows(schema: str, names: dict[str, str]) -> dict[str, list[tuple[Any, ...]]]:
    """What the tail writes, by kind; a root's own history row differs by path (its
    attempt, client and error), so only its state is kept."""
    with raw_pg(schema) as c:
        history = [
            (kind, state, [e["error"] for e in errors] if not kind.endswith("root") else None)
            for kind, state, errors in c.execute(
                "SELECT kind, state::text, errors FROM hopper_job_history ORDER BY kind"
            ).fetchall()
        ]
        live = [
            (kind, names[queue], state, names.get(meta.get("batch_id")), meta.get("batch_failed"))
            for kind, queue, state, meta in c.execute(
                "SELECT kind, queue, state::text, metadata FROM hopper_jobs ORDER BY kind"
            ).fetchall()
        ]
        batches = [
            (names[name], *counts)
            for name, *counts in c.execute(
                "SELECT name, total, pending, failed, completed_at IS NOT NULL"
                " FROM hopper_batches ORDER BY name"
            ).fetchall()
        ]
        edges = [
            (names[str(j)], names[str(d)])
            for j, d in c.execute("SELECT job_id, depends_on FROM hopper_job_deps").fetchall()
        ]
    return {"history": history, "live": live, "batches": batches, "edges": sorted(edges)}


def _qctl_cancel(schema: str) -> Callable[[Worker, Any], None]:
    def cancel(worker: Worker, job: Any) -> None:
        db = Database(PG_DSN, schema)
        try:
            planned = verbs.plan(db, actions.CANCEL, Selection.of_ids([str(job)]), "test")
            assert planned.states.keys() <= {"available", "scheduled", "pending", "retryable"}
            assert verbs.run(db, actions.CANCEL, planned).ids == [str(job)]
        finally:
            db.close()

    return cancel


def _standin_finalize(worker: Worker, job: Any) -> None:
    client = worker.register()
    queue = worker.conn.execute("SELECT queue FROM hopper_jobs WHERE id = %s", [job]).fetchone()
    assert queue is not None and worker.claim(queue["queue"], client) == [job]
    assert worker.finalize(job, client, "cancelled", error="hopper: cancelled")


def test_cancel_and_finalize_settle_workflows_identically(
    pg_schema: str, fresh_pg_schema: str
) -> None:
    settled = _settle(pg_schema, _qctl_cancel(pg_schema))
    assert settled == _settle(fresh_pg_schema, _standin_finalize)
    rows, heard = settled["rows"], settled["heard"]
    assert rows["history"] == [
        ("a.child", "cancelled", ["hopper: dependency failed"]),
        ("a.grandchild", "cancelled", ["hopper: dependency failed"]),
        ("a.root", "cancelled", None),
        ("b.root", "cancelled", None),
    ]
    assert rows["live"] == [
        ("b.tolerant", "tail-b", "available", None, None),
        ("tail.complete", "tail-cb", "available", "batch a", 3),
        ("tail.failed", "tail-cb", "available", "batch a", 3),
    ]
    assert rows["batches"] == [("wf-tail-a", 3, 0, 3, True), ("wf-tail-b", 2, 1, 1, False)]
    assert rows["edges"] == [("b.tolerant", "b.root")]  # dropped when the dependent finishes
    assert heard == [
        ("hopper_done", "a.grandchild"),
        ("hopper_insert", "tail-b"),
        ("hopper_insert", "tail-cb"),  # the two callbacks: one notice (PostgreSQL folds them)
    ]
