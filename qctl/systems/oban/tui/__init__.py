"""Oban's dashboard: the tabs ``qctl top`` shows on an Oban database, in the shell every
system shares (``qctl.tui.app``).

The visible tab reloads on Oban's insert and signal notifications (``Database.changes``)
and every ``--refresh`` seconds for what Oban does not notify (fetches, acks). The
actions are ``qctl.systems.oban.actions``, as ``qctl jobs retry|cancel|delete`` and
``qctl queues pause|resume`` run them, on the marked rows or the one under the cursor:
the plan, then one confirmation; hidden and refused with ``--read-only``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qctl.tui.base import SystemScreens, Tab

if TYPE_CHECKING:
    from textual.screen import Screen

    from qctl.systems.oban.database import Database

HELP = """\
qctl top: live view of an Oban database (oban-py or Elixir Oban)

  1-3        switch screen: Queues, Jobs, Nodes
  enter      drill in (a queue's jobs, a job's detail)   esc   back
  /          filter the list (esc clears it)             r     refresh now
  p          pause / resume automatic refresh            q     quit (top level)
  : or g     jump to a job by id                         ?     this help
  space      mark the row (* every row shown): an action takes the marked rows

Queues:  paused or not (oban-py's producers), jobs not finished per state, oldest wait
Jobs:    the newest jobs, live and finished (/ words: a state, a queue, a worker)
Nodes:   oban-py's producers (one per queue and node) or Elixir's leading peer
Detail:  every column of the job, args and meta decoded, its errors

Actions (the plan, then confirmed; hidden with --read-only):
  Jobs and detail: R retry, C cancel (an executing job: its node is signalled), X delete
  Queues: P pause, U resume (Oban's signal tells its producers)

Columns (a word shown on the screen, then what it means; names are Oban's):
Detail: attempt, at, error: each failed attempt, which, when, and its error.
"""


class ObanScreens(SystemScreens):
    label = "Oban"
    tabs = tuple(
        Tab(name, title, f"{__name__}.panes:{cls}")
        for name, title, cls in [
            ("queues", "Queues", "QueuesPane"),
            ("jobs", "Jobs", "JobsPane"),
            ("nodes", "Nodes", "NodesPane"),
        ]
    )
    help = HELP
    writes = frozenset({"job_retry", "job_cancel", "job_delete", "queue_pause", "queue_resume"})
    jump_prompt = ("jump to an Oban job", "job id")

    def jump_targets(self, db: Database, text: str) -> list[tuple[str, Any]]:
        from qctl.systems.oban import reads
        from qctl_kit.errors import NotFound

        job_id = reads.parse_id(text)
        try:
            return [("job", reads.get_job(db, job_id).id)]
        except NotFound:
            return []

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        return f"no Oban job {text!r}"

    def detail(self, entity: str, id: Any) -> Screen[None]:
        from qctl.systems.oban.tui.panes import JobDetailScreen

        return JobDetailScreen(id)


OBAN = ObanScreens()
"""Oban's tabs (queues, jobs, nodes) and the job detail screen."""
