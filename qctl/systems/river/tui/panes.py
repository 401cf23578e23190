"""River's dashboard tabs and job detail (``qctl.systems.river.tui``)."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding

from qctl.systems.river import actions, reads
from qctl.tui import fmt
from qctl.tui.jobtabs import JobDetail, JobsTab, JobView, QueuesTab
from qctl.tui.panes import ListPane
from qctl.tui.triage import ErrorGroupsScreen, error_group_columns
from qctl.tui.widgets import Column, flex

if TYPE_CHECKING:
    from qctl.systems.river.database import Database


class QueuesPane(QueuesTab):
    """What waits and runs per queue, counted on River's fetch index (``qctl queues
    list`` counts the finalized jobs too, by reading them all)."""

    verbs: ClassVar[ModuleType] = actions
    table_id = "river-queues"
    columns = (
        flex("queue", "the queue's name", lambda q: q.queue),
        Column(
            "paused",
            "when it was paused (empty: River's clients fetch from it)",
            lambda q: q.paused_at,
            time="ago",
        ),
        Column("available", "its jobs ready to be fetched", lambda q: q.available, short="avail"),
        Column("running", "its jobs a client works now", lambda q: q.running, short="run"),
        Column("scheduled", "its jobs due later", lambda q: q.scheduled, short="sched"),
        Column(
            "retryable",
            "its jobs that failed and wait to be retried",
            lambda q: q.retryable,
            short="retry",
        ),
        Column(
            "pending",
            "its jobs waiting for something else first",
            lambda q: q.pending,
            short="pend",
        ),
        Column(
            "oldest available",
            "how long its oldest available job has waited",
            lambda q: fmt.duration(q.oldest_available_age),
            short="oldest",
            drop=1,
        ),
        Column(
            "reported",
            "when a River client last reported it (empty: none has worked it)",
            lambda q: q.updated_at,
            time="ago",
            drop=2,
        ),
    )

    def fetch(self, db: Database) -> list[reads.Queue]:
        return reads.list_queues(db, live=True)


ERROR_GROUP_COLUMNS = error_group_columns("failed jobs", "kinds")


class RiverJobView(JobView):
    reads: ClassVar[ModuleType] = reads
    decoded = frozenset({"args", "metadata"})
    prefix = "river-job"


class JobDetailScreen(JobDetail):
    verbs: ClassVar[ModuleType] = actions
    label = "River"
    view_type = RiverJobView


class JobsPane(JobsTab):
    BINDINGS = [Binding("g", "error_groups", "Errors")]
    verbs: ClassVar[ModuleType] = actions
    reads: ClassVar[ModuleType] = reads
    states = reads.STATES
    detail = JobDetailScreen
    tables = (("Errors (g)", ERROR_GROUP_COLUMNS),)
    filter_hint = "filter: words (a state, a queue, a kind), args.KEY=VALUE, metadata.KEY:=JSON"
    contains_columns = ("args", "metadata")
    table_id = "river-jobs"
    columns = (
        Column("id", "the job's id", lambda j: j.id),
        Column("state", "River's state", lambda j: j.state),
        Column("queue", "its queue", lambda j: j.queue),
        flex("kind", "its kind (the worker that runs it)", lambda j: j.kind, middle=True),
        Column("priority", "1 runs first, 4 last", lambda j: j.priority, short="prio", drop=2),
        Column(
            "attempt", "attempts started of its maximum", lambda j: f"{j.attempt}/{j.max_attempts}"
        ),
        Column("scheduled", "when it is or was due", lambda j: j.scheduled_at, time="when", drop=1),
        Column(
            "attempted by",
            "the client of its last attempt",
            lambda j: (j.attempted_by or [""])[-1],
            drop=3,
        ),
        Column("errors", "its failed attempts", lambda j: j.error_count or ""),
        flex("tags", "its tags", lambda j: ", ".join(j.tags), drop=3),
    )

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
