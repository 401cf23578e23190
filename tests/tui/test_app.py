"""Pilot tests of ``qctl top`` on both backends: every screen, every action's effect in
the store, declined confirmations, read-only mode, disconnection and recovery."""

from __future__ import annotations

import gc
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any, cast

import pytest
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from qctl import startup
from qctl.cli.context import CliContext
from qctl.core.verbs import Selection
from qctl.systems.azync.ops import jobs as ops_jobs
from qctl.systems.azync.tui import (
    DagGraphScreen,
    DagsPane,
    EventDetailScreen,
    JobDetailScreen,
    JobsPane,
    WorkflowDetailScreen,
)
from qctl.tui.app import QctlTop
from qctl.tui.live import DISCONNECTED
from qctl.tui.widgets import ConfirmDialog, HelpScreen, PromptDialog, StatePicker
from qctl_kit import errors
from qctl_store.types import (
    KIND_SIGNAL,
    DAGDep,
    DAGParams,
    DAGState,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    JobState,
    OnFailurePolicy,
    PublishParams,
    ScheduleOperationParams,
    Source,
    Subscriber,
    WorkflowStartParams,
    WorkflowState,
)
from tests.tui.helpers import SIZE, cells, footer_keys, row_keys, screen_text, table, until

pytestmark = pytest.mark.timeout(120)


def kind() -> str:
    return f"tui_{uuid.uuid4().hex[:10]}"


def app_for(store: Any, **kw: Any) -> QctlTop:
    kw.setdefault("live", False)
    kw.setdefault("location", "test")
    return QctlTop(store, **kw)


def dead_job(store: Any, k: str) -> uuid.UUID:
    store.enqueue(EnqueueParams(kind=k, payload={"secret": "s3"}, max_attempts=1))
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k))
    store.dead(job.id, job.lease_token, "boom")
    return job.id


async def open_jobs(pilot: Any, app: QctlTop, k: str, state: JobState | None = None) -> None:
    await pilot.press("2")
    pane = app.screen.query_one(JobsPane)
    pane.open_with(Source.QUEUE, k, state)
    # the page for this search, not one the tab's first load fetched before it
    await until(pilot, lambda: pane.current and len(row_keys(app, "#jobs-table")) >= 1)
    table(app, "#jobs-table").focus()


async def confirm(pilot: Any, app: QctlTop, key: str, answer: str) -> None:
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
    await pilot.press(answer)
    await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))


# --- screens ----------------------------------------------------------------------------


async def test_overview_shows_depths_dag_states_and_ledger(store: Any) -> None:
    k = kind()
    for _ in range(3):
        store.enqueue(EnqueueParams(kind=k))
    dead_job(store, k)
    name = kind()
    store.create_dag(DAGParams(name=name, tasks=[DAGTask("a", kind())]))
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        key = f"queue\x1f{k}"
        await until(pilot, lambda: key in row_keys(app, "#queues"))
        row = cells(app, "#queues", key)
        assert row[:4] == ["queue", k, "3", "0"] and row[5:9] == ["0", "0", "0", "1"]
        assert name in row_keys(app, "#dag-states")
        text = screen_text(app)
        assert "event ledger" in text and "daily throughput" in text
        assert "last hour per minute" in text
        # sortable: o cycles the column, / filters rows
        await pilot.press("o")
        assert "sorted by pending" in str(table(app, "#queues").border_title)
        await pilot.press("slash", *k, "enter")
        await until(pilot, lambda: row_keys(app, "#queues") == [key])
        # enter drills into the jobs of that row
        table(app, "#queues").focus()
        await pilot.press("enter")
        await until(
            pilot,
            lambda: {cells(app, "#jobs-table", r)[2] for r in row_keys(app, "#jobs-table")} == {k},
        )


async def test_help_screen_and_quit(store: Any) -> None:
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await until(pilot, lambda: "drill in" in screen_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)


