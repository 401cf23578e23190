"""Oban's dashboard tabs and job detail (``qctl.systems.oban.tui``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
from qctl.systems.oban import actions, reads
from qctl.tui import fmt
from qctl.tui.panes import (
    MARK_BINDINGS,
    ContainsFiltered,
    DetailScreen,
    ListPane,
    RecordView,
    StatePicked,
)
from qctl.tui.widgets import Column, flex, refill, table

if TYPE_CHECKING:
    from qctl.systems.oban.database import Database

PAGE = 200
"""Rows the Jobs tab reads per refresh (newest first)."""


def depth(queue: reads.Queue, state: str) -> str:
    n = getattr(queue, state)
    return f"{n}+" if state in queue.capped else str(n)


class QueuesPane(ListPane):
    """What waits and runs per queue, counted on Oban's state-queue index (``qctl queues
    list`` counts the finished jobs too, by reading them all), and what oban-py's
    producers say of it."""

    BINDINGS = [
        Binding("P", "queue_pause", "Pause"),
        Binding("U", "queue_resume", "Resume"),
        *MARK_BINDINGS,
    ]
    filter_hint = "filter queue name (substring)"
    table_id = "oban-queues"
    columns = (
        flex("queue", "the queue's name", lambda q: q.queue),
        Column(
            "paused",
            "its producers paused (yes, no, some; empty: Elixir keeps it in memory)",
            lambda q: q.paused,
        ),
        Column("limits", "each producer's limit", lambda q: ", ".join(map(str, q.limits))),
        Column("nodes", "the nodes that run it", lambda q: len(q.nodes) or ""),
        Column("available", "its jobs ready to be fetched", lambda q: depth(q, "available")),
        Column("executing", "its jobs a node runs now", lambda q: depth(q, "executing")),
        Column("scheduled", "its jobs due later", lambda q: depth(q, "scheduled")),
        Column(
            "retryable",
            "its jobs that failed and wait to be retried",
            lambda q: depth(q, "retryable"),
        ),
        Column(
            "suspended",
            "its jobs held until something else happens",
            lambda q: depth(q, "suspended"),
        ),
        Column(
            "oldest available",
            "how long its next available job (in Oban's fetch order) has waited",
            lambda q: fmt.duration(q.oldest_available_age),
        ),
    )

    def fetch(self, db: Database) -> list[reads.Queue]:
        return reads.list_queues(db, live=True, cap=reads.DASHBOARD_CAP)

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


class JobsPane(ContainsFiltered, StatePicked, ListPane, JobActions):
    BINDINGS = [StatePicked.STATE_BINDING, *JOB_BINDINGS, *MARK_BINDINGS]
    states = reads.STATES
    filter_hint = "filter: words (a state, a queue, a worker), args.KEY=VALUE, meta.KEY:=JSON"
    contains_columns = ("args", "meta")
    table_id = "oban-jobs"
    columns = (
        Column("id", "the job's id", lambda j: j.id),
        Column("state", "Oban's state", lambda j: j.state),
        Column("queue", "its queue", lambda j: j.queue),
        flex("worker", "the worker that runs it", lambda j: j.worker),
        Column("priority", "0 runs first", lambda j: j.priority),
        Column(
            "attempt", "attempts started of its maximum", lambda j: f"{j.attempt}/{j.max_attempts}"
        ),
        Column("scheduled", "when it is or was due (UTC)", lambda j: j.scheduled_at, time="when"),
        Column(
            "attempted by",
            "the node of its last attempt",
            lambda j: (j.attempted_by or [""])[0],
        ),
        Column("errors", "its failed attempts", lambda j: j.error_count or ""),
        flex("tags", "its tags", lambda j: ", ".join(j.tags)),
    )

    def fetch(self, db: Database) -> list[reads.Job]:
        args, meta = self.contains.get("args"), self.contains.get("meta")
        return reads.list_jobs(db, self.picked(), limit=PAGE, args=args, meta=meta)

    def row_key(self, row: reads.Job) -> str:
        return str(row.id)

    def words(self, row: reads.Job) -> tuple[str, ...]:
        return (row.state, row.queue, row.worker)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(int(str(event.row_key.value))))


class JobView(RecordView[reads.Job]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="oban-job-text")
            yield table("oban-job-errors", "attempt", "at", flex("error"))

    def fetch(self, db: Database) -> reads.Job:
        return reads.get_job(db, int(self.record_id))

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job = self.detail
        record: dict[str, Any] = row_record(job)
        record.pop("errors")  # the table below
        lines = fmt.record_lines(record, json_keys=("args", "meta"))
        self.query_one("#oban-job-text", Static).update(Text("\n".join(lines)))
        errors = [e for e in job.errors or [] if isinstance(e, dict)]
        refill(
            self.query_one("#oban-job-errors", DataTable),
            [
                (
                    str(i),
                    [fmt.any_text(e.get(k)) for k in ("attempt", "at", "error")],
                )
                for i, e in enumerate(errors)
            ],
        )


class JobDetailScreen(JobActions, DetailScreen):
    BINDINGS = [*JOB_BINDINGS]

    def view(self) -> JobView:
        view = JobView(self.record_id)
        view.border_title = f"Oban job {self.record_id}"
        return view

    def act_on(self, verb: Verb[Database], what: str) -> None:
        self.top.act_verb(verb, Selection.of_ids([str(self.record_id)]))


class NodesPane(ListPane):
    """oban-py's producers, one per queue and node, or Elixir's leading peer."""

    filter_hint = "filter: words (a node, a queue)"
    table_id = "oban-nodes"
    columns = (
        flex("node", "the node's name", lambda n: n.node),
        Column("queue", "the queue its producer runs (empty: a peer)", lambda n: n.queue),
        Column("limit", "how many jobs it runs at once", lambda n: n.local_limit),
        Column("paused", "whether its producer is paused", lambda n: n.paused),
        Column(
            "leader",
            "whether it leads (runs the pruner, stager)",
            lambda n: "yes" if n.leader else "",
        ),
        Column("started", "when it started", lambda n: n.started_at, time="ago"),
        Column(
            "reported",
            "when its node last refreshed it (oban-py: every 15s; a minute late, it is deleted)",
            lambda n: n.updated_at,
            time="ago",
        ),
    )

    def fetch(self, db: Database) -> list[reads.Node]:
        return reads.nodes(db)

    def row_key(self, row: reads.Node) -> str:
        return row.uuid or f"{row.name}.{row.node}"

    def words(self, row: reads.Node) -> tuple[str, ...]:
        return (row.node, row.queue)
