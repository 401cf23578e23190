"""dispatch's tabs (queues, jobs, DLQ, cron, workers, workflow runs) and the job detail
screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
from qctl.systems.dispatch import actions, reads
from qctl.tui import fmt
from qctl.tui.panes import MARK_BINDINGS, DetailScreen, ListPane, RecordView, StatePicked
from qctl.tui.triage import ErrorGroupsScreen, error_group_columns
from qctl.tui.widgets import Column, flex, ident, refill, table

if TYPE_CHECKING:
    from qctl.systems.dispatch.database import Database

PAGE = 200
"""Rows a list tab reads per refresh (newest first)."""


FAILURES: Column[reads.Job | reads.DLQEntry] = Column(
    "failures",
    "its failed attempts of the attempts it may make (dispatch's retry_count of "
    "max_retries + 1: a job that fails more often goes to the DLQ)",
    lambda j: f"{j.retry_count}/{j.max_retries + 1}",
)


class QueuesPane(ListPane):
    """What waits and runs per queue (``qctl queues list`` counts the finished jobs too,
    by a scan the live tab does not repeat every refresh)."""

    filter_hint = "filter queue name (substring)"
    table_id = "dispatch-queues"
    columns = (
        flex("queue", "the queue's name", lambda q: q.queue),
        Column("pending", "its jobs waiting to run", lambda q: q.pending),
        Column("retrying", "its jobs waiting to be retried", lambda q: q.retrying),
        Column(
            "running",
            "its jobs running (qctl queues list counts the finished ones too)",
            lambda q: q.running,
        ),
        Column(
            "oldest pending",
            "how long its oldest due pending job has waited",
            lambda q: fmt.duration(q.oldest_pending_age),
        ),
    )

    def fetch(self, db: Database) -> list[reads.QueueDepth]:
        return reads.queue_depths(db)

    def row_key(self, row: reads.QueueDepth) -> str:
        return row.queue

    def words(self, row: reads.QueueDepth) -> tuple[str, ...]:
        return (row.queue,)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
        self.screen.query_one(JobsPane).open_with(str(event.row_key.value))


class JobActions:
    """``C``: cancel the jobs at hand (``act_on``: the marked ones, or the one under the
    cursor or on screen), after its plan."""

    def act_on(self, verb: Verb[Database], what: str) -> None:
        raise NotImplementedError

    def action_job_cancel(self) -> None:
        self.act_on(actions.CANCEL, "job")


ERROR_GROUP_COLUMNS = error_group_columns("failed jobs", "names")


class JobsPane(StatePicked, ListPane, JobActions):
    states = reads.STATES
    BINDINGS = [
        StatePicked.STATE_BINDING,
        Binding("C", "job_cancel", "Cancel"),
        Binding("g", "error_groups", "Errors"),
        *MARK_BINDINGS,
    ]
    tables = (("Errors (g)", ERROR_GROUP_COLUMNS),)
    filter_hint = "filter: words (a state, a queue, a job name)"
    table_id = "dispatch-jobs"
    columns = (
        ident("id", "the job's id", lambda j: j.id),
        flex("name", "the job's name (its handler)", lambda j: j.name),
        Column("queue", "its queue", lambda j: j.queue),
        Column("state", "dispatch's state", lambda j: j.state),
        Column("priority", "higher runs first", lambda j: j.priority),
        FAILURES,
        Column("run at", "when it is due", lambda j: j.run_at, time="when"),
        Column("created", "when it was enqueued", lambda j: j.created_at, time="ago"),
        flex("last error", "the error of its last failed attempt", lambda j: j.last_error),
    )

    def fetch(self, db: Database) -> list[reads.Job]:
        return reads.list_jobs(db, self.picked(), limit=PAGE)

    def row_key(self, row: reads.Job) -> str:
        return row.id

    def words(self, row: reads.Job) -> tuple[str, ...]:
        return (row.state, row.queue, row.name)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(str(event.row_key.value)))

    def action_error_groups(self) -> None:
        """``g``: the failed jobs grouped by error (``qctl jobs errors``'s read)."""
        self.app.push_screen(
            ErrorGroupsScreen(
                "dispatch: failed jobs by error",
                reads.error_groups,
                ERROR_GROUP_COLUMNS,
                JobDetailScreen,
            )
        )


class DlqPane(ListPane):
    BINDINGS = [
        Binding("R", "dlq_replay", "Replay"),
        Binding("X", "dlq_delete", "Delete"),
        *MARK_BINDINGS,
    ]
    filter_hint = "filter: words (a queue, a job name)"
    table_id = "dispatch-dlq"
    columns = (
        ident("id", "the entry's id", lambda e: e.id),
        ident("job", "the failed job's id", lambda e: e.job_id),
        flex("job name", "its name", lambda e: e.job_name),
        Column("queue", "its queue", lambda e: e.queue),
        FAILURES,
        Column("failed", "when it reached the DLQ", lambda e: e.failed_at, time="ago"),
        Column(
            "replayed",
            "when it was replayed (empty: not yet)",
            lambda e: e.replayed_at,
            time="ago",
        ),
        flex("error", "its error", lambda e: e.error),
    )

    def fetch(self, db: Database) -> list[reads.DLQEntry]:
        return reads.list_dlq(db, limit=PAGE)

    def row_key(self, row: reads.DLQEntry) -> str:
        return row.id

    def words(self, row: reads.DLQEntry) -> tuple[str, ...]:
        return (row.queue, row.job_name)

    def action_dlq_replay(self) -> None:
        self.act_on(actions.REPLAY, "DLQ entry")

    def action_dlq_delete(self) -> None:
        self.act_on(actions.DELETE_DLQ, "DLQ entry")


class CronPane(ListPane):
    BINDINGS = [
        Binding("T", "cron_trigger", "Run now"),
        Binding("E", "cron_enable", "Enable"),
        Binding("D", "cron_disable", "Disable"),
        Binding("X", "cron_delete", "Delete"),
        *MARK_BINDINGS,
    ]
    filter_hint = "filter cron or job name (substring)"
    table_id = "dispatch-cron"
    columns = (
        flex("name", "the entry's name", lambda c: c.name),
        Column("schedule", "its cron expression", lambda c: c.schedule),
        flex("job", "the job it enqueues", lambda c: c.job_name),
        Column("queue", "the queue it enqueues on", lambda c: c.queue),
        Column("enabled", "whether it fires", lambda c: c.enabled),
        Column("next run", "when it fires next", lambda c: c.next_run_at, time="when"),
        Column("last run", "when it fired last", lambda c: c.last_run_at, time="ago"),
    )

    def fetch(self, db: Database) -> list[reads.CronEntry]:
        return reads.list_cron(db)

    def row_key(self, row: reads.CronEntry) -> str:
        return row.id

    def words(self, row: reads.CronEntry) -> tuple[str, ...]:
        return (row.name, row.job_name)

    def action_cron_trigger(self) -> None:
        self.act_on(actions.CRON_TRIGGER, "cron entry")

    def action_cron_enable(self) -> None:
        self.act_on(actions.CRON_ENABLE, "cron entry")

    def action_cron_disable(self) -> None:
        self.act_on(actions.CRON_DISABLE, "cron entry")

    def action_cron_delete(self) -> None:
        self.act_on(actions.CRON_DELETE, "cron entry")


class WorkersPane(ListPane):
    filter_hint = "filter hostname or queue (substring)"
    table_id = "dispatch-workers"
    columns = (
        ident("id", "the worker's id", lambda w: w.id),
        flex("hostname", "where it runs", lambda w: w.hostname),
        flex("queues", "the queues it takes", lambda w: ", ".join(w.queues or [])),
        Column("concurrency", "jobs it runs at once", lambda w: w.concurrency),
        Column("state", "dispatch's worker state", lambda w: w.state),
        Column("leader", "whether it holds the leadership", lambda w: "yes" if w.is_leader else ""),
        Column("last seen", "its last heartbeat", lambda w: w.last_seen, time="ago"),
    )

    def fetch(self, db: Database) -> list[reads.Worker]:
        return reads.list_workers(db)

    def row_key(self, row: reads.Worker) -> str:
        return row.id

    def words(self, row: reads.Worker) -> tuple[str, ...]:
        return (row.hostname, *(row.queues or []))


class RunsPane(StatePicked, ListPane):
    BINDINGS = [StatePicked.STATE_BINDING]
    states = reads.RUN_STATES
    filter_hint = "filter: words (a state, a workflow name)"
    table_id = "dispatch-runs"
    columns = (
        ident("id", "the run's id", lambda r: r.id),
        flex("name", "the workflow's name", lambda r: r.name),
        Column("state", "dispatch's run state", lambda r: r.state),
        Column("started", "when the run started", lambda r: r.started_at, time="ago"),
        Column(
            "took",
            "started to completed",
            lambda r: fmt.duration(r.completed_at - r.started_at) if r.completed_at else "",
        ),
        flex("error", "why it failed", lambda r: r.error),
    )

    def fetch(self, db: Database) -> list[reads.Run]:
        return reads.list_runs(db, self.picked(), limit=PAGE)

    def row_key(self, row: reads.Run) -> str:
        return row.id

    def words(self, row: reads.Run) -> tuple[str, ...]:
        return (row.state, row.name)


class JobView(RecordView[tuple[reads.Job, list[reads.DLQEntry]]]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="dispatch-job-text")
            yield table("dispatch-job-dlq", "DLQ entry", "failed", "replayed", flex("error"))

    def fetch(self, db: Database) -> tuple[reads.Job, list[reads.DLQEntry]]:
        job = reads.get_job(db, self.record_id)
        return job, reads.dlq_of_job(db, job)

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job, entries = self.detail
        lines = fmt.record_lines(row_record(job), json_keys=("payload",))
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
                        e.error,
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

    def act_on(self, verb: Verb[Database], what: str) -> None:
        self.top.act_verb(verb, Selection.of_ids([str(self.record_id)]))