async def test_the_footer_is_rebuilt_only_when_its_keys_change(store: Any) -> None:
    k = kind()
    dead_job(store, k)
    app = app_for(store)

    def shown() -> list[tuple[str, str]]:
        return [(k.key, k.description) for k in app.screen.query(FooterKey)]

    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ("q", "Quit") in shown())
        widgets = list(app.screen.query(FooterKey))
        app.screen.refresh_bindings()  # as every focus change does: the same keys
        await pilot.pause()
        assert all(a is b for a, b in zip(app.screen.query(FooterKey), widgets, strict=True))
        overview = shown()
        await open_jobs(pilot, app, k)
        await until(pilot, lambda: ("R", "Retry") in shown())
        await pilot.press("1")
        await until(pilot, lambda: shown() == overview)


async def test_jobs_browser_filters_and_keyset_pages(store: Any) -> None:
    k = kind()
    for i in range(120):
        store.enqueue(EnqueueParams(kind=k, meta={"n": str(i % 2)}))
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k)
        first = row_keys(app, "#jobs-table")
        assert len(first) == 50
        await pilot.press("n")
        await until(pilot, lambda: row_keys(app, "#jobs-table")[0] not in first)
        second = row_keys(app, "#jobs-table")
        assert len(second) == 50 and not set(first) & set(second)
        await pilot.press("n")
        await until(pilot, lambda: len(row_keys(app, "#jobs-table")) == 20)
        await pilot.press("b", "b")
        await until(pilot, lambda: row_keys(app, "#jobs-table") == first)
        assert "of 120" in screen_text(app)
        # meta filter through the / bar
        await pilot.press("slash")
        await pilot.press("end", *" n=1", "enter")
        await until(pilot, lambda: "of 60" in screen_text(app))
        # the state picker: all -> pending (typing picks the first state it starts)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, StatePicker))
        await pilot.press("p", "enter")
        await until(pilot, lambda: "state pending" in screen_text(app))


async def test_job_detail_hides_payload_until_asked_and_lists_attempts(store: Any) -> None:
    k = kind()
    job_id = dead_job(store, k)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        await until(pilot, lambda: str(job_id) in screen_text(app))
        text = screen_text(app)
        assert "hidden (press v" in text and "s3" not in text
        assert "boom" in text
        await until(pilot, lambda: len(row_keys(app, "#attempts")) == 1)
        await pilot.press("v")
        await until(pilot, lambda: '"secret": "s3"' in screen_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, JobDetailScreen))


async def test_retry_confirmed_and_declined(store: Any) -> None:
    k = kind()
    job_id = dead_job(store, k)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k)
        await confirm(pilot, app, "R", "n")
        await pilot.pause(0.3)
        assert store.get_job(Source.QUEUE, job_id).state == JobState.DEAD
        await confirm(pilot, app, "R", "y")
        await until(pilot, lambda: store.get_job(Source.QUEUE, job_id).state == JobState.PENDING)
        await until(pilot, lambda: "pending" in cells(app, "#jobs-table", str(job_id))[3])


async def test_run_now_pause_resume_archive_delete(store: Any) -> None:
    k = kind()
    store.enqueue(EnqueueParams(kind=k, delay=timedelta(hours=1)))
    [job] = store.list_jobs(Source.QUEUE, _filter(k))[0]
    app = app_for(store)

    def state() -> JobState:
        return store.get_job(Source.QUEUE, job.id).state

    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k)
        await confirm(pilot, app, "P", "y")
        await until(pilot, lambda: state() == JobState.PAUSED)
        await until(pilot, lambda: "paused" in cells(app, "#jobs-table", str(job.id))[3])
        await confirm(pilot, app, "U", "y")
        await until(pilot, lambda: state() == JobState.SCHEDULED)
        await until(pilot, lambda: "scheduled" in cells(app, "#jobs-table", str(job.id))[3])
        await confirm(pilot, app, "N", "y")
        await until(pilot, lambda: state() == JobState.PENDING)
        await until(pilot, lambda: "pending" in cells(app, "#jobs-table", str(job.id))[3])
        await confirm(pilot, app, "A", "y")
        await until(pilot, lambda: state() == JobState.DEAD)
        await until(pilot, lambda: "dead" in cells(app, "#jobs-table", str(job.id))[3])
        await confirm(pilot, app, "D", "y")
        await until(pilot, lambda: _gone(store, job.id))
        await until(pilot, lambda: row_keys(app, "#jobs-table") == [])


