"""hopper's tabs (queues, jobs, clients) and the job detail screen."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
from qctl.systems.hopper import actions, reads
from qctl.tui import fmt
from qctl.tui.panes import MARK_BINDINGS, DetailScreen, ListPane, RecordView, StatePicked
from qctl.tui.triage import ErrorGroupsScreen, error_group_columns
from qctl.tui.widgets import Column, flex, ident, refill, table

if TYPE_CHECKING:
    from qctl.systems.hopper.database import Database

PAGE = 200
"""Rows the jobs tab reads per refresh (newest first)."""


def _limit(value: Any) -> str:
    return "" if value is None else str(value)


QueueRow = tuple[reads.QueueDepth, reads.Queue | None]
"""A queue's live depths and its limits (None: no ``hopper_queues`` row)."""


class QueuesPane(ListPane):
    BINDINGS = [
        Binding("P", "queue_pause", "Pause"),
        Binding("U", "queue_resume", "Resume"),
        *MARK_BINDINGS,
    ]
    filter_hint = "filter queue name (substring)"
    table_id = "hopper-queues"
    columns = (
        flex("queue", "the queue's name", lambda r: r[0].queue),
        Column(
            "paused", "whether its clients stop claiming", lambda r: "paused" if r[0].paused else ""
        ),
        Column(
            "available", "live jobs ready to be claimed", lambda r: r[0].available, short="avail"
        ),
        Column(
            "scheduled", "live jobs waiting for their time", lambda r: r[0].scheduled, short="sched"
        ),
        Column(
            "retryable", "live jobs waiting to be retried", lambda r: r[0].retryable, short="retry"
        ),
        Column("running", "live jobs being worked", lambda r: r[0].running, short="run"),
        Column(
            "pending",
            "workflow steps waiting on their dependencies",
            lambda r: r[0].pending,
            short="pend",
        ),
        Column(
            "oldest",
            "how long its oldest claimable job has waited",
            lambda r: fmt.duration(r[0].oldest_available),
            drop=1,
        ),
        Column(
            "done/min",
            "jobs completed in the last minute",
            lambda r: r[0].completed_last_minute,
            short="/min",
            drop=2,
        ),
        Column(
            "global",
            "max running jobs across all clients",
            lambda r: _limit(r[1] and r[1].global_limit),
            drop=3,
        ),
        Column(
            "rate/s",
            "max claims per second",
            lambda r: _limit(r[1] and r[1].rate_per_sec),
            drop=3,
        ),
        Column(
            "partition",
            "max running jobs per partition key (empty: no limit)",
            lambda r: _limit(r[1] and r[1].partition_limit),
            short="part",
            drop=3,
        ),
    )

    def fetch(self, db: Database) -> list[QueueRow]:
        limits = {q.name: q for q in reads.list_queues(db)}
        return [(d, limits.get(d.queue)) for d in reads.queue_depths(db)]

    def row_key(self, row: QueueRow) -> str:
        return row[0].queue

    def words(self, row: QueueRow) -> tuple[str, ...]:
        return (row[0].queue,)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
        self.screen.query_one(JobsPane).open_with(str(event.row_key.value))

    def action_queue_pause(self) -> None:
        self.act_on(actions.PAUSE, "queue")

    def action_queue_resume(self) -> None:
        self.act_on(actions.RESUME, "queue")


class JobActions:
    """``C`` cancel and ``R`` retry of the jobs at hand (``act_on``: the marked ones, or
    the one under the cursor or on screen), each after its plan."""

    def act_on(self, verb: Verb[Database], what: str) -> None:
        raise NotImplementedError

    def action_job_cancel(self) -> None:
        self.act_on(actions.CANCEL, "job")

    def action_job_retry(self) -> None:
        self.act_on(actions.RETRY, "job")


ERROR_GROUP_COLUMNS = error_group_columns("discarded jobs", "kinds")


class JobsPane(StatePicked, ListPane, JobActions):
    states = reads.STATES
    BINDINGS = [
        StatePicked.STATE_BINDING,
        Binding("C", "job_cancel", "Cancel"),
        Binding("R", "job_retry", "Retry"),
        Binding("g", "error_groups", "Errors"),
        *MARK_BINDINGS,
    ]
    tables = (("Errors (g)", ERROR_GROUP_COLUMNS),)
    filter_hint = "filter: words (a state, a queue, a kind)"
    table_id = "hopper-jobs"
    columns = (
        ident("id", "the job's id (a UUIDv7: newest first)", lambda j: j.id),
        flex("kind", "the job's kind (its worker)", lambda j: j.kind),
        Column("queue", "its queue", lambda j: j.queue),
        Column("state", "hopper's state", lambda j: j.state),
        Column("prio", "priority, 1 runs first", lambda j: j.priority, drop=2),
        Column(
            "attempt", "attempts made of its maximum", lambda j: f"{j.attempt}/{j.max_attempts}"
        ),
        Column("scheduled", "when it may run", lambda j: j.scheduled_at, time="when", drop=1),
        Column("created", "when it was inserted", lambda j: j.created_at, time="ago", drop=3),
        flex("last error", "the error of its last failed attempt", lambda j: j.last_error),
    )

    def fetch(self, db: Database) -> list[reads.Job]:
        return reads.list_jobs(db, self.picked(), limit=PAGE)

    def row_key(self, row: reads.Job) -> str:
        return str(row.id)

    def words(self, row: reads.Job) -> tuple[str, ...]:
        return (row.state, row.queue, row.kind)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))

    def action_error_groups(self) -> None:
        """``g``: the discarded jobs grouped by error (``qctl jobs errors``'s read)."""
        self.app.push_screen(
            ErrorGroupsScreen(
                "hopper: discarded jobs by error",
                reads.error_groups,
                ERROR_GROUP_COLUMNS,
                JobDetailScreen,
            )
        )


