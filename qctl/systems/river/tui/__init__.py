"""River's dashboard: the tabs ``qctl top`` shows on a River database, in the shell every
system shares (``qctl.tui.app``).

The dashboard is pushed what River notifies on this schema's topics (inserts of
available jobs, cancels, pauses and resumes, leadership: ``Database.changes``) and polls
the rest (fetches and completions send nothing) every ``--refresh`` seconds; the status
bar says "live + polling every Ns". On a lost connection it polls until the feed is
back. The actions are
``qctl.systems.river.actions``, as ``qctl jobs retry|cancel|delete`` and ``qctl queues
pause|resume`` run them, on the marked rows or the one under the cursor: the plan, then
one confirmation; hidden and refused with ``--read-only``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qctl.tui.base import SystemScreens, Tab

if TYPE_CHECKING:
    from textual.screen import Screen

    from qctl.systems.river.database import Database

HELP = """\
qctl top: live view of a River database (River's notifications + polling)

  1-3        switch screen: Queues, Jobs, Clients
  enter      drill in (a queue's jobs, a job's detail)   esc   back
  /          filter the list (esc clears it)             r     refresh now
  p          pause / resume automatic refresh            q     quit (top level)
  : or g     jump to a job by id                         ?     this help
  space      mark the row (* every row shown): an action takes the marked rows

Queues:  paused or not, jobs not finalized per state, oldest available job's wait
Jobs:    the newest jobs, live and finalized (/ words: a state, a queue, a kind)
Clients: the clients running jobs (per queue) and the leader, its lease
Detail:  every column of the job, args and metadata decoded, its errors

Actions (the plan, then confirmed; hidden with --read-only):
  Jobs and detail: R retry, C cancel (a running job: its client is told), X delete
  Jobs: g the discarded and retryable jobs grouped by error (enter: a group's newest)
  Queues: P pause, U resume (River's control topic tells its clients)

Columns (a word shown on the screen, then what it means; names are River's):
Detail: attempt, at, error: each failed attempt, when, and its error.
"""


class RiverScreens(SystemScreens):
    label = "River"
    tabs = tuple(
        Tab(name, title, f"{__name__}.panes:{cls}")
        for name, title, cls in [
            ("queues", "Queues", "QueuesPane"),
            ("jobs", "Jobs", "JobsPane"),
            ("clients", "Clients", "ClientsPane"),
        ]
    )
    help = HELP
    writes = frozenset({"job_retry", "job_cancel", "job_delete", "queue_pause", "queue_resume"})
    jump_prompt = ("jump to a River job", "job id")

    def jump_targets(self, db: Database, text: str) -> list[tuple[str, Any]]:
        from qctl.systems.river import reads
        from qctl_kit.errors import NotFound

        job_id = reads.parse_id(text)
        try:
            return [("job", reads.get_job(db, job_id).id)]
        except NotFound:
            return []

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        return f"no River job {text!r}"

    def detail(self, entity: str, id: Any) -> Screen[None]:
        from qctl.systems.river.tui.panes import JobDetailScreen

        return JobDetailScreen(id)


RIVER = RiverScreens()
"""River's tabs (queues, jobs) and the job detail screen."""