def _filter(k: str) -> Any:
    from qctl_store.types import JobFilter

    return JobFilter(kind=k)


def _gone(store: Any, job_id: uuid.UUID) -> bool:
    try:
        store.find_job(job_id)
    except errors.NotFound:
        return True
    return False


async def test_action_on_a_job_that_moved_on_says_so(store: Any) -> None:
    k = kind()
    job_id = dead_job(store, k)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k)
        store.retry_job(Source.QUEUE, job_id)  # someone else was faster
        await confirm(pilot, app, "A", "y")  # archive needs pending/scheduled: it is pending
        await until(pilot, lambda: store.get_job(Source.QUEUE, job_id).state == JobState.DEAD)
        # Dead is not pausable: the plan refuses before any question, saying why.
        await pilot.press("P")
        said = "nothing to pause: skipped 1 (1 dead)"
        await until(pilot, lambda: any(said in str(n.message) for n in app._notifications))
        assert not isinstance(app.screen, ConfirmDialog)


async def test_read_only_hides_and_refuses_actions(store: Any) -> None:
    k = kind()
    job_id = dead_job(store, k)
    # the location `qctl --read-only top` passes: describe() carries the one label
    where = CliContext(dsn="postgresql://postgres@db/test", schema="rv_newcomer", read_only=True)
    app = app_for(store, read_only=True, location=where.describe())
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "schema=rv_newcomer [read-only]" in screen_text(app))
        assert screen_text(app).count("read-only") == 1
        await open_jobs(pilot, app, k)
        keys = footer_keys(app)
        assert {"s", "t", "slash"} <= keys
        assert not keys & {"R", "N", "P", "U", "A", "D"}
        await pilot.press("R", "D")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ConfirmDialog)
        assert store.get_job(Source.QUEUE, job_id).state == JobState.DEAD
        assert "read-only" in screen_text(app)
        # the app-level guard too: a verb run by the engine is refused outright
        app.act_verb(ops_jobs.RETRY, Selection.of_ids([str(job_id)]))
        await pilot.pause(0.2)
        assert store.get_job(Source.QUEUE, job_id).state == JobState.DEAD


# --- DAGs -------------------------------------------------------------------------------


def diamond(name: str, policy: OnFailurePolicy = OnFailurePolicy.SUSPEND) -> DAGParams:
    k = kind()
    return DAGParams(
        name=name,
        tasks=[
            DAGTask("root", k, compensation_kind=f"{k}_undo"),
            DAGTask("fan_a", k),
            DAGTask("fan_b", k),
            DAGTask("sink", k, max_attempts=1),
        ],
        deps=[
            DAGDep("fan_a", "root"),
            DAGDep("fan_b", "root"),
            DAGDep("sink", "fan_a"),
            DAGDep("sink", "fan_b"),
        ],
        on_failure=policy,
    )


async def open_graph(pilot: Any, app: QctlTop, name: str, dag_id: uuid.UUID) -> None:
    await pilot.press("3")
    app.screen.query_one(DagsPane).open_with(name)
    await until(pilot, lambda: row_keys(app, "#dag-runs") == [str(dag_id)])
    assert name in row_keys(app, "#dag-names")
    table(app, "#dag-runs").focus()
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, DagGraphScreen))
    await until(pilot, lambda: len(row_keys(app, "#dag-tasks")) >= 4)


def dag_state(store: Any, dag_id: uuid.UUID) -> DAGState:
    return store.get_dag(dag_id).state


async def test_dag_graph_draws_the_run_and_selects_tasks(store: Any) -> None:
    name = kind()
    p = diamond(name)
    store.create_dag(p)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, app, name, p.id)
        text = screen_text(app)
        assert "root [pending]─┬─▶fan_a [blocked]─┬─▶sink [blocked]" in text
        assert "└─▶fan_b [blocked]─┘" in text
        assert row_keys(app, "#dag-tasks") == ["root", "fan_a", "fan_b", "sink"]
        await pilot.press("down")
        await until(pilot, lambda: "needed by: sink" in screen_text(app))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, DagGraphScreen))


