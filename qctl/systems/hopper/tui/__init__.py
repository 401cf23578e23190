"""hopper's dashboard: the tabs ``qctl top`` shows on a hopper database, in the shell
every system shares (``qctl.tui.app``).

The dashboard is live on hopper's notifications (``Database.channels``: inserts, cancels,
queue changes, awaited jobs done) and polls for what they miss (claims, completions,
clients): the status bar says "live", "+ polling every Ns". The actions are
``qctl.systems.hopper.actions``, as ``qctl jobs cancel|retry`` and ``qctl queues
pause|resume`` run them: the plan first, then one confirmation; hidden and refused with
``--read-only``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qctl.tui.base import SystemScreens, Tab

if TYPE_CHECKING:
    from textual.screen import Screen

    from qctl.systems.hopper.database import Database

HELP = """\
qctl top: live view of a hopper database (notifications, polled for the rest)

  1-5        switch screen: Queues, Jobs, Clients, Workflows, Streams
  enter      drill in (a queue's jobs, a job, a workflow) esc  back
  /          filter the list (esc clears it)             r     refresh now
  p          pause / resume automatic refresh            q     quit (top level)
  : or g     jump to a job by id or unique prefix        ?     this help
  g          on Jobs: the discarded jobs grouped by error (enter: a group's newest)
  space      mark the row (* every row shown): an action takes the marked rows

Queues:  paused, live jobs per state, oldest claimable age, completed last minute, limits
Jobs:    the newest jobs, live and finalized (/ words: a state, a queue, a kind)
Detail:  every column of the job, its attempt errors, its workflow edges
Clients: client leases, live or expired, the leader, jobs each runs
Workflows: the newest batches and workflows and their progress (read-only); enter:
         its dependency graph (each job's kind, id end, state) and its jobs
Streams: stream consumers and where each has read to (seek: qctl streams seek)

Actions (the plan, then confirmed; hidden with --read-only):
  Jobs and detail: C cancel (a running job: cancel requested), R retry
  Queues: P pause, U resume (NOTIFY hopper_control tells its clients)

Columns (a word shown on the screen, then what it means; names are hopper's):
Detail: attempt, at, error: each failed attempt, when, and its error.
"""


class HopperScreens(SystemScreens):
    label = "hopper"
    tabs = tuple(
        Tab(name, title, f"{__name__}.{where}")
        for name, title, where in [
            ("queues", "Queues", "panes:QueuesPane"),
            ("jobs", "Jobs", "panes:JobsPane"),
            ("clients", "Clients", "panes:ClientsPane"),
            ("workflows", "Workflows", "workflows:WorkflowsPane"),
            ("streams", "Streams", "panes:StreamsPane"),
        ]
    )
    help = HELP
    writes = frozenset({"job_cancel", "job_retry", "queue_pause", "queue_resume"})
    jump_prompt = ("jump to a hopper job", "job id or unique prefix")

    def jump_targets(self, db: Database, text: str) -> list[tuple[str, Any]]:
        from qctl.systems.hopper import reads
        from qctl_kit.errors import NotFound

        try:
            return [("job", reads.resolve_job(db, text.strip()))]
        except NotFound:
            return []

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        return f"no hopper job {text!r}"

    def detail(self, entity: str, id: Any) -> Screen[None]:
        from qctl.systems.hopper.tui.panes import JobDetailScreen

        return JobDetailScreen(id)


HOPPER = HopperScreens()
