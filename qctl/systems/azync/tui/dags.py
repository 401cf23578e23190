"""DAGs: name navigator with state tabs, runs with task counts, and the run graph."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.graph import layout, render
from qctl.systems.azync.ops import dags as ops_dags
from qctl.systems.azync.ops.results import RunOutcome
from qctl.systems.azync.tui.columns import DAG_COUNT_COLUMNS, JOB_KIND, job_columns
from qctl.systems.azync.tui.jobs import JobDetailScreen
from qctl.tui import fmt
from qctl.tui.base import Dashboarded
from qctl.tui.graph import styled
from qctl.tui.panes import DetailScreen, Pane, RecordView, StatePicked
from qctl.tui.widgets import Column, PromptDialog, cells, flex, refill, selected_key, table
from qctl_store.types import (
    TASK_KEY_COMPENSATION_PREFIX,
    DAGDep,
    DAGFilter,
    DAGState,
    DAGView,
    Job,
    JobState,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

RUNS = 100
STATES: list[DAGState | None] = [None, *DAGState]

DAG_BINDINGS = [
    Binding("R", "dag_retry", "Retry"),
    Binding("C", "dag_compensate", "Compensate"),
    Binding("X", "dag_cancel", "Cancel"),
    Binding("P", "dag_pause", "Pause"),
    Binding("S", "dag_signal", "Signal"),
]


class DagActions(Dashboarded):
    def current_dag(self) -> uuid.UUID | None:
        raise NotImplementedError

    def run_tasks(self) -> list[Job] | None:
        """The run's tasks where the screen has read them; None: read them to learn the
        signal to offer."""
        return None

    def selected_dag(self) -> uuid.UUID | None:
        """``current_dag``; when there is none, the operator is told so."""
        dag_id = self.current_dag()
        if dag_id is None:
            self.top.notify("no DAG run selected", severity="warning")
        return dag_id

    def _dag_act(
        self, verb: str, call: Callable[[ConsoleStore, uuid.UUID, bool], RunOutcome]
    ) -> None:
        dag_id = self.selected_dag()
        if dag_id is None:
            return
        self.top.act(
            lambda plan: (
                f"{verb} DAG run {plan.name} {dag_id} ({plan.state})"
                + (f": {plan.effects()}?" if plan.effects() else "?")
            ),
            lambda store, dry_run: call(store, dag_id, dry_run),
            lambda done: f"{verb}: {done.id}",
        )

    def action_dag_retry(self) -> None:
        self._dag_act("retry", ops_dags.retry)

    def action_dag_compensate(self) -> None:
        self._dag_act("compensate", ops_dags.compensate)

    def action_dag_cancel(self) -> None:
        self._dag_act("cancel", ops_dags.cancel)

    def action_dag_pause(self) -> None:
        dag_id = self.selected_dag()
        if dag_id is None:
            return

        def got(values: dict[str, str] | None) -> None:
            if values is not None:
                reason = values["reason"]
                self._dag_act(
                    f"pause ({reason})", lambda s, i, dry: ops_dags.pause(s, i, reason, dry)
                )

        self.top.push_screen(
            PromptDialog(f"pause DAG run {dag_id}", [("reason", "reason", "paused from qctl top")]),
            got,
        )

    def action_dag_signal(self) -> None:
        """``S``: a prompt prefilled with the signal the run waits on (its tasks read in a
        worker thread where the screen has not read them)."""
        dag_id = self.selected_dag()
        if dag_id is None:
            return
        tasks = self.run_tasks()
        if tasks is not None:
            self._signal_prompt(dag_id, ops_dags.awaited_signal(tasks))
            return
        store, top = self.top.store, self.top

        def read() -> None:
            try:
                name = ops_dags.awaited_signal(store.dag_tasks(dag_id))
            except Exception:  # the prompt opens empty; the signal's dry run reports
                name = ""
            top.call_from_thread(self._signal_prompt, dag_id, name)

        top.run_worker(read, thread=True, group="signal", exit_on_error=False)

    def _signal_prompt(self, dag_id: uuid.UUID, awaited: str) -> None:
        def got(values: dict[str, str] | None) -> None:
            if values is None or not values["name"]:
                return
            try:
                payload = json.loads(values["payload"]) if values["payload"] else None
            except ValueError as exc:
                self.top.notify(f"payload is not JSON: {exc}", severity="error")
                return
            name, message_id = values["name"], values["message_id"]
            self.top.act(
                # The dry run refuses a finished run or a name no task takes before anything
                # is asked, and says what the signal will do.
                lambda planned: "S" + ops_dags.signal_words(planned)[1:] + "?",
                lambda s, dry: ops_dags.signal(s, dag_id, name, payload, message_id, dry),
                ops_dags.signal_words,
            )

        self.top.push_screen(
            PromptDialog(
                f"signal DAG run {dag_id}",
                [
                    ("name", "signal name", awaited),
                    ("payload", "payload (JSON)", ""),
                    ("message_id", "message id (dedupe, optional)", ""),
                ],
            ),
            got,
        )


@dataclass
class DagsData:
    counts: dict[str, dict[DAGState, int]]
    runs: list[DAGView]
    total: int
    task_counts: dict[uuid.UUID, dict[JobState, int]] = field(default_factory=dict)


DAG_NAME_COLUMNS = (flex("name", "the DAG", lambda r: r[0]), *DAG_COUNT_COLUMNS)

RunRow = tuple[DAGView, dict[JobState, int]]
"""A run and its tasks by state."""

DAG_RUN_COLUMNS: tuple[Column[RunRow], ...] = (
    Column("id", "the run's id (short)", lambda r: fmt.short_id(r[0].id)),
    flex("name", "the DAG", lambda r: r[0].name),
    Column("state", "the run's state", lambda r: fmt.state_text(r[0].state)),
    Column("tasks", "its tasks by state", lambda r: fmt.counts_summary(r[1])),
    Column("created", "when the run started", lambda r: r[0].created_at, time="ago"),
    flex("reason", "why it failed or was paused", lambda r: r[0].failure_reason),
)
DAG_TASK_COLUMNS = job_columns(
    flex("task", "the task's key in the graph", lambda j: j.task_key), JOB_KIND
)
"""A run's tasks, beside its graph."""