async def test_dag_pause_retry_cancel_from_the_graph(store: Any) -> None:
    name = kind()
    p = diamond(name)
    store.create_dag(p)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, app, name, p.id)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await pilot.press("enter")  # default reason
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: dag_state(store, p.id) == DAGState.PAUSED)
        await until(pilot, lambda: "paused from qctl top" in screen_text(app))
        await confirm(pilot, app, "R", "y")
        await until(pilot, lambda: dag_state(store, p.id) == DAGState.RUNNING)
        await confirm(pilot, app, "X", "n")
        assert dag_state(store, p.id) == DAGState.RUNNING
        await confirm(pilot, app, "X", "y")
        await until(pilot, lambda: dag_state(store, p.id) == DAGState.CANCELLED)


async def test_dag_compensate_draws_the_compensation(store: Any) -> None:
    name = kind()
    p = diamond(name)
    store.create_dag(p)
    root_kind = p.tasks[0].kind
    [job] = store.dequeue_batch(Source.DAG, DequeueParams(kind=root_kind))
    store.ack_task_result(job.id, job.lease_token, {"ok": 1})
    store.promote_unblocked()
    [running] = store.dequeue_batch(Source.DAG, DequeueParams(kind=root_kind, limit=1))
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, app, name, p.id)
        # The saga guard of the operations layer: refused while an original task runs.
        await pilot.press("C")
        await until(pilot, lambda: _notified(app, f"task(s) {running.task_key} (active)"))
        assert dag_state(store, p.id) == DAGState.RUNNING
        store.ack_task_result(running.id, running.lease_token, {"ok": 1})
        # The question lists what the action cancels and undoes, as the CLI's does.
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        question = cast(ConfirmDialog, app.screen).question
        assert "leaves running no task; inserts compensations comp:root?" in question
        await pilot.press("y")
        await until(pilot, lambda: dag_state(store, p.id) == DAGState.COMPENSATING)
        await until(pilot, lambda: "comp:root [pending]" in screen_text(app))
        assert "comp:root" in row_keys(app, "#dag-tasks")


async def test_dag_signal_from_the_list(store: Any) -> None:
    name = kind()
    p = DAGParams(name=name, tasks=[DAGTask("gate", KIND_SIGNAL, signal_name="go")])
    store.create_dag(p)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        app.screen.query_one(DagsPane).open_with(name)
        await until(pilot, lambda: row_keys(app, "#dag-runs") == [str(p.id)])
        table(app, "#dag-runs").focus()
        await pilot.press("t", "r", "enter")  # the state picker: running
        await until(pilot, lambda: "name " + name in screen_text(app))
        assert app.screen.query_one(DagsPane).state == DAGState.RUNNING
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        # prefilled with the signal the run waits on (read for the list, which has no tasks)
        assert app.screen.query_one("#field-name", Input).value == "go"
        await pilot.press("enter", *'{"ok":1}', "enter", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        # the question says what the signal will do, and to a run in which state
        assert app.screen.question == (  # type: ignore[attr-defined]
            f"Signal 'go' to DAG run {p.id} (running): completes its waiting task with the payload?"
        )
        await pilot.press("y")
        await until(pilot, lambda: store.task_results(p.id)["gate"].result == {"ok": 1})


async def test_dag_signal_from_the_graph_offers_the_awaited_signal(store: Any) -> None:
    name = kind()
    p = DAGParams(name=name, tasks=[DAGTask("gate", KIND_SIGNAL, signal_name="go")])
    store.create_dag(p)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(DagGraphScreen(p.id))
        await until(pilot, lambda: "waiting" in cells(app, "#dag-tasks", "gate")[2])
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        assert app.screen.query_one("#field-name", Input).value == "go"
        await pilot.press("enter", *'{"ok":2}', "enter", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: store.task_results(p.id)["gate"].result == {"ok": 2})


# --- events and workflows ---------------------------------------------------------------


async def test_events_ledger_deliveries_and_replay(store: Any) -> None:
    event_type, sub = kind(), kind()
    store.register_subscriber(Subscriber(sub, event_type))
    pub = PublishParams(type=event_type, payload={"hidden": "p1"})
    store.publish(pub)
    store.publish(PublishParams(type=event_type, payload={}))  # another event's delivery
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await until(pilot, lambda: f"{event_type}\x1f{sub}" in row_keys(app, "#subscribers"))
        await pilot.press("slash", *event_type, "enter")
        await until(pilot, lambda: len(row_keys(app, "#events-table")) == 2)
        events = table(app, "#events-table")
        events.focus()
        events.move_cursor(row=row_keys(app, "#events-table").index(str(pub.id)))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, EventDetailScreen))
        await until(pilot, lambda: len(row_keys(app, "#deliveries")) == 1)
        [delivery] = row_keys(app, "#deliveries")
        assert store.find_job(uuid.UUID(delivery)).event_id == pub.id
        assert "p1" not in screen_text(app)
        await confirm(pilot, app, "R", "y")
        await until(pilot, lambda: len(row_keys(app, "#deliveries")) == 2)
        total = store.list_jobs(Source.EVENT, _filter(sub))[1]
        assert total == 3


