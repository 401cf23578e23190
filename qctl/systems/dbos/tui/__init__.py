"""DBOS's dashboard: the tabs and screens ``qctl top`` shows on a DBOS system database,
in the shell every system shares (``qctl.tui.app``).

DBOS sends no notification when a workflow's status changes, so the dashboard polls
(on PostgreSQL it refreshes at once on the messages, events and streams DBOS notifies):
the visible tab reloads every ``--refresh`` seconds with the indexed reads of
``qctl.systems.dbos.reads`` (never a scan of the whole history) and the status bar says
"polling". Actions are ``qctl.systems.dbos.actions``, as ``qctl workflows`` and ``qctl
schedules`` run them: a dry run first, then one confirmation; hidden and refused with
``--read-only``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qctl.tui.base import SystemScreens, Tab

if TYPE_CHECKING:
    from textual.screen import Screen

    from qctl.systems.dbos.database import Database

HELP = """\
qctl top: live view of a DBOS system database (polling; notifications on PostgreSQL)

  1-5        switch screen: Overview, Workflows, Queues, Schedules, Executors
  enter      drill in (workflow detail, a child workflow)  esc   back
  /          filter the list (esc clears it)         r     refresh now
  p          pause / resume automatic refresh        q     quit (top level)
  tab        move between tables                     ?     this help
  : or g     jump to a workflow by id or unique prefix (g: not on Workflows)

Overview:  per workflow name and per queue: in flight now (pending, enqueued,
           delayed) and finished in the last hour; workflows completed per minute
           over the last hour (✗ errors); the latest errors. enter opens the
           workflows of a name or queue, or an error's workflow
Workflows: newest first; t status, n/b next/previous page;
           / words: a workflow name, a status, queue=Q, version=V, id=PREFIX,
           parent=ID (several words narrow together); g groups the failed
           ones (within the filter) by error, largest group first (again: the
           workflows); enter opens a group's newest workflow
           space mark a row, * mark every workflow matching the filter (again:
           clear); the actions then apply to the marked ones after one
           confirmation that says how many
Detail:    status, timings, queue, input, output or error; the step timeline
           (step, function, start, duration, output or error, child workflow);
           the tree of child workflows (enter opens one) and, beside it, the
           timeline: every step of the workflow and its descendants by start
           (enter opens the step's workflow); events and streams
Queues:    enqueued, pending (running), delayed, oldest enqueued, limits;
           enter opens the queue's workflows
Schedules: workflow, cron, status, when it last fired
Executors: each executor's PENDING workflows and latest activity (the last hour);
           X recovers a dead one's PENDING workflows (re-enqueued, as DBOS's
           recovery does), after a dry run that counts them

Actions (a dry run, then confirmed; hidden with --read-only):
  C cancel   R resume (optionally onto a queue)   F fork from step N
  W rewind to step N   D delete   L delay (a DELAYED workflow starts after a duration)
  T cancel tree, E delete tree: the workflow (or the marked ones) and every workflow
    it started, at any depth (the CLI's --children); the question counts the tree
  Schedules: P pause   U resume   N trigger now
  Executors: X recover a dead executor's PENDING workflows

Columns and bars (a word shown on the screen, then what it means):
Status bar: live: DBOS's notifications (messages, events, streams; PostgreSQL
  only) push updates, + polling: status is re-read every --refresh seconds too;
  polling: re-read every --refresh seconds (SQLite: DBOS sends no notifications);
  every: that interval; paused: p stopped the refresh; connecting:
  before the first answer; disconnected: the database does not answer (its error
  follows); then the target (database, [read-only]); updated: the last read.
Bars: status: the status listed (t); filter: the / words; page: the page number
  (n/b), after the rows shown; marked: workflows the actions apply to (space, *).
Statuses: PENDING: running on an executor; ENQUEUED: waiting on its queue; DELAYED:
  enqueued to start later; SUCCESS: finished with a result; ERROR: finished with an
  error; CANCELLED: cancelled by an operator or a timeout;
  MAX_RECOVERY_ATTEMPTS_EXCEEDED: out of recovery attempts (max-recovery).
Chart: all: every workflow, then the busiest names, each with its hour's total
  and ✗ errors.
"""


class DbosScreens(SystemScreens):
    label = "DBOS"
    tabs = tuple(
        Tab(name, title, f"{__name__}.{module}:{cls}")
        for name, title, module, cls in [
            ("overview", "Overview", "overview", "OverviewPane"),
            ("workflows", "Workflows", "workflows", "WorkflowsPane"),
            ("queues", "Queues", "queues", "QueuesPane"),
            ("schedules", "Schedules", "queues", "SchedulesPane"),
            ("executors", "Executors", "executors", "ExecutorsPane"),
        ]
    )
    help = HELP
    writes = frozenset(
        {
            "wf_cancel",
            "wf_resume",
            "wf_fork",
            "wf_rewind",
            "wf_delete",
            "wf_cancel_tree",
            "wf_delete_tree",
            "wf_delay",
            "schedule_pause",
            "schedule_resume",
            "schedule_trigger",
            "executor_recover",
        }
    )
    jump_prompt = ("jump to a DBOS workflow", "workflow id or unique prefix")

    def jump_targets(self, db: Database, text: str) -> list[tuple[str, Any]]:
        """The workflow whose id is ``text``, else those it is a prefix of (a few)."""
        from qctl.systems.dbos import reads

        text = text.strip()
        rows = reads.matching_ids(db, reads.WorkflowFilter(workflow_id_prefix=text), 6)
        exact = [r for r in rows if r["workflow_id"] == text]
        return [("workflow", r["workflow_id"]) for r in exact or rows]

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        if not targets:
            return f"no DBOS workflow id starts with {text!r}"
        shown = ", ".join(str(i) for _, i in targets[:4])
        return f"{text!r} is ambiguous: {shown}{', ...' if len(targets) > 4 else ''}"

    def detail(self, entity: str, id: Any) -> Screen[None]:
        from qctl.systems.dbos.tui.workflows import WorkflowDetailScreen

        return WorkflowDetailScreen(str(id))


DBOS = DbosScreens()