class DagsPane(DagActions, StatePicked, Pane[DagsData]):
    BINDINGS = [
        StatePicked.STATE_BINDING,
        Binding("escape", "clear_name", "Clear name", show=False),
        *DAG_BINDINGS,
    ]
    filter_hint = "DAG name (substring for the navigator)"
    dag_name = ""
    state: DAGState | None = None
    states = tuple(DAGState)
    state_type = DAGState
    data: DagsData | None = None
    tables = (
        ("DAGs", DAG_NAME_COLUMNS),
        ("DAG runs", DAG_RUN_COLUMNS),
        ("DAG graph, tasks", DAG_TASK_COLUMNS),
    )

    def compose(self) -> ComposeResult:
        yield Static(id="dags-filter", classes="bar")
        yield from self.compose_filter()
        yield table("dag-names", *DAG_NAME_COLUMNS)
        yield table("dag-runs", *DAG_RUN_COLUMNS)

    def open_with(self, name: str) -> None:
        self.dag_name = name
        self.reload()

    def focus_first(self) -> None:
        """The runs: what an operator acts on (the names table narrows them)."""
        self.query_one("#dag-runs", DataTable).focus()

    def action_clear_name(self) -> None:
        """Esc: drop the selected name and the navigator's filter."""
        if self.dag_name or self.filter_text:
            self.dag_name = self.filter_text = ""
            self.reload()

    def fetch(self, store: ConsoleStore) -> DagsData:
        counts = store.dag_name_state_counts()
        runs, total = store.list_dags(DAGFilter(self.dag_name, self.state), 0, RUNS)
        task_counts = store.dag_task_counts([r.id for r in runs]) if runs else {}
        return DagsData(counts, runs, total, task_counts)

    def show(self, data: DagsData) -> None:
        self.data = data
        now = self.top.clock()
        needle = self.filter_text.lower()
        names = [
            (name, cells(DAG_NAME_COLUMNS, (name, counts), now))
            for name, counts in sorted(data.counts.items())
            if needle in name.lower()
        ]
        refill(self.query_one("#dag-names", DataTable), names)
        runs = [
            (str(r.id), cells(DAG_RUN_COLUMNS, (r, data.task_counts.get(r.id, {})), now))
            for r in data.runs
        ]
        refill(self.query_one("#dag-runs", DataTable), runs)
        self.query_one("#dags-filter", Static).update(self.state_tabs(data))

    def state_tabs(self, data: DagsData) -> Text:
        """``name X  [all 12] running 3  suspended 1 ...``: the state tabs (``t`` moves)
        with the counts of the selected name (or of every name)."""
        counts: dict[DAGState, int] = {}
        for name, per_state in data.counts.items():
            if self.dag_name in ("", name):
                for s, n in per_state.items():
                    counts[s] = counts.get(s, 0) + n
        text = Text.assemble(("name ", "dim"), (fmt.one_line(self.dag_name) or "all", "bold"), "  ")
        for state in STATES:
            n = sum(counts.values()) if state is None else counts.get(state, 0)
            label = f" {state.value if state else 'all'} {n} "
            style = "reverse bold" if state == self.state else fmt.state_style(state or "")
            text.append(label, style if n or state == self.state else "bright_black")
        text.append("  shown ", "dim")
        text.append(f"{len(data.runs)} of {data.total} runs")
        return text

    def filter_changed(self) -> None:
        if self.data is not None:
            self.show(self.data)

    def current_dag(self) -> uuid.UUID | None:
        key = selected_key(self.query_one("#dag-runs", DataTable))
        return uuid.UUID(key) if key else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = str(event.row_key.value)
        if event.data_table.id == "dag-names":
            self.dag_name = "" if self.dag_name == key else key
            self.reload()
            self.query_one("#dag-runs", DataTable).focus()
        else:
            self.top.push_screen(DagGraphScreen(uuid.UUID(key)))


