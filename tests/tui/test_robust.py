"""The dashboard never crashes on data, and an unexpected error ends it cleanly."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from qctl.systems.azync.tui import DagGraphScreen, JobDetailScreen, JobsPane, OverviewPane
from qctl.tui.app import QctlTop
from qctl_store.types import (
    DAGDep,
    DAGParams,
    DAGState,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    JobState,
    OnFailurePolicy,
    Source,
)
from tests.conformance.helpers import lease_one, token
from tests.tui.helpers import SIZE, cells, row_keys, screen_text, until

pytestmark = pytest.mark.timeout(120)


def kind() -> str:
    return f"rob_{uuid.uuid4().hex[:10]}"


def app_for(store: Any) -> QctlTop:
    return QctlTop(store, location="test", live=False)


def die(store: Any, k: str, error: str) -> uuid.UUID:
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k))
    store.dead(job.id, job.lease_token, error)
    return job.id


async def test_detail_of_a_job_retried_and_dead_again(store: Any) -> None:
    """Both lifetimes number their attempt 1 (before: DuplicateKey on the table)."""
    k = kind()
    store.enqueue(EnqueueParams(kind=k, max_attempts=1, max_attempts_explicit=True))
    job_id = die(store, k, "first life")
    store.retry_job(Source.QUEUE, job_id)
    die(store, k, "second life")
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(JobDetailScreen(job_id))
        await until(pilot, lambda: len(row_keys(app, "#attempts")) == 2)
        rows = [cells(app, "#attempts", key) for key in row_keys(app, "#attempts")]
        assert [(r[0], r[1]) for r in rows] == [("1", "1"), ("2", "1")]
        assert "first life" in rows[0][3] and "second life" in rows[1][3]


def saga(name: str) -> DAGParams:
    return DAGParams(
        name=name,
        tasks=[
            DAGTask("reserve", f"{name}.reserve", compensation_kind=f"{name}.release"),
            DAGTask("charge", f"{name}.charge", max_attempts=1),
        ],
        deps=[DAGDep("charge", "reserve")],
        on_failure=OnFailurePolicy.SUSPEND,
    )


async def test_dag_graph_right_after_compensating_and_with_missing_rows(store: Any) -> None:
    name = kind()
    p = saga(name)
    store.create_dag(p)
    job = lease_one(store, Source.DAG, f"{name}.reserve")
    store.ack_task_result(job.id, token(job), {"ok": 1})
    store.promote_unblocked()
    job = lease_one(store, Source.DAG, f"{name}.charge")
    store.dead(job.id, token(job), "declined")
    store.apply_failure_policy()
    store.compensate_dag(p.id)
    assert store.get_dag(p.id).state in (DAGState.COMPENSATING, DAGState.FAILED)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DagGraphScreen(p.id))
        await until(pilot, lambda: "reserve" in row_keys(app, "#dag-tasks"))
        assert any(k.startswith("comp:") for k in row_keys(app, "#dag-tasks"))
        # A task row gone (deleted behind the DAG's back): drawn "?", no table line.
        (charge,) = [t for t in store.dag_tasks(p.id) if t.task_key == "charge"]
        store.delete_job(Source.DAG, charge.id, JobState.DEAD)
        app.reload_screen()
        await until(pilot, lambda: "charge" not in row_keys(app, "#dag-tasks"))
        await until(pilot, lambda: "charge [?]" in screen_text(app))
        assert isinstance(app.screen, DagGraphScreen)


async def test_a_filter_on_an_unknown_kind_says_so(store: Any) -> None:
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(None, "nosuch.kind", None)
        said = "no kind named 'nosuch.kind'"
        await until(pilot, lambda: any(said in str(n.message) for n in app._notifications))


async def test_an_unexpected_error_exits_non_zero_with_one_line(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Any, data: Any) -> None:
        raise RuntimeError("unexpected\nsecond line")

    printed: list[str] = []
    monkeypatch.setattr(OverviewPane, "show", broken)
    monkeypatch.setattr(
        QctlTop,
        "_print_error_renderables",
        lambda self: printed.extend(str(r) for r in self._exit_renderables),
    )
    app = app_for(store)
    with pytest.raises(RuntimeError):
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 1
    assert printed == ["qctl: error: qctl top stopped: RuntimeError: unexpected second line"]


async def test_database_text_is_escaped_in_details_and_notices(store: Any) -> None:
    """A task key, kind or signal name with an escape sequence (OSC 52 would write the
    clipboard) is shown escaped in the DAG graph, the task detail and a refusal."""
    evil = "k\x1b]52;c;cHduZWQ=\x07"
    name = kind()
    p = DAGParams(
        name=name,
        tasks=[DAGTask(evil, f"{name}.{evil}"), DAGTask("b", f"{name}.b")],
        deps=[DAGDep("b", evil)],
    )
    store.create_dag(p)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DagGraphScreen(p.id))
        await until(pilot, lambda: len(row_keys(app, "#dag-tasks")) == 2)
        await until(pilot, lambda: "k\\x1b]52" in screen_text(app))
        assert "\x1b" not in screen_text(app)
        app.notify(f"refused: {evil} [bold]x[/bold]")
        await pilot.pause(0.2)
        (notice,) = [n for n in app._notifications if "refused" in n.message]
        assert notice.message == "refused: k\\x1b]52;c;cHduZWQ=\\x07 [bold]x[/bold]"
        assert not notice.markup


async def test_a_signal_no_task_waits_for_is_refused_before_asking(store: Any) -> None:
    from qctl.tui.widgets import ConfirmDialog, PromptDialog

    name = kind()
    p = DAGParams(name=name, tasks=[DAGTask("a", f"{name}.a")])
    store.create_dag(p)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DagGraphScreen(p.id))
        await until(pilot, lambda: len(row_keys(app, "#dag-tasks")) == 1)
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await pilot.press(*"wrongname", "enter", "enter", "enter")  # name, payload, id
        said = "waits for a signal named 'wrongname'"
        await until(pilot, lambda: any(said in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, ConfirmDialog)