def uncertain_op(store: Any) -> tuple[uuid.UUID, uuid.UUID]:
    name = kind()
    wf = WorkflowStartParams(name=name, input={"n": 1})
    store.start_workflow(wf)
    op_kind = f"$op:{kind()}@1"
    op = store.schedule_operation(
        ScheduleOperationParams(
            workflow_id=wf.id,
            kind=op_kind,
            execution_key=f"{wf.id}:1",
            meta={"workflow_name": name},
            max_attempts=3,
        )
    )
    [job] = store.dequeue_batch(Source.WORKFLOW, DequeueParams(kind=op_kind))
    store.mark_uncertain(op, job.lease_token, "ambiguous")
    return wf.id, op


async def test_workflow_uncertain_resolve_and_cancel(store: Any) -> None:
    wf_id, op = uncertain_op(store)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        await until(pilot, lambda: str(op) in row_keys(app, "#uncertain"))
        await until(pilot, lambda: str(wf_id) in row_keys(app, "#executions"))
        ut = table(app, "#uncertain")
        ut.focus()
        ut.move_cursor(row=row_keys(app, "#uncertain").index(str(op)))
        await pilot.press("Z")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: store.find_job(op).state == JobState.SUCCEEDED)
        await until(
            pilot, lambda: store.get_workflow_execution(wf_id).state == WorkflowState.RUNNING
        )
        et = table(app, "#executions")
        et.focus()
        et.move_cursor(row=row_keys(app, "#executions").index(str(wf_id)))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, WorkflowDetailScreen))
        await until(pilot, lambda: "WorkflowStarted" in screen_text(app))
        await confirm(pilot, app, "X", "y")
        await until(
            pilot, lambda: store.get_workflow_execution(wf_id).state == WorkflowState.CANCELLED
        )


