"""dispatch's tabs (queues, jobs, DLQ, cron, workers, workflow runs) and the job detail
screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.systems.dispatch import actions, reads
from qctl.tui import fmt
from qctl.tui.panes import DetailScreen, RecordView, Redrawn
from qctl.tui.widgets import refill, selected_key, table

if TYPE_CHECKING:
    from qctl.systems.dispatch.database import Database

PAGE = 200
"""Rows a list tab reads per refresh (newest first)."""


def _matches(needle: str, *values: str) -> bool:
    """Every word of the ``/`` filter is one of ``values`` or part of one."""
    return all(any(w in v.lower() for v in values) for w in needle.lower().split())


class QueuesPane(Redrawn[list[reads.QueueDepth]]):
    """What waits and runs per queue (``qctl queues list`` counts the finished jobs too,
    by a scan the live tab does not repeat every refresh)."""

    filter_hint = "filter queue name (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table("dispatch-queues", "queue", "pending", "retrying", "running", "oldest pending")

    def fetch(self, db: Database) -> list[reads.QueueDepth]:
        return reads.queue_depths(db)

    def render_data(self) -> None:
        refill(
            self.query_one("#dispatch-queues", DataTable),
            [
                (
                    q.queue,
                    [q.queue, q.pending, q.retrying, q.running, fmt.duration(q.oldest_pending_age)],
                )
                for q in self.data or []
                if _matches(self.filter_text, q.queue)
            ],
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
        self.screen.query_one(JobsPane).open_with(str(event.row_key.value))


class JobActions:
    """``C``: cancel the job at hand (a pending or retrying one), after its dry run."""

    def current_job(self) -> str | None:
        raise NotImplementedError

    def action_job_cancel(self) -> None:
        top = self.top  # type: ignore[attr-defined]
        job_id = self.current_job()
        if job_id is None:
            top.notify("no job selected", severity="warning")
            return
        top.act(
            lambda p: f"Cancel {p.state} dispatch job {job_id} ({p.name})?",
            lambda db, dry_run: actions.cancel(db, job_id, dry_run),
            lambda p: f"cancelled: {job_id}",
        )


class JobsPane(JobActions, Redrawn[list[reads.Job]]):
    BINDINGS = [Binding("C", "job_cancel", "Cancel")]
    filter_hint = "filter: words (a state, a queue, a job name)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dispatch-jobs", "id", "name", "queue", "state", "priority", "retries", "run at",
            "created", "last error",
        )  # fmt: skip

    def fetch(self, db: Database) -> list[reads.Job]:
        return reads.list_jobs(db, limit=PAGE)

    def open_with(self, text: str) -> None:
        """Show the jobs ``text`` (``/`` words) matches, once the tab has read."""
        self.filter_text = text
        self.reload()

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#dispatch-jobs", DataTable),
            [
                (
                    j.id,
                    [
                        j.id,
                        j.name,
                        j.queue,
                        j.state,
                        j.priority,
                        f"{j.retry_count}/{j.max_retries}",
                        fmt.when(j.run_at, now),
                        fmt.ago(j.created_at, now),
                        fmt.one_line(j.last_error or "", 50),
                    ],
                )
                for j in self.data or []
                if _matches(self.filter_text, j.state, j.queue, j.name)
            ],
        )

    def current_job(self) -> str | None:
        return selected_key(self.query_one("#dispatch-jobs", DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(str(event.row_key.value)))


class DlqPane(Redrawn[list[reads.DLQEntry]]):
    BINDINGS = [Binding("R", "dlq_replay", "Replay"), Binding("X", "dlq_delete", "Delete")]
    filter_hint = "filter: words (a queue, a job name)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dispatch-dlq", "id", "job", "job name", "queue", "retries", "failed", "replayed",
            "error",
        )  # fmt: skip

    def fetch(self, db: Database) -> list[reads.DLQEntry]:
        return reads.list_dlq(db, limit=PAGE)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#dispatch-dlq", DataTable),
            [
                (
                    e.id,
                    [
                        e.id,
                        e.job_id,
                        e.job_name,
                        e.queue,
                        e.retry_count,
                        fmt.ago(e.failed_at, now),
                        fmt.ago(e.replayed_at, now) if e.replayed_at else "",
                        fmt.one_line(e.error, 50),
                    ],
                )
                for e in self.data or []
                if _matches(self.filter_text, e.queue, e.job_name)
            ],
        )

    def action_dlq_replay(self) -> None:
        entry_id = selected_key(self.query_one("#dispatch-dlq", DataTable))
        if entry_id is None:
            self.top.notify("no DLQ entry selected", severity="warning")
            return
        self.top.act(
            lambda p: f"Replay DLQ entry {entry_id} ({p.job_name}) as a new job?",
            lambda db, dry_run: actions.replay(db, entry_id, dry_run),
            lambda p: f"replayed: {entry_id} as {p.new_job_id}",
        )

    def action_dlq_delete(self) -> None:
        entry_id = selected_key(self.query_one("#dispatch-dlq", DataTable))
        if entry_id is None:
            self.top.notify("no DLQ entry selected", severity="warning")
            return
        self.top.act(
            lambda p: (
                f"Delete DLQ entry {entry_id} ({p.job_name},"
                f" {'replayed' if p.replayed else 'never replayed: its last copy'}) for good?"
            ),
            lambda db, dry_run: actions.delete_dlq(db, entry_id, dry_run),
            lambda p: f"deleted: {entry_id}",
        )


class CronPane(Redrawn[list[reads.CronEntry]]):
    BINDINGS = [
        Binding("T", "cron_trigger", "Run now"),
        Binding("E", "cron_enable", "Enable"),
        Binding("D", "cron_disable", "Disable"),
        Binding("X", "cron_delete", "Delete"),
    ]
    filter_hint = "filter cron or job name (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dispatch-cron", "name", "schedule", "job", "queue", "enabled", "next run", "last run"
        )

    def fetch(self, db: Database) -> list[reads.CronEntry]:
        return reads.list_cron(db)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#dispatch-cron", DataTable),
            [
                (
                    c.id,
                    [
                        c.name,
                        c.schedule,
                        c.job_name,
                        c.queue,
                        "yes" if c.enabled else "no",
                        fmt.when(c.next_run_at, now),
                        fmt.ago(c.last_run_at, now),
                    ],
                )
                for c in self.data or []
                if _matches(self.filter_text, c.name, c.job_name)
            ],
        )

    def _selected(self) -> str | None:
        cron_id = selected_key(self.query_one("#dispatch-cron", DataTable))
        if cron_id is None:
            self.top.notify("no cron entry selected", severity="warning")
        return cron_id

    def action_cron_trigger(self) -> None:
        cron_id = self._selected()
        if cron_id is None:
            return
        self.top.act(
            lambda p: f"Run cron entry {p.name} now ({p.job_name} on {p.queue})?",
            lambda db, dry_run: actions.trigger_cron(db, cron_id, dry_run),
            lambda p: f"triggered: {p.name} as {p.new_job_id}",
        )

    def _change(self, action: str) -> None:
        cron_id = self._selected()
        if cron_id is None:
            return
        self.top.act(
            lambda p: f"{action.capitalize()} cron entry {p.name}?",
            lambda db, dry_run: actions.change_cron(db, cron_id, action, dry_run),
            lambda p: f"{action}d: {p.name}",
        )

    def action_cron_enable(self) -> None:
        self._change("enable")

    def action_cron_disable(self) -> None:
        self._change("disable")

    def action_cron_delete(self) -> None:
        self._change("delete")


class WorkersPane(Redrawn[list[reads.Worker]]):
    filter_hint = "filter hostname or queue (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dispatch-workers", "id", "hostname", "queues", "concurrency", "state", "leader",
            "last seen",
        )  # fmt: skip

    def fetch(self, db: Database) -> list[reads.Worker]:
        return reads.list_workers(db)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#dispatch-workers", DataTable),
            [
                (
                    w.id,
                    [
                        w.id,
                        w.hostname,
                        ", ".join(w.queues or []),
                        w.concurrency,
                        w.state,
                        "yes" if w.is_leader else "",
                        fmt.ago(w.last_seen, now),
                    ],
                )
                for w in self.data or []
                if _matches(self.filter_text, w.hostname, *(w.queues or []))
            ],
        )


class RunsPane(Redrawn[list[reads.Run]]):
    filter_hint = "filter: words (a state, a workflow name)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table("dispatch-runs", "id", "name", "state", "started", "took", "error")

    def fetch(self, db: Database) -> list[reads.Run]:
        return reads.list_runs(db, limit=PAGE)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#dispatch-runs", DataTable),
            [
                (
                    r.id,
                    [
                        r.id,
                        r.name,
                        r.state,
                        fmt.ago(r.started_at, now),
                        fmt.duration(r.completed_at - r.started_at) if r.completed_at else "",
                        fmt.one_line(r.error or "", 60),
                    ],
                )
                for r in self.data or []
                if _matches(self.filter_text, r.state, r.name)
            ],
        )


class JobView(RecordView[tuple[reads.Job, list[reads.DLQEntry]]]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="dispatch-job-text")
            yield table("dispatch-job-dlq", "DLQ entry", "failed", "replayed", "error")

    def fetch(self, db: Database) -> tuple[reads.Job, list[reads.DLQEntry]]:
        job = reads.get_job(db, self.record_id)
        return job, reads.dlq_of_job(db, job)

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job, entries = self.detail
        record: dict[str, Any] = reads.as_record(job)
        lines = [
            f"{key}: {fmt.json_text(value) if key == 'payload' else fmt.safe(str(value))}"
            for key, value in record.items()
            if value not in (None, "")
        ]
        self.query_one("#dispatch-job-text", Static).update(Text("\n".join(lines)))
        now = self.top.clock()
        refill(
            self.query_one("#dispatch-job-dlq", DataTable),
            [
                (
                    e.id,
                    [
                        e.id,
                        fmt.ago(e.failed_at, now),
                        fmt.ago(e.replayed_at, now) if e.replayed_at else "",
                        fmt.one_line(e.error, 60),
                    ],
                )
                for e in entries
            ],
        )


class JobDetailScreen(JobActions, DetailScreen):
    BINDINGS = [Binding("C", "job_cancel", "Cancel")]

    def view(self) -> JobView:
        view = JobView(self.record_id)
        view.border_title = f"dispatch job {self.record_id}"
        return view

    def current_job(self) -> str | None:
        return str(self.record_id)