@dataclass
class DagRun:
    dag: DAGView
    tasks: list[Job]
    deps: list[DAGDep]


def draw_run(run: DagRun, selected: str = "") -> tuple[Text, list[str]]:
    """The run's graph, each task coloured by its state (``selected`` reversed), and the
    task keys in reading order (part by part, layer by layer)."""
    states = {t.task_key: t.state for t in run.tasks}
    # A key only a dependency names (its row is missing) is drawn too, marked "?".
    named = {k for d in run.deps for k in (d.task_key, d.depends_on_key)}
    keys = list({t.task_key for t in run.tasks} | named)
    # By key for a drawing that does not depend on row order (tasks of one run share
    # created_at); compensations last, so the undo chain is drawn below the graph.
    keys.sort(key=lambda k: (k.startswith(TASK_KEY_COMPENSATION_PREFIX), k))
    labels = {k: f"{fmt.one_line(k, 80)} [{_mark(states.get(k))}]" for k in keys}
    lay = layout(keys, [(d.task_key, d.depends_on_key) for d in run.deps])
    styles = {k: fmt.state_style(states.get(k, "")) for k in keys}
    return styled(render(lay, labels), styles, selected), lay.order()


def _mark(state: JobState | None) -> str:
    return "?" if state is None else state.value


def dag_header(dag: DAGView, now: datetime) -> Text:
    t = fmt.heading(dag.name, dag.id, dag.state)
    t.append(f"  on failure: {dag.on_failure}")
    if dag.idempotency_key:
        t.append(f"  key: {fmt.one_line(dag.idempotency_key, 80)}")
    t.append(f"  created {fmt.ago(dag.created_at, now)}")
    if dag.completed_at:
        t.append(f"  completed {fmt.ago(dag.completed_at, now)}")
    if dag.failure_reason:
        t.append(f"\nreason: {fmt.safe(dag.failure_reason)}", "red")
    return t