async def test_workflow_detail_lists_its_jobs_and_resolves_there(store: Any) -> None:
    wf_id, op = uncertain_op(store)
    _, other_op = uncertain_op(store)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(WorkflowDetailScreen(wf_id))
        await until(pilot, lambda: str(op) in row_keys(app, "#wf-jobs"))
        keys = row_keys(app, "#wf-jobs")
        jobs = [store.find_job(uuid.UUID(k)) for k in keys]
        assert str(other_op) not in keys
        assert {j.run_id for j in jobs} == {wf_id}
        assert sorted(j.kind.split(":")[0] for j in jobs) == ["$op", "$wf"]
        assert "uncertain" in cells(app, "#wf-jobs", str(op))[2]
        jt = table(app, "#wf-jobs")
        jt.focus()
        jt.move_cursor(row=next(i for i, j in enumerate(jobs) if j.id != op))
        await pilot.press("Z")  # not an uncertain operation: refused without a dialog
        await pilot.pause(0.1)
        assert isinstance(app.screen, WorkflowDetailScreen)
        jt.move_cursor(row=keys.index(str(op)))
        await pilot.press("Z", "c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: store.find_job(op).state == JobState.SUCCEEDED)
        await until(pilot, lambda: "succeeded" in cells(app, "#wf-jobs", str(op))[2])
        jt.move_cursor(row=row_keys(app, "#wf-jobs").index(str(op)))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        await until(pilot, lambda: f"workflow run {wf_id}" in " ".join(screen_text(app).split()))


# --- live behaviour ---------------------------------------------------------------------


class Flaky:
    """A store whose calls fail while ``down`` is set, like a database that went away;
    ``calls`` counts them by name."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.down = False
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not callable(attr) or name == "changes":
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            self.calls[name] += 1
            if self.down:
                raise errors.Unavailable("connection refused (database down)")
            return attr(*args, **kw)

        return call


async def test_lost_database_shows_disconnected_and_recovers(store: Any) -> None:
    flaky = Flaky(store)
    app = app_for(flaky)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        flaky.down = True
        await pilot.press("r")
        await until(pilot, lambda: app.mode == DISCONNECTED)
        assert "database down" in screen_text(app)
        flaky.down = False
        await pilot.press("r")
        await until(pilot, lambda: app.mode != DISCONNECTED)
        assert "database down" not in screen_text(app)


async def test_a_shown_tab_is_read_once(store: Any) -> None:
    """On start the first tab is read once (TabbedContent announces its initial tab as
    activated, after the screen has loaded it), and a tab shown by its digit key once."""
    counting = Flaky(store)
    app = app_for(counting)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        await pilot.pause(0.3)
        assert counting.calls["sources_depths"] == 1
        await pilot.press("2")
        await until(pilot, lambda: app.refresh_count >= 2)
        await pilot.pause(0.3)
        assert counting.calls["search_jobs"] == 1
        assert counting.calls["sources_depths"] == 1
        await pilot.press("1")
        await until(pilot, lambda: counting.calls["sources_depths"] == 2)
        await pilot.pause(0.3)
        assert counting.calls["sources_depths"] == 2
        assert app.refresh_count == 3


async def test_the_collector_paused_for_start_up_resumes_after_the_first_frame(
    store: Any,
) -> None:
    startup.pause()
    try:
        app = app_for(store)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.refresh_count >= 1)
            await until(pilot, gc.isenabled)
            assert gc.get_freeze_count() > 0
    finally:
        startup.resume()  # if the app never got to its first frame
        gc.unfreeze()


async def test_change_hints_refresh_the_screen(store: Any) -> None:
    k = kind()
    app = app_for(store, live=True, poll_interval=0.3, min_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.feed_mode in ("live", "polling"))
        store.enqueue(EnqueueParams(kind=k))
        await until(pilot, lambda: f"queue\x1f{k}" in row_keys(app, "#queues"), timeout=10)
        await pilot.press("p")
        assert app.mode == "paused"
        store.enqueue(EnqueueParams(kind=k))
        await pilot.pause(1.0)
        assert cells(app, "#queues", f"queue\x1f{k}")[2] == "1"
        await pilot.press("p")
        await until(pilot, lambda: cells(app, "#queues", f"queue\x1f{k}")[2] == "2")


async def test_hint_storm_keeps_the_app_responsive_and_capped(store: Any) -> None:
    from qctl_kit.streams import Hub
    from qctl_store.types import Change, ChangeEntity

    hub: Hub[Change] = Hub(256, lambda: Change(entity=ChangeEntity.RESET))
    hub.set_live()

    class Stormy(Flaky):
        def changes(self) -> Any:
            return hub.subscribe()

    app = app_for(Stormy(store), live=True, min_interval=0.25)
    stop = threading.Event()

    def storm() -> None:
        while not stop.is_set():
            for _ in range(100):
                hub.publish(Change(entity=ChangeEntity.JOB, kind="storm"))
            stop.wait(0.001)

    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.feed_mode == "live")
        t = threading.Thread(target=storm)
        t.start()
        try:
            await pilot.pause(0.5)
            assert app.feed is not None
            before, t0 = app.feed.refreshes, time.monotonic()
            await pilot.press("2")  # a key press is handled during the storm
            await until(pilot, lambda: "jobs-table" in str(app.screen.focused), timeout=5)
            await pilot.pause(1.0)
            after, t1 = app.feed.refreshes, time.monotonic()
        finally:
            stop.set()
            t.join()
        assert app.feed.hints > 500
        # one refresh per 0.25 s at most, however many hints arrived
        assert after - before <= (t1 - t0) / 0.25 + 1


async def test_read_only_hides_dag_event_and_workflow_actions(store: Any) -> None:
    name = kind()
    p = diamond(name)
    store.create_dag(p)
    event_type = kind()
    pub = PublishParams(type=event_type)
    store.publish(pub)
    app = app_for(store, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, app, name, p.id)
        assert not footer_keys(app) & {"R", "C", "X", "P", "S"}
        await pilot.press("X", "C")
        await pilot.pause(0.3)
        assert isinstance(app.screen, DagGraphScreen)
        assert dag_state(store, p.id) == DAGState.RUNNING
        await pilot.press("escape")
        await app.push_screen(EventDetailScreen(pub.id))
        await until(pilot, lambda: event_type in screen_text(app))
        assert "R" not in footer_keys(app) and "v" in footer_keys(app)
        await pilot.press("escape")
        await pilot.press("5")
        await until(pilot, lambda: "executions" in screen_text(app))
        assert not footer_keys(app) & {"X", "Z"}


async def test_marked_rows_are_retried_together_after_one_confirmation(store: Any) -> None:
    k = kind()
    ids = [dead_job(store, k) for _ in range(3)]
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k, JobState.DEAD)
        pane = app.screen.query_one(JobsPane)
        await pilot.press("space", "space")
        assert len(pane.marked) == 2
        assert sum(cells(app, "#jobs-table", str(i))[0].startswith("●") for i in ids) == 2
        assert "2 marked" in screen_text(app)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Retry 2 azync jobs (2 dead: " in screen_text(app)
        await pilot.press("y")
        await until(
            pilot,
            lambda: (
                sorted(store.get_job(Source.QUEUE, i).state for i in ids)
                == [JobState.DEAD, JobState.PENDING, JobState.PENDING]
            ),
        )
        (left,) = [i for i in ids if store.get_job(Source.QUEUE, i).state == JobState.DEAD]
        assert left not in pane.marked and not pane.marked


async def test_marking_every_match_acts_on_the_filter(store: Any) -> None:
    k = kind()
    ids = [dead_job(store, k) for _ in range(3)]
    other = dead_job(store, kind())
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, k, JobState.DEAD)
        await pilot.press("asterisk")
        await until(pilot, lambda: "all 3 matching marked" in screen_text(app))
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Retry 3 azync jobs (3 dead: " in screen_text(app)
        await pilot.press("y")
        await until(
            pilot,
            lambda: {store.get_job(Source.QUEUE, i).state for i in ids} == {JobState.PENDING},
        )
        assert store.get_job(Source.QUEUE, other).state == JobState.DEAD


async def _jump(pilot: Any, app: QctlTop, key: str, text: str) -> None:
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, PromptDialog))
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, PromptDialog))


async def test_jump_opens_what_an_id_prefix_names(store: Any) -> None:
    k = kind()
    job_id = dead_job(store, k)
    dag = DAGParams(name=kind(), tasks=[DAGTask("a", kind())])
    store.create_dag(dag)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        await _jump(pilot, app, "colon", str(job_id)[:10])
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        assert app.screen.record_id == job_id
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, JobDetailScreen))
        await _jump(pilot, app, "g", str(dag.id))
        await until(pilot, lambda: isinstance(app.screen, DagGraphScreen))
        assert app.screen.record_id == dag.id
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DagGraphScreen))
        await _jump(pilot, app, "g", "0000000000")
        await until(pilot, lambda: _notified(app, "no job, DAG run, event or workflow"))
        await _jump(pilot, app, "g", "xyz")
        await until(pilot, lambda: _notified(app, "invalid id 'xyz'"))


def _notified(app: QctlTop, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


async def test_dags_open_on_the_runs_and_esc_clears_the_name(store: Any) -> None:
    name = kind()
    store.create_dag(DAGParams(name=name, tasks=[DAGTask("a", kind())]))
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        pane = app.screen.query_one(DagsPane)
        await until(pilot, lambda: app.focused is table(app, "#dag-runs"))
        pane.open_with(name)
        await until(pilot, lambda: f"name {name}" in screen_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: "name all" in screen_text(app))
        assert pane.dag_name == ""


async def test_free_text_is_part_of_a_kind_an_id_or_the_last_error(store: Any) -> None:
    k = kind()
    job_id = dead_job(store, k)  # its last error is "boom"
    store.enqueue(EnqueueParams(kind=k + "_other"))
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(Source.QUEUE, k[2:] + "_oth", None)  # part of one kind only
        await until(pilot, lambda: f"(kind {k}_other)" in screen_text(app))
        assert len(row_keys(app, "#jobs-table")) == 1
        pane.open_with(Source.QUEUE, k[2:], None)  # part of two kinds: both, and it says so
        await until(pilot, lambda: _notified(app, "is part of 2 kinds"))
        await until(pilot, lambda: len(row_keys(app, "#jobs-table")) == 2)
        pane.open_with(Source.QUEUE, "boom", JobState.DEAD)  # part of no kind: the error
        await until(pilot, lambda: "(kind, id or error contains 'boom')" in screen_text(app))
        assert str(job_id) in row_keys(app, "#jobs-table")
        # Hex digits from inside the id (dashes or not) find the job.
        middle = job_id.hex[6:16]
        pane.open_with(Source.QUEUE, middle, JobState.DEAD)
        await until(pilot, lambda: row_keys(app, "#jobs-table") == [str(job_id)])
        pane.open_with(Source.QUEUE, str(job_id)[4:18].upper(), JobState.DEAD)
        await until(pilot, lambda: row_keys(app, "#jobs-table") == [str(job_id)])
        # A word nothing contains: the bar says so, not a bare "0 of 0".
        pane.open_with(Source.QUEUE, "zzz_" + k, JobState.DEAD)
        await until(pilot, lambda: "(no such kind, and no kind, id or last" in screen_text(app))
        assert _notified(app, f"no kind named 'zzz_{k}' in source queue, and no job's kind")


async def test_leases_show_expiry_overdue_and_reaps_per_kind(store: Any) -> None:
    k = kind()
    for _ in range(3):
        store.enqueue(EnqueueParams(kind=k))
    store.dequeue_batch(Source.QUEUE, DequeueParams(kind=k, limit=2, lease=timedelta(hours=1)))
    [late] = store.dequeue_batch(
        Source.QUEUE, DequeueParams(kind=k, limit=1, lease=timedelta(milliseconds=20))
    )
    time.sleep(0.1)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("6")
        await until(pilot, lambda: str(late.id) in row_keys(app, "#lease-jobs"))
        keys = [key for key in row_keys(app, "#lease-jobs") if key]
        mine = [key for key in keys if cells(app, "#lease-jobs", key)[2] == k]
        assert mine[0] == str(late.id)  # soonest expiry first: it is already overdue
        assert cells(app, "#lease-jobs", str(late.id))[4].startswith("overdue")
        assert cells(app, "#lease-kinds", f"queue\x1f{k}")[2:4] == ["3", "1"]
        assert "overdue" in screen_text(app)


async def test_first_frame_shows_the_overview_read_before_the_app(store: Any) -> None:
    from qctl.systems.azync.tui.overview_data import fetch_overview
    from qctl.tui.preload import Preload

    k = kind()
    store.enqueue(EnqueueParams(kind=k))
    first = Preload(lambda: fetch_overview(store))
    first.result()
    flaky = Flaky(store)
    flaky.down = True  # any read the app made itself would fail
    app = app_for(flaky, preloads={"overview-pane": first})
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        assert cells(app, "#queues", f"queue\x1f{k}")[:3] == ["queue", k, "1"]
        assert app.mode != DISCONNECTED and "updated" in screen_text(app)
        await pilot.press("r")  # the next refresh reads the store
        await until(pilot, lambda: app.mode == DISCONNECTED)


async def test_a_failed_read_before_the_app_shows_disconnected(store: Any) -> None:
    from qctl.tui.preload import Preload

    def down() -> Any:
        raise errors.Unavailable("connection refused (database down)")

    app = app_for(store, preloads={"overview-pane": Preload(down)})
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.mode == DISCONNECTED)
        assert "database down" in screen_text(app)
        await pilot.press("r")
        await until(pilot, lambda: app.mode != DISCONNECTED)