class ClientsPane(ListPane):
    filter_hint = "filter hostname (substring)"
    table_id = "hopper-clients"
    columns = (
        ident("id", "the client's lease id", lambda c: c.id),
        flex("hostname", "where it runs", lambda c: c.hostname),
        Column("started", "when it registered", lambda c: c.started_at, time="ago"),
        Column(
            "lease",
            "live, or expired (fenced: its jobs are rescued)",
            lambda c: "live" if c.live else "expired",
        ),
        Column(
            "leader", "the client holding the leadership", lambda c: "leader" if c.leader else ""
        ),
        Column("running", "jobs it holds running", lambda c: c.running),
    )

    def fetch(self, db: Database) -> list[reads.Client]:
        return reads.list_clients(db)

    def row_key(self, row: reads.Client) -> str:
        return str(row.id)

    def words(self, row: reads.Client) -> tuple[str, ...]:
        return (row.hostname,)


class JobView(RecordView[tuple[reads.Job, list[reads.Dep]]]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="hopper-job-text")
            yield table("hopper-job-errors", "attempt", "at", flex("error"))

    def fetch(self, db: Database) -> tuple[reads.Job, list[reads.Dep]]:
        job_id = uuid.UUID(str(self.record_id))
        return reads.get_job(db, job_id), reads.job_deps(db, job_id)

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job, deps = self.detail
        record: dict[str, Any] = row_record(job)
        record.pop("errors")  # the table below
        lines = fmt.record_lines(record, json_keys=("args", "metadata", "output"))
        lines += [f"waits on: {d.depends_on} ({d.on_failure})" for d in deps if d.job_id == job.id]
        lines += [f"needed by: {d.job_id}" for d in deps if d.depends_on == job.id]
        self.query_one("#hopper-job-text", Static).update(Text("\n".join(lines)))
        errors = job.errors if isinstance(job.errors, list) else []
        refill(
            self.query_one("#hopper-job-errors", DataTable),
            [
                (
                    str(i),
                    [fmt.any_text(e.get(k, "")) for k in ("attempt", "at", "error")],
                )
                for i, e in enumerate(errors)
                if isinstance(e, dict)
            ],
        )


class JobDetailScreen(JobActions, DetailScreen):
    BINDINGS = [Binding("C", "job_cancel", "Cancel"), Binding("R", "job_retry", "Retry")]

    def view(self) -> JobView:
        view = JobView(self.record_id)
        view.border_title = f"hopper job {self.record_id}"
        return view

    def act_on(self, verb: Verb[Database], what: str) -> None:
        self.top.act_verb(verb, Selection.of_ids([str(self.record_id)]))


class WorkflowsPane(ListPane):
    filter_hint = "filter workflow name (substring)"
    table_id = "hopper-workflows"
    columns = (
        ident("id", "the batch's id", lambda b: b.id),
        flex("name", "the workflow's name (empty for a plain batch)", lambda b: b.name or ""),
        Column("total", "its jobs", lambda b: b.total),
        Column("pending", "not finished yet", lambda b: b.pending),
        Column("failed", "cancelled or discarded", lambda b: b.failed),
        Column("created", "when it was inserted", lambda b: b.created_at, time="ago"),
        Column("completed", "when its last job finished", lambda b: b.completed_at, time="ago"),
    )

    def fetch(self, db: Database) -> list[reads.Batch]:
        return reads.list_batches(db, limit=PAGE)

    def row_key(self, row: reads.Batch) -> str:
        return str(row.id)

    def words(self, row: reads.Batch) -> tuple[str, ...]:
        return (row.name or "",)


class StreamsPane(ListPane):
    filter_hint = "filter consumer name or pattern (substring)"
    table_id = "hopper-streams"
    columns = (
        flex("consumer", "the consumer's name", lambda c: c.name),
        flex("pattern", "the topics it takes (AMQP syntax)", lambda c: c.pattern),
        Column("kind", "the kind of the jobs it delivers", lambda c: c.kind),
        Column("queue", "the queue of the jobs it delivers", lambda c: c.queue),
        Column(
            "cursor",
            "part way through a delta, the last event delivered (xid:seq)",
            lambda c: f"{c.xid}:{c.seq}" if c.reading else "",
        ),
        Column("delivered", "when it last delivered", lambda c: c.delivered_at, time="ago"),
    )

    def fetch(self, db: Database) -> list[reads.StreamConsumer]:
        return reads.list_stream_consumers(db)

    def row_key(self, row: reads.StreamConsumer) -> str:
        return row.name

    def words(self, row: reads.StreamConsumer) -> tuple[str, ...]:
        return (row.name, row.pattern)
