"""hopper's tabs (queues, jobs, clients) and the job detail screen."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.systems.hopper import actions, reads
from qctl.tui import fmt
from qctl.tui.panes import DetailScreen, RecordView, Redrawn
from qctl.tui.widgets import refill, selected_key, table

if TYPE_CHECKING:
    from qctl.systems.hopper.database import Database

PAGE = 200
"""Rows the jobs tab reads per refresh (newest first)."""


def _matches(needle: str, *values: str) -> bool:
    """Every word of the ``/`` filter is one of ``values`` or part of one."""
    return all(any(w in v.lower() for v in values) for w in needle.lower().split())


def _limit(value: Any) -> str:
    return "" if value is None else str(value)


class QueuesPane(Redrawn[tuple[list[reads.QueueDepth], dict[str, reads.Queue]]]):
    BINDINGS = [Binding("P", "queue_pause", "Pause"), Binding("U", "queue_resume", "Resume")]
    filter_hint = "filter queue name (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "hopper-queues", "queue", "paused", "available", "scheduled", "retryable",
            "running", "pending", "oldest", "done/min", "global", "rate/s", "partition",
        )  # fmt: skip

    def fetch(self, db: Database) -> tuple[list[reads.QueueDepth], dict[str, reads.Queue]]:
        return reads.queue_depths(db), {q.name: q for q in reads.list_queues(db)}

    def render_data(self) -> None:
        depths, limits = self.data or ([], {})
        rows = []
        for d in depths:
            if not _matches(self.filter_text, d.queue):
                continue
            q = limits.get(d.queue)
            rows.append(
                (
                    d.queue,
                    [
                        d.queue,
                        "paused" if d.paused else "",
                        d.available,
                        d.scheduled,
                        d.retryable,
                        d.running,
                        d.pending,
                        fmt.duration(d.oldest_available),
                        d.completed_last_minute,
                        _limit(q and q.global_limit),
                        _limit(q and q.rate_per_sec),
                        _limit(q and q.partition_limit),
                    ],
                )
            )
        refill(self.query_one("#hopper-queues", DataTable), rows)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
        self.screen.query_one(JobsPane).open_with(str(event.row_key.value))

    def _paused(self, paused: bool) -> None:
        name = selected_key(self.query_one("#hopper-queues", DataTable))
        if name is None:
            self.top.notify("no queue selected", severity="warning")
            return
        verb = "pause" if paused else "resume"
        self.top.act(
            lambda p: f"{verb.capitalize()} hopper queue {name}? (NOTIFY hopper_control)",
            lambda db, dry_run: actions.set_paused(db, name, paused, dry_run),
            lambda p: f"{verb}d: {name}",
        )

    def action_queue_pause(self) -> None:
        self._paused(True)

    def action_queue_resume(self) -> None:
        self._paused(False)


class JobActions:
    """``C`` cancel and ``R`` retry of the job at hand, each after its dry run."""

    def current_job(self) -> str | None:
        raise NotImplementedError

    def _act(self, verb: str) -> None:
        top = self.top  # type: ignore[attr-defined]
        text = self.current_job()
        if text is None:
            top.notify("no job selected", severity="warning")
            return
        job_id = uuid.UUID(text)
        if verb == "cancel":
            top.act(
                lambda p: f"Cancel {p.state} hopper job {job_id} ({p.kind}): {p.outcome}?",
                lambda db, dry_run: actions.cancel(db, job_id, dry_run),
                lambda p: f"{p.outcome}: {job_id}",
            )
        else:
            top.act(
                lambda p: f"Retry {p.state} hopper job {job_id} ({p.kind})?",
                lambda db, dry_run: actions.retry(db, job_id, dry_run),
                lambda p: f"retried: {job_id}",
            )

    def action_job_cancel(self) -> None:
        self._act("cancel")

    def action_job_retry(self) -> None:
        self._act("retry")


class JobsPane(JobActions, Redrawn[list[reads.Job]]):
    BINDINGS = [Binding("C", "job_cancel", "Cancel"), Binding("R", "job_retry", "Retry")]
    filter_hint = "filter: words (a state, a queue, a kind)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "hopper-jobs", "id", "kind", "queue", "state", "prio", "attempt", "scheduled",
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
            self.query_one("#hopper-jobs", DataTable),
            [
                (
                    str(j.id),
                    [
                        str(j.id),
                        j.kind,
                        j.queue,
                        j.state,
                        j.priority,
                        f"{j.attempt}/{j.max_attempts}",
                        fmt.when(j.scheduled_at, now),
                        fmt.ago(j.created_at, now),
                        fmt.one_line(j.last_error, 50),
                    ],
                )
                for j in self.data or []
                if _matches(self.filter_text, j.state, j.queue, j.kind)
            ],
        )

    def current_job(self) -> str | None:
        return selected_key(self.query_one("#hopper-jobs", DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))


class ClientsPane(Redrawn[list[reads.Client]]):
    filter_hint = "filter hostname (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table("hopper-clients", "id", "hostname", "started", "lease", "leader", "running")

    def fetch(self, db: Database) -> list[reads.Client]:
        return reads.list_clients(db)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#hopper-clients", DataTable),
            [
                (
                    str(c.id),
                    [
                        str(c.id),
                        c.hostname,
                        fmt.ago(c.started_at, now),
                        "live" if c.live else "expired",
                        "leader" if c.leader else "",
                        c.running,
                    ],
                )
                for c in self.data or []
                if _matches(self.filter_text, c.hostname)
            ],
        )


class JobView(RecordView[tuple[reads.Job, list[reads.Dep]]]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="hopper-job-text")
            yield table("hopper-job-errors", "attempt", "at", "error")

    def fetch(self, db: Database) -> tuple[reads.Job, list[reads.Dep]]:
        job_id = uuid.UUID(str(self.record_id))
        return reads.get_job(db, job_id), reads.job_deps(db, job_id)

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job, deps = self.detail
        record: dict[str, Any] = reads.as_record(job)
        json_keys = {"args", "metadata", "output"}
        lines = [
            f"{key}: {fmt.json_text(value) if key in json_keys else fmt.safe(str(value))}"
            for key, value in record.items()
            if value not in (None, "") and key != "errors"
        ]
        lines += [f"waits on: {d.depends_on} ({d.on_failure})" for d in deps if d.job_id == job.id]
        lines += [f"needed by: {d.job_id}" for d in deps if d.depends_on == job.id]
        self.query_one("#hopper-job-text", Static).update(Text("\n".join(lines)))
        refill(
            self.query_one("#hopper-job-errors", DataTable),
            [
                (
                    str(i),
                    [
                        str(e.get("attempt", "")),
                        fmt.safe(str(e.get("at", ""))),
                        fmt.one_line(str(e.get("error", "")), 80),
                    ],
                )
                for i, e in enumerate(job.errors)
            ],
        )


class JobDetailScreen(JobActions, DetailScreen):
    BINDINGS = [Binding("C", "job_cancel", "Cancel"), Binding("R", "job_retry", "Retry")]

    def view(self) -> JobView:
        view = JobView(self.record_id)
        view.border_title = f"hopper job {self.record_id}"
        return view

    def current_job(self) -> str | None:
        return str(self.record_id)


class WorkflowsPane(Redrawn[list[reads.Batch]]):
    filter_hint = "filter workflow name (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "hopper-workflows", "id", "name", "total", "pending", "failed", "created", "completed"
        )

    def fetch(self, db: Database) -> list[reads.Batch]:
        return reads.list_batches(db, limit=PAGE)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#hopper-workflows", DataTable),
            [
                (
                    str(b.id),
                    [
                        str(b.id),
                        fmt.safe(b.name or ""),
                        b.total,
                        b.pending,
                        b.failed,
                        fmt.ago(b.created_at, now),
                        fmt.ago(b.completed_at, now) if b.completed_at else "",
                    ],
                )
                for b in self.data or []
                if _matches(self.filter_text, b.name or "")
            ],
        )


class StreamsPane(Redrawn[list[reads.StreamConsumer]]):
    filter_hint = "filter consumer name or pattern (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table("hopper-streams", "consumer", "pattern", "kind", "queue", "cursor", "delivered")

    def fetch(self, db: Database) -> list[reads.StreamConsumer]:
        return reads.list_stream_consumers(db)

    def render_data(self) -> None:
        now = self.top.clock()
        refill(
            self.query_one("#hopper-streams", DataTable),
            [
                (
                    c.name,
                    [
                        c.name,
                        c.pattern,
                        c.kind,
                        c.queue,
                        f"{c.xid}:{c.seq}" if c.reading else "",
                        fmt.ago(c.delivered_at, now) if c.delivered_at else "",
                    ],
                )
                for c in self.data or []
                if _matches(self.filter_text, c.name, c.pattern)
            ],
        )