class DagRunView(RecordView[DagRun]):
    def compose(self) -> ComposeResult:
        yield Static(id="dag-header")
        with ScrollableContainer(id="graph-box"):
            yield Static(id="graph")
        with Horizontal(id="dag-bottom"):
            yield table("dag-tasks", *DAG_TASK_COLUMNS)
            with VerticalScroll(id="task-box"):
                yield Static(id="task-detail")

    def fetch(self, store: ConsoleStore) -> DagRun:
        return DagRun(
            store.get_dag(self.record_id),
            store.dag_tasks(self.record_id),
            store.dag_deps(self.record_id),
        )

    def render_detail(self) -> None:
        data = self.detail
        if data is None:
            return
        now = self.top.clock()
        self.query_one("#dag-header", Static).update(dag_header(data.dag, now))
        _, order = draw_run(data)
        by_key = {t.task_key: t for t in data.tasks}
        # A key only a dependency names has no row (a vacuumed or missing task): it is
        # drawn with "?" and has no line in the table.
        rows = [(k, cells(DAG_TASK_COLUMNS, by_key[k], now)) for k in order if k in by_key]
        refill(self.query_one("#dag-tasks", DataTable), rows)
        self.render_selection()

    def selected_task(self) -> Job | None:
        key = selected_key(self.query_one("#dag-tasks", DataTable))
        if self.detail is None or key is None:
            return None
        return next((t for t in self.detail.tasks if t.task_key == key), None)

    def render_selection(self) -> None:
        if self.detail is None:
            return
        task = self.selected_task()
        text, _ = draw_run(self.detail, task.task_key if task else "")
        self.query_one("#graph", Static).update(text)
        detail = Text()
        if task is not None:
            needs = [d.depends_on_key for d in self.detail.deps if d.task_key == task.task_key]
            feeds = [d.task_key for d in self.detail.deps if d.depends_on_key == task.task_key]
            detail.append(f"{fmt.safe(task.task_key)}\n", "bold")
            detail.append(f"job {task.id}\nkind {fmt.safe(task.kind)}\n")
            detail.append(f"state {task.state.value}\n", fmt.state_style(task.state))
            detail.append(f"depends on: {fmt.safe(', '.join(needs)) or '-'}\n")
            detail.append(f"needed by: {fmt.safe(', '.join(feeds)) or '-'}\n")
            if task.signal_name:
                detail.append(f"waits for signal {fmt.safe(task.signal_name)}\n")
            if task.compensation_kind:
                detail.append(f"compensation {fmt.safe(task.compensation_kind)}\n")
            if task.last_error:
                detail.append(f"error: {fmt.safe(task.last_error)}\n", "red")
            if task.result is not None:
                detail.append(f"result: {fmt.json_text(task.result, 200)}\n")
            detail.append("enter: job detail", "dim")
        self.query_one("#task-detail", Static).update(detail)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.render_selection()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        task = self.selected_task()
        if task is not None:
            self.top.push_screen(JobDetailScreen(task.id))


class DagGraphScreen(DagActions, DetailScreen):
    BINDINGS = [*DAG_BINDINGS]

    def view(self) -> DagRunView:
        return DagRunView(self.record_id)

    def current_dag(self) -> uuid.UUID | None:
        return self.record_id

    def run_tasks(self) -> list[Job] | None:
        run = self.query_one(DagRunView).detail
        return run.tasks if run else None

    def on_mount(self) -> None:
        self.query_one("#dag-tasks", DataTable).focus()
