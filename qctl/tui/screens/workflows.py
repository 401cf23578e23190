"""Workflows: executions, their history, and uncertain operations to resolve."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.tui import fmt
from qctl.tui.screens.base import DetailScreen, Pane
from qctl.tui.widgets import ChoiceDialog, Loader, refill, selected_key, table
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

EXECUTIONS = 100
STATES: list[WorkflowState | None] = [None, *WorkflowState]


class WorkflowActions:
    app: Any

    def current_workflow(self) -> uuid.UUID | None:
        raise NotImplementedError

    def action_wf_cancel(self) -> None:
        wf = self.current_workflow()
        if wf is None:
            self.app.notify("no execution selected", severity="warning")
            return
        self.app.act(
            f"cancel workflow execution {wf}?",
            lambda s: s.cancel_workflow_execution(wf),
            f"cancelled: {wf}",
        )


@dataclass
class WorkflowsData:
    executions: list[WorkflowExecutionView]
    total: int
    uncertain: list[Job]


class WorkflowsPane(WorkflowActions, Pane[WorkflowsData]):
    BINDINGS = [
        Binding("t", "cycle_state", "State"),
        Binding("X", "wf_cancel", "Cancel"),
        Binding("Z", "wf_resolve", "Resolve"),
    ]
    filter_hint = "workflow name (exact)"
    state: WorkflowState | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="wf-filter", classes="bar")
        yield from self.compose_filter()
        yield table("executions", "id", "name", "version", "state", "queue", "created", "reason")
        yield table("uncertain", "operation job", "kind", "attempt", "since", "error")

    def fetch(self, store: Any) -> WorkflowsData:
        execs, total = store.list_workflow_executions(
            WorkflowFilter(self.filter_text, self.state), 0, EXECUTIONS
        )
        uncertain = store.search_jobs(
            JobSearch(source=Source.WORKFLOW, state=JobState.UNCERTAIN), limit=100
        )
        return WorkflowsData(execs, total, uncertain)

    def show(self, data: WorkflowsData) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#executions", DataTable),
            [
                (
                    str(w.id),
                    [
                        fmt.short_id(w.id),
                        w.name,
                        w.version,
                        Text(w.state.value, fmt.state_style(w.state)),
                        w.task_queue,
                        fmt.ago(w.created_at, now),
                        fmt.one_line(w.failure_reason, 40),
                    ],
                )
                for w in data.executions
            ],
        )
        refill(
            self.query_one("#uncertain", DataTable),
            [
                (
                    str(j.id),
                    [
                        str(j.id),
                        j.kind,
                        f"{j.attempt}/{j.max_attempts}",
                        fmt.ago(j.failed_at or j.enqueued_at, now),
                        fmt.one_line(j.last_error, 50),
                    ],
                )
                for j in data.uncertain
            ],
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
                (f"   {len(data.executions)} of {data.total} executions", ""),
            )
        )

    def current_workflow(self) -> uuid.UUID | None:
        key = selected_key(self.query_one("#executions", DataTable))
        return uuid.UUID(key) if key else None

    def action_cycle_state(self) -> None:
        self.state = STATES[(STATES.index(self.state) + 1) % len(STATES)]
        self.reload()

    def action_wf_resolve(self) -> None:
        key = selected_key(self.query_one("#uncertain", DataTable))
        if key is None:
            self.app.notify("no uncertain operation", severity="warning")
            return
        op = uuid.UUID(key)

        def chosen(decision: str | None) -> None:
            if decision:
                self.app.act(
                    f"resolve operation {op} as {decision}?",
                    lambda s: s.resolve_uncertain(op, decision, None),
                    f"resolved {op}: {decision}",
                )

        self.app.push_screen(
            ChoiceDialog(f"resolve uncertain operation {op}", [d.value for d in UncertainDecision]),
            chosen,
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = uuid.UUID(str(event.row_key.value))
        if event.data_table.id == "executions":
            self.app.push_screen(WorkflowDetailScreen(key))
        else:
            from qctl.tui.screens.jobs import JobDetailScreen

            self.app.push_screen(JobDetailScreen(key))


@dataclass
class WorkflowDetail:
    execution: WorkflowExecutionView
    history: list[HistoryEvent]


def workflow_text(w: WorkflowExecutionView, now: datetime) -> Text:
    t = Text()
    t.append(f"{w.name} {w.version} ", "bold")
    t.append(f"{w.id}  ", "dim")
    t.append(w.state.value, fmt.state_style(w.state))
    t.append(f"  queue {w.task_queue}  created {fmt.ago(w.created_at, now)}\n")
    if w.business_idempotency_key:
        t.append(f"business key {w.business_idempotency_key}\n")
    if w.failure_reason:
        t.append(f"reason {w.failure_reason}\n", "red")
    t.append(f"input {fmt.json_text(w.input, 300)}\n")
    if w.result is not None:
        t.append(f"result {fmt.json_text(w.result, 300)}\n")
    return t


class WorkflowView(Loader[WorkflowDetail]):
    def __init__(self, workflow_id: uuid.UUID) -> None:
        super().__init__()
        self.workflow_id = workflow_id

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="wf-text")
            yield table("history", "seq", "type", "at", "payload")

    def fetch(self, store: Any) -> WorkflowDetail:
        return WorkflowDetail(
            store.get_workflow_execution(self.workflow_id), store.list_history(self.workflow_id)
        )

    def show(self, data: WorkflowDetail) -> None:
        now = self.top.clock()
        self.query_one("#wf-text", Static).update(workflow_text(data.execution, now))
        refill(
            self.query_one("#history", DataTable),
            [
                (
                    str(h.seq),
                    [
                        h.seq,
                        h.type,
                        fmt.when(h.created_at, now),
                        fmt.one_line(json.dumps(h.payload, default=str), 80),
                    ],
                )
                for h in data.history
            ],
        )


class WorkflowDetailScreen(WorkflowActions, DetailScreen):
    BINDINGS = [Binding("X", "wf_cancel", "Cancel")]

    def __init__(self, workflow_id: uuid.UUID) -> None:
        super().__init__()
        self.workflow_id = workflow_id

    def compose(self) -> ComposeResult:
        yield from self.compose_status()
        yield WorkflowView(self.workflow_id)
        yield from self.compose_footer()

    def current_workflow(self) -> uuid.UUID | None:
        return self.workflow_id
