"""Workflows: executions, their history, and uncertain operations to resolve."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.systems.azync.ops import workflows as ops_wf
from qctl.systems.azync.tui.columns import JOB_ATTEMPT, JOB_ERROR, JOB_KIND, job_columns
from qctl.systems.azync.tui.jobs import JOB_WHEN, JobDetailScreen
from qctl.tui import fmt
from qctl.tui.base import Dashboarded
from qctl.tui.panes import DetailScreen, Pane, RecordView, StatePicked
from qctl.tui.widgets import (
    CELL_MAX,
    ChoiceDialog,
    Column,
    cells,
    flex,
    refill,
    selected_key,
    table,
)
from qctl_store.types import (
    HistoryEvent,
    Job,
    JobSearch,
    JobState,
    Source,
    UncertainDecision,
    WorkflowExecutionView,
    WorkflowFilter,
    WorkflowState,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

EXECUTIONS = 100
RUN_JOBS = 200
"""An execution's newest jobs (decision tasks and operations) shown in its detail."""


class WorkflowActions(Dashboarded):
    def current_workflow(self) -> uuid.UUID | None:
        raise NotImplementedError

    def current_operation(self) -> Job | None:
        """The operation job ``Z`` resolves: a selected row of an uncertain one."""
        raise NotImplementedError

    def action_wf_cancel(self) -> None:
        wf = self.current_workflow()
        if wf is None:
            self.top.notify("no execution selected", severity="warning")
            return
        self.top.act(
            lambda plan: f"cancel workflow execution {plan.name} {wf} ({plan.state})?",
            lambda store, dry_run: ops_wf.cancel(store, wf, dry_run),
            lambda done: f"cancelled: {done.id}",
        )

    def action_wf_resolve(self) -> None:
        """The same call as ``qctl workflows resolve``: the outcome is recorded in the
        history and the workflow task scheduled."""
        job = self.current_operation()
        if job is None or job.state != JobState.UNCERTAIN:
            self.top.notify("select an uncertain operation", severity="warning")
            return
        op = job.id

        def chosen(choice: str | None) -> None:
            if choice:
                decision = UncertainDecision(choice)
                self.top.act(
                    f"resolve operation {op} ({job.kind}) as {decision}?",
                    lambda store, dry_run: ops_wf.resolve(store, op, decision, None, dry_run),
                    lambda done: f"resolved {done.job_id}: {done.decision}",
                )

        self.top.push_screen(
            ChoiceDialog(f"resolve uncertain operation {op}", [d.value for d in UncertainDecision]),
            chosen,
        )


@dataclass
class WorkflowsData:
    executions: list[WorkflowExecutionView]
    total: int
    uncertain: list[Job]


EXECUTION_COLUMNS: tuple[Column[WorkflowExecutionView], ...] = (
    Column("id", "the execution's id (short)", lambda w: fmt.short_id(w.id)),
    flex("name", "the workflow", lambda w: w.name),
    Column("version", "the code version", lambda w: w.version),
    Column("state", "the execution's state", lambda w: fmt.state_text(w.state)),
    Column("queue", "its task queue", lambda w: w.task_queue),
    Column("created", "when it started", lambda w: w.created_at, time="ago"),
    flex("reason", "why it failed", lambda w: w.failure_reason),
)
UNCERTAIN_COLUMNS: tuple[Column[Job], ...] = (
    Column("operation job", "the job whose outcome is unknown", lambda j: str(j.id)),
    Column("execution", "its workflow execution (short id)", lambda j: fmt.short_id(j.run_id)),
    JOB_KIND,
    JOB_ATTEMPT,
    Column("since", "uncertain since", lambda j: j.failed_at or j.enqueued_at, time="ago"),
    JOB_ERROR,
)
RUN_JOB_COLUMNS = job_columns(
    Column("job", "a workflow task or operation (short id)", lambda j: fmt.short_id(j.id)),
    JOB_KIND,
    tail=(JOB_WHEN,),
)
"""An execution's jobs, on its detail screen."""
HISTORY_COLUMNS: tuple[Column[HistoryEvent], ...] = (
    Column("seq", "history order", lambda h: h.seq),
    Column("type", "what the history records", lambda h: h.type),
    Column("at", "when it was recorded", lambda h: h.created_at, time="when"),
    flex("payload", "the history record", lambda h: fmt.json_text(h.payload, CELL_MAX)),
)


