"""hopper's Workflows tab with its drill-in: a batch or workflow, its dependency graph
(``qctl.systems.hopper.graph``, as ``workflows show`` draws it; the selected job
reversed) and its jobs; enter on a job opens the job's detail."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import DataTable, Static

from qctl.systems.hopper import reads
from qctl.systems.hopper.graph import draw
from qctl.systems.hopper.tui import panes
from qctl.tui import fmt
from qctl.tui.graph import styled
from qctl.tui.panes import DetailScreen, RecordView
from qctl.tui.widgets import refill, selected_key, table

if TYPE_CHECKING:
    from qctl.systems.hopper.database import Database

Workflow = tuple[reads.Batch, list[reads.Job]]


class WorkflowsPane(panes.WorkflowsPane):
    """The tab's list; enter opens the batch or workflow."""

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(WorkflowDetailScreen(uuid.UUID(str(event.row_key.value))))


def header(batch: reads.Batch) -> Text:
    text = Text.assemble((f"{fmt.safe(batch.name or 'batch')} ", "bold"), (str(batch.id), "dim"))
    text.append(f"\n{batch.total} jobs, {batch.pending} pending, {batch.failed} failed")
    if batch.completed_at:
        text.append(f", completed {fmt.ago(batch.completed_at)}")
    return text


class WorkflowView(RecordView[Workflow]):
    DEFAULT_CSS = """
    WorkflowView #hopper-workflow-head { height: auto; padding: 0 1; }
    WorkflowView #hopper-workflow-jobs { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="hopper-workflow-head")
        with ScrollableContainer(id="graph-box"):
            yield Static(id="graph")
        yield table("hopper-workflow-jobs", "id", "kind", "state", "attempt", "depends on", "error")

    def fetch(self, db: Database) -> Workflow:
        return reads.get_batch(db, uuid.UUID(str(self.record_id)))

    def render_detail(self) -> None:
        if self.detail is None:
            return
        batch, jobs = self.detail
        self.query_one("#hopper-workflow-head", Static).update(header(batch))
        order = draw(batch, jobs).order if batch.edges else [str(j.id) for j in jobs]
        by_id = {str(j.id): j for j in jobs}
        needs: dict[str, int] = {}
        for job_id, _ in batch.edges or []:
            needs[job_id] = needs.get(job_id, 0) + 1
        rows = [
            (
                key,
                [
                    key,
                    fmt.one_line(by_id[key].kind, 40),
                    Text(by_id[key].state, fmt.state_style(by_id[key].state)),
                    f"{by_id[key].attempt}/{by_id[key].max_attempts}",
                    str(needs.get(key, "")),
                    fmt.one_line(by_id[key].last_error, 60),
                ],
            )
            for key in order
            if key in by_id
        ]
        refill(self.query_one("#hopper-workflow-jobs", DataTable), rows)
        self.render_selection()

    def render_selection(self) -> None:
        if self.detail is None:
            return
        batch, jobs = self.detail
        graph = Text("a batch: its jobs do not depend on each other", "dim")
        if batch.edges:
            drawn = draw(batch, jobs)
            selected = selected_key(self.query_one("#hopper-workflow-jobs", DataTable)) or ""
            styles = {k: fmt.state_style(s) for k, s in drawn.states.items()}
            graph = styled(drawn.rendering, styles, selected)
        self.query_one("#graph", Static).update(graph)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.render_selection()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(panes.JobDetailScreen(uuid.UUID(str(event.row_key.value))))


class WorkflowDetailScreen(DetailScreen):
    def view(self) -> WorkflowView:
        view = WorkflowView(self.record_id)
        view.border_title = f"hopper workflow {self.record_id}"
        return view
