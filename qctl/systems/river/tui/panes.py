"""River's dashboard tabs and job detail (``qctl.systems.river.tui``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
from qctl.systems.river import actions, reads
from qctl.tui import fmt
from qctl.tui.panes import (
    MARK_BINDINGS,
    ContainsFiltered,
    DetailScreen,
    ListPane,
    RecordView,
    StatePicked,
)
from qctl.tui.triage import ErrorGroupsScreen, error_group_columns
from qctl.tui.widgets import Column, flex, refill, table

if TYPE_CHECKING:
    from qctl.systems.river.database import Database

PAGE = 200
"""Rows the Jobs tab reads per refresh (newest first)."""


class QueuesPane(ListPane):
    """What waits and runs per queue, counted on River's fetch index (``qctl queues
    list`` counts the finalized jobs too, by reading them all)."""

    BINDINGS = [
        Binding("P", "queue_pause", "Pause"),
        Binding("U", "queue_resume", "Resume"),
        *MARK_BINDINGS,
    ]
    filter_hint = "filter queue name (substring)"
    table_id = "river-queues"
    columns = (
        flex("queue", "the queue's name", lambda q: q.queue),
        Column(
            "paused",
            "when it was paused (empty: River's clients fetch from it)",
            lambda q: q.paused_at,
            time="ago",
        ),
        Column("available", "its jobs ready to be fetched", lambda q: q.available),
        Column("running", "its jobs a client works now", lambda q: q.running),
        Column("scheduled", "its jobs due later", lambda q: q.scheduled),
        Column("retryable", "its jobs that failed and wait to be retried", lambda q: q.retryable),
        Column("pending", "its jobs waiting for something else first", lambda q: q.pending),
        Column(
            "oldest available",
            "how long its oldest available job has waited",
            lambda q: fmt.duration(q.oldest_available_age),
        ),
        Column(
            "reported",
            "when a River client last reported it (empty: none has worked it)",
            lambda q: q.updated_at,
            time="ago",
        ),
    )

    def fetch(self, db: Database) -> list[reads.Queue]:
        return reads.list_queues(db, live=True)

    def row_key(self, row: reads.Queue) -> str:
        return row.queue

    def words(self, row: reads.Queue) -> tuple[str, ...]:
        return (row.queue,)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
        self.screen.query_one(JobsPane).open_with(str(event.row_key.value))

    def action_queue_pause(self) -> None:
        self.act_on(actions.PAUSE, "queue")

    def action_queue_resume(self) -> None:
        self.act_on(actions.RESUME, "queue")


class JobActions:
    """``R``, ``C``, ``X``: retry, cancel or delete the jobs at hand (``act_on``)."""

    def act_on(self, verb: Verb[Database], what: str) -> None:
        raise NotImplementedError

    def action_job_retry(self) -> None:
        self.act_on(actions.RETRY, "job")

    def action_job_cancel(self) -> None:
        self.act_on(actions.CANCEL, "job")

    def action_job_delete(self) -> None:
        self.act_on(actions.DELETE, "job")


JOB_BINDINGS = [
    Binding("R", "job_retry", "Retry"),
    Binding("C", "job_cancel", "Cancel"),
    Binding("X", "job_delete", "Delete"),
]


ERROR_GROUP_COLUMNS = error_group_columns("failed jobs", "kinds")


class JobsPane(ContainsFiltered, StatePicked, ListPane, JobActions):
    BINDINGS = [
        StatePicked.STATE_BINDING,
        *JOB_BINDINGS,
        Binding("g", "error_groups", "Errors"),
        *MARK_BINDINGS,
    ]
    states = reads.STATES
    tables = (("Errors (g)", ERROR_GROUP_COLUMNS),)
    filter_hint = "filter: words (a state, a queue, a kind), args.KEY=VALUE, metadata.KEY:=JSON"
    contains_columns = ("args", "metadata")
    table_id = "river-jobs"
    columns = (
        Column("id", "the job's id", lambda j: j.id),
        Column("state", "River's state", lambda j: j.state),
        Column("queue", "its queue", lambda j: j.queue),
        flex("kind", "its kind (the worker that runs it)", lambda j: j.kind),
        Column("priority", "1 runs first, 4 last", lambda j: j.priority),
        Column(
            "attempt", "attempts started of its maximum", lambda j: f"{j.attempt}/{j.max_attempts}"
        ),
        Column("scheduled", "when it is or was due", lambda j: j.scheduled_at, time="when"),
        Column(
            "attempted by",
            "the client of its last attempt",
            lambda j: (j.attempted_by or [""])[-1],
        ),
        Column("errors", "its failed attempts", lambda j: j.error_count or ""),
        flex("tags", "its tags", lambda j: ", ".join(j.tags)),
    )

    def fetch(self, db: Database) -> list[reads.Job]:
        args, metadata = self.contains.get("args"), self.contains.get("metadata")
        return reads.list_jobs(db, self.picked(), limit=PAGE, args=args, metadata=metadata)

    def row_key(self, row: reads.Job) -> str:
        return str(row.id)

    def words(self, row: reads.Job) -> tuple[str, ...]:
        return (row.state, row.queue, row.kind)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(int(str(event.row_key.value))))

    def action_error_groups(self) -> None:
        """``g``: the discarded and retryable jobs grouped by error (``qctl jobs errors``'s
        read)."""
        self.app.push_screen(
            ErrorGroupsScreen(
                "River: discarded and retryable jobs by error",
                reads.error_groups,
                ERROR_GROUP_COLUMNS,
                JobDetailScreen,
            )
        )


class ClientsPane(ListPane):
    """River's clients at work and its leader (``qctl clients list``)."""

    filter_hint = "filter client id or queue (substring)"
    table_id = "river-clients"
    columns = (
        flex("client", "the client's id (as River writes it in attempted_by)", lambda c: c.client),
        Column(
            "queue", "a queue it runs jobs of (empty: the leader, running none)", lambda c: c.queue
        ),
        Column("running", "its jobs of that queue running now", lambda c: c.running),
        Column(
            "since",
            "when its oldest running job of the queue started",
            lambda c: c.oldest_attempted_at,
            time="ago",
        ),
        Column(
            "leader",
            "when the leader (River's maintenance runs there) was elected",
            lambda c: c.elected_at,
            time="ago",
        ),
        Column(
            "lease",
            "when the leader's lease expires unless it renews it",
            lambda c: c.expires_at,
            time="when",
        ),
    )

    def fetch(self, db: Database) -> list[reads.Client]:
        return reads.clients(db)

    def row_key(self, row: reads.Client) -> str:
        return f"{row.client}\x00{row.queue or ''}"

    def words(self, row: reads.Client) -> tuple[str, ...]:
        return (row.client or "", row.queue or "")


class JobView(RecordView[reads.Job]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="river-job-text")
            yield table("river-job-errors", "attempt", "at", flex("error"))

    def fetch(self, db: Database) -> reads.Job:
        return reads.get_job(db, int(self.record_id))

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job = self.detail
        record: dict[str, Any] = row_record(job)
        record.pop("errors")  # the table below
        lines = fmt.record_lines(record, json_keys=("args", "metadata"))
        self.query_one("#river-job-text", Static).update(Text("\n".join(lines)))
        errors = reads.attempt_errors(job)
        refill(
            self.query_one("#river-job-errors", DataTable),
            [
                (
                    str(i),
                    [
                        fmt.any_text(e["attempt"]),
                        fmt.any_text(e["at"]),
                        fmt.any_text(e["error"]),
                    ],
                )
                for i, e in enumerate(errors)
            ],
        )


class JobDetailScreen(JobActions, DetailScreen):
    BINDINGS = [*JOB_BINDINGS]

    def view(self) -> JobView:
        view = JobView(self.record_id)
        view.border_title = f"River job {self.record_id}"
        return view

    def act_on(self, verb: Verb[Database], what: str) -> None:
        self.top.act_verb(verb, Selection.of_ids([str(self.record_id)]))