class WorkflowsPane(WorkflowActions, StatePicked, Pane[WorkflowsData]):
    BINDINGS = [
        StatePicked.STATE_BINDING,
        Binding("X", "wf_cancel", "Cancel"),
        Binding("Z", "wf_resolve", "Resolve"),
    ]
    filter_hint = "workflow name (exact)"
    state: WorkflowState | None = None
    states = tuple(WorkflowState)
    state_type = WorkflowState
    data: WorkflowsData | None = None
    tables = (
        ("Workflows", EXECUTION_COLUMNS),
        ("Uncertain operations", UNCERTAIN_COLUMNS),
        ("Workflow detail, jobs", RUN_JOB_COLUMNS),
        ("Workflow detail, history", HISTORY_COLUMNS),
    )

    def compose(self) -> ComposeResult:
        yield Static(id="wf-filter", classes="bar")
        yield from self.compose_filter()
        yield table("executions", *EXECUTION_COLUMNS)
        yield table("uncertain", *UNCERTAIN_COLUMNS)

    def fetch(self, store: ConsoleStore) -> WorkflowsData:
        execs, total = store.list_workflow_executions(
            WorkflowFilter(self.filter_text, self.state), 0, EXECUTIONS
        )
        uncertain = store.search_jobs(
            JobSearch(source=Source.WORKFLOW, state=JobState.UNCERTAIN), limit=100
        )
        return WorkflowsData(execs, total, uncertain)

    def show(self, data: WorkflowsData) -> None:
        self.data = data
        now = self.top.clock()
        refill(
            self.query_one("#executions", DataTable),
            [(str(w.id), cells(EXECUTION_COLUMNS, w, now)) for w in data.executions],
        )
        refill(
            self.query_one("#uncertain", DataTable),
            [(str(j.id), cells(UNCERTAIN_COLUMNS, j, now)) for j in data.uncertain],
        )
        self.query_one(
            "#uncertain", DataTable
        ).border_title = f"uncertain operations: {len(data.uncertain)} (Z resolve)"
        self.query_one("#wf-filter", Static).update(
            Text.assemble(
                ("name ", "dim"),
                (self.filter_text or "all", "bold"),
                ("  state ", "dim"),
                (self.state.value if self.state else "all", "bold"),
                ("   shown ", "dim"),
                f"{len(data.executions)} of {data.total} executions",
            )
        )

    def current_workflow(self) -> uuid.UUID | None:
        key = selected_key(self.query_one("#executions", DataTable))
        return uuid.UUID(key) if key else None

    def current_operation(self) -> Job | None:
        key = selected_key(self.query_one("#uncertain", DataTable))
        jobs = self.data.uncertain if self.data else []
        return next((j for j in jobs if str(j.id) == key), None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = uuid.UUID(str(event.row_key.value))
        if event.data_table.id == "executions":
            self.top.push_screen(WorkflowDetailScreen(key))
        else:
            self.top.push_screen(JobDetailScreen(key))


@dataclass
class WorkflowDetail:
    execution: WorkflowExecutionView
    history: list[HistoryEvent]
    jobs: list[Job]


def workflow_text(w: WorkflowExecutionView, now: datetime) -> Text:
    t = fmt.heading(f"{w.name} {w.version}", w.id, w.state)
    t.append(f"  queue {fmt.safe(w.task_queue)}  created {fmt.ago(w.created_at, now)}\n")
    if w.business_idempotency_key:
        t.append(f"business key {fmt.safe(w.business_idempotency_key)}\n")
    if w.failure_reason:
        t.append(f"reason {fmt.safe(w.failure_reason)}\n", "red")
    t.append(f"input {fmt.json_text(w.input, 300)}\n")
    if w.result is not None:
        t.append(f"result {fmt.json_text(w.result, 300)}\n")
    return t


class WorkflowView(RecordView[WorkflowDetail]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="wf-text")
            yield table("wf-jobs", *RUN_JOB_COLUMNS)
            yield table("history", *HISTORY_COLUMNS)

    def fetch(self, store: ConsoleStore) -> WorkflowDetail:
        return WorkflowDetail(
            store.get_workflow_execution(self.record_id),
            store.list_history(self.record_id),
            store.search_jobs(JobSearch(run_id=self.record_id), limit=RUN_JOBS),
        )

    def render_detail(self) -> None:
        data = self.detail
        if data is None:
            return
        now = self.top.clock()
        self.query_one("#wf-text", Static).update(workflow_text(data.execution, now))
        jobs = self.query_one("#wf-jobs", DataTable)
        refill(jobs, [(str(j.id), cells(RUN_JOB_COLUMNS, j, now)) for j in data.jobs])
        jobs.border_title = f"jobs: {len(data.jobs)} (enter detail, Z resolve uncertain)"
        history = self.query_one("#history", DataTable)
        history.border_title = f"history: {len(data.history)} event(s)"
        refill(history, [(str(h.seq), cells(HISTORY_COLUMNS, h, now)) for h in data.history])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "wf-jobs":
            self.top.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))


class WorkflowDetailScreen(WorkflowActions, DetailScreen):
    BINDINGS = [Binding("X", "wf_cancel", "Cancel"), Binding("Z", "wf_resolve", "Resolve")]

    def view(self) -> WorkflowView:
        return WorkflowView(self.record_id)

    def current_workflow(self) -> uuid.UUID | None:
        return self.record_id

    def current_operation(self) -> Job | None:
        view = self.query_one(WorkflowView)
        key = selected_key(self.query_one("#wf-jobs", DataTable))
        jobs = view.detail.jobs if view.detail else []
        return next((j for j in jobs if str(j.id) == key), None)
