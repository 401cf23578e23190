"""Oban's dashboard tabs and job detail (``qctl.systems.oban.tui``)."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from qctl.systems.oban import actions, reads
from qctl.tui import fmt
from qctl.tui.jobtabs import JobDetail, JobsTab, JobView, QueuesTab
from qctl.tui.panes import ListPane
from qctl.tui.widgets import Column, flex

if TYPE_CHECKING:
    from qctl.systems.oban.database import Database


def depth(queue: reads.Queue, state: str) -> str:
    n = getattr(queue, state)
    return f"{n}+" if state in queue.capped else str(n)


class QueuesPane(QueuesTab):
    """What waits and runs per queue, counted on Oban's state-queue index (``qctl queues
    list`` counts the finished jobs too, by reading them all), and what oban-py's
    producers say of it."""

    verbs: ClassVar[ModuleType] = actions
    table_id = "oban-queues"
    columns = (
        flex("queue", "the queue's name", lambda q: q.queue),
        Column(
            "paused",
            "its producers paused (yes, no, some; empty: Elixir keeps it in memory)",
            lambda q: q.paused,
        ),
        Column("limits", "each producer's limit", lambda q: ", ".join(map(str, q.limits)), drop=2),
        Column("nodes", "the nodes that run it", lambda q: len(q.nodes) or "", drop=2),
        Column(
            "available",
            "its jobs ready to be fetched",
            lambda q: depth(q, "available"),
            short="avail",
        ),
        Column(
            "executing", "its jobs a node runs now", lambda q: depth(q, "executing"), short="exec"
        ),
        Column("scheduled", "its jobs due later", lambda q: depth(q, "scheduled"), short="sched"),
        Column(
            "retryable",
            "its jobs that failed and wait to be retried",
            lambda q: depth(q, "retryable"),
            short="retry",
        ),
        Column(
            "suspended",
            "its jobs held until something else happens",
            lambda q: depth(q, "suspended"),
            short="susp",
        ),
        Column(
            "oldest available",
            "how long its next available job (in Oban's fetch order) has waited",
            lambda q: fmt.duration(q.oldest_available_age),
            short="oldest",
            drop=1,
        ),
    )

    def fetch(self, db: Database) -> list[reads.Queue]:
        return reads.list_queues(db, live=True, cap=reads.DASHBOARD_CAP)


class ObanJobView(JobView):
    reads: ClassVar[ModuleType] = reads
    decoded = frozenset({"args", "meta"})
    prefix = "oban-job"


class JobDetailScreen(JobDetail):
    verbs: ClassVar[ModuleType] = actions
    label = "Oban"
    view_type = ObanJobView


class JobsPane(JobsTab):
    verbs: ClassVar[ModuleType] = actions
    reads: ClassVar[ModuleType] = reads
    states = reads.STATES
    detail = JobDetailScreen
    kind = "worker"
    filter_hint = "filter: words (a state, a queue, a worker), args.KEY=VALUE, meta.KEY:=JSON"
    contains_columns = ("args", "meta")
    table_id = "oban-jobs"
    columns = (
        Column("id", "the job's id", lambda j: j.id),
        Column("state", "Oban's state", lambda j: j.state),
        Column("queue", "its queue", lambda j: j.queue),
        flex("worker", "the worker that runs it", lambda j: j.worker, middle=True),
        Column("priority", "0 runs first", lambda j: j.priority, short="prio", drop=2),
        Column(
            "attempt", "attempts started of its maximum", lambda j: f"{j.attempt}/{j.max_attempts}"
        ),
        Column(
            "scheduled",
            "when it is or was due (UTC)",
            lambda j: j.scheduled_at,
            time="when",
            drop=1,
        ),
        Column(
            "attempted by",
            "the node of its last attempt",
            lambda j: (j.attempted_by or [""])[0],
            drop=3,
        ),
        Column("errors", "its failed attempts", lambda j: j.error_count or ""),
        flex("tags", "its tags", lambda j: ", ".join(j.tags), drop=3),
    )


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
