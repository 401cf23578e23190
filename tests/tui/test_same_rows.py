"""The same action from the command line and from the dashboard leaves the same rows:
both call the operations layer. Two identical scenarios, one acted on by ``qctl``, the
other through pilot; their whole job rows (ids and instants aside: only whether an
instant is set), history and DAG rows must match."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qctl.cli.main import app as cli_app
from qctl.systems.azync.tui import DagGraphScreen, JobDetailScreen, WorkflowDetailScreen
from qctl.tui.app import QctlTop
from qctl.tui.widgets import ChoiceDialog, ConfirmDialog
from qctl_store.types import (
    DAGDep,
    DAGParams,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    Job,
    JobSearch,
    OnFailurePolicy,
    ScheduleOperationParams,
    Source,
    WorkflowStartParams,
)
from tests.conftest import PG_DSN
from tests.tui.helpers import SIZE, row_keys, table, until

pytestmark = pytest.mark.timeout(120)

IDS = {"id", "dag_id", "run_id", "event_id", "lease_token", "event"}


def normal(row: Any) -> dict[str, Any]:
    """A row without its identity; instants reduced to whether they are set."""
    out = {}
    for f in dataclasses.fields(row):
        value = getattr(row, f.name)
        if f.name in IDS:
            continue
        out[f.name] = (
            (value is not None) if f.name.endswith("_at") or f.name.endswith("_until") else value
        )
    return out


def qctl(module_db: tuple[str, str, Path], *args: str) -> None:
    backend, schema, path = module_db
    root = (
        ["--dsn", PG_DSN, "--schema", schema]
        if backend == "postgres"
        else ["--dsn", f"sqlite:///{path}"]
    )
    res = CliRunner().invoke(cli_app, [*root, *args, "--yes"])
    assert res.exit_code == 0, (args, res.stdout, res.stderr)


async def in_dashboard(store: Any, screen: Any, keys: list[str], done: Any) -> None:
    app = QctlTop(store, location="test", live=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(screen)
        await pilot.pause(0.3)
        for key in keys:
            if key == "?confirm":
                await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
                key = "y"
            await pilot.press(key)
        await until(pilot, done)


def dead_job(store: Any, kind: str) -> uuid.UUID:
    store.enqueue(EnqueueParams(kind=kind, payload={"n": 1}, max_attempts=1))
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
    store.dead(job.id, job.lease_token, "boom")
    return job.id


async def test_job_retry(store: Any, module_db: tuple[str, str, Path]) -> None:
    kind = f"same_{uuid.uuid4().hex[:8]}"
    a, b = dead_job(store, kind), dead_job(store, kind)
    qctl(module_db, "jobs", "retry", str(a))
    await in_dashboard(
        store, JobDetailScreen(b), ["R", "?confirm"], lambda: store.find_job(b).state != "dead"
    )
    assert normal(store.find_job(a)) == normal(store.find_job(b))


def saga(name: str) -> DAGParams:
    return DAGParams(
        name=name,
        tasks=[
            DAGTask("reserve", f"{name}.reserve", compensation_kind=f"{name}.release"),
            DAGTask("charge", f"{name}.charge"),
            DAGTask("ship", f"{name}.ship"),
        ],
        deps=[DAGDep("charge", "reserve"), DAGDep("ship", "charge")],
        on_failure=OnFailurePolicy.CANCEL,
    )


def started_saga(store: Any, name: str) -> uuid.UUID:
    p = saga(name)
    store.create_dag(p)
    [job] = store.dequeue_batch(Source.DAG, DequeueParams(kind=f"{name}.reserve"))
    store.ack_task_result(job.id, job.lease_token, {"held": 1})
    store.promote_unblocked()
    return p.id


def dag_rows(store: Any, dag_id: uuid.UUID) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    tasks = sorted(store.dag_tasks(dag_id), key=lambda t: t.task_key)
    return normal(store.get_dag(dag_id)), [normal(t) for t in tasks]


async def test_dag_compensate(store: Any, module_db: tuple[str, str, Path]) -> None:
    name = f"same_{uuid.uuid4().hex[:8]}"
    a = started_saga(store, name)
    b = started_saga(store, name)
    qctl(module_db, "dags", "compensate", str(a))
    await in_dashboard(
        store,
        DagGraphScreen(b),
        ["C", "?confirm"],
        lambda: store.get_dag(b).state != "running",
    )
    assert dag_rows(store, a) == dag_rows(store, b)


def uncertain_op(store: Any, name: str) -> tuple[uuid.UUID, uuid.UUID]:
    wf = WorkflowStartParams(name=name, input={"n": 1})
    store.start_workflow(wf)
    op_kind = f"$op:{name}.charge@1"
    op = store.schedule_operation(
        ScheduleOperationParams(
            workflow_id=wf.id,
            kind=op_kind,
            meta={"workflow_name": name, "op_name": "charge", "op_version": "1"},
            max_attempts=3,
        )
    )
    [job] = store.dequeue_batch(Source.WORKFLOW, DequeueParams(kind=op_kind))
    store.mark_uncertain(op, job.lease_token, "ambiguous")
    return wf.id, op


def workflow_rows(store: Any, wf_id: uuid.UUID) -> dict[str, Any]:
    jobs: list[Job] = store.search_jobs(JobSearch(source=Source.WORKFLOW, run_id=wf_id))
    return {
        "execution": normal(store.get_workflow_execution(wf_id)),
        "history": [(h.seq, h.type, h.payload) for h in store.list_history(wf_id)],
        "jobs": sorted((j.kind, j.state, j.attempt, j.last_error) for j in jobs),
    }


async def test_workflow_resolve(store: Any, module_db: tuple[str, str, Path]) -> None:
    """Before, the dashboard's resolve called resolve_uncertain only: no history event,
    no workflow task."""
    name = f"same_{uuid.uuid4().hex[:8]}"
    wf_a, op_a = uncertain_op(store, name)
    wf_b, op_b = uncertain_op(store, name)
    qctl(module_db, "workflows", "resolve", str(op_a), "complete")
    app_done = lambda: store.find_job(op_b).state != "uncertain"  # noqa: E731

    app = QctlTop(store, location="test", live=False)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(WorkflowDetailScreen(wf_b))
        await until(pilot, lambda: str(op_b) in row_keys(app, "#wf-jobs"))
        jobs = table(app, "#wf-jobs")
        jobs.focus()
        jobs.move_cursor(row=row_keys(app, "#wf-jobs").index(str(op_b)))
        await pilot.press("Z")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, app_done)
        await until(pilot, lambda: len(store.list_history(wf_b)) == len(store.list_history(wf_a)))
    a, b = workflow_rows(store, wf_a), workflow_rows(store, wf_b)
    assert a == b
    assert a["history"][-1][1] == "OperationCompleted"
