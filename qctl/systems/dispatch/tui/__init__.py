"""dispatch's dashboard: the tabs ``qctl top`` shows on a dispatch database, in the
shell every system shares (``qctl.tui.app``).

dispatch sends no notification when a job changes (from v1.5.3 only a wake on enqueue,
naming no job), so the dashboard refreshes on that wake and polls for the rest: the
visible tab reloads every ``--refresh`` seconds and the status bar says "live", "+ polling
every Ns". The actions are
``qctl.systems.dispatch.actions``, as ``qctl jobs cancel``, ``qctl dlq replay`` and
``qctl cron trigger|enable|disable`` run them: a dry run first, then one confirmation;
hidden and refused with ``--read-only``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qctl.tui.base import SystemScreens, Tab

if TYPE_CHECKING:
    from textual.screen import Screen

    from qctl.systems.dispatch.database import Database

HELP = """\
qctl top: live view of a dispatch database (wake channel, polled for the rest)

  1-6        switch screen: Queues, Jobs, DLQ, Cron, Workers, Workflows
  enter      drill in (a queue's jobs, a job's detail)   esc   back
  /          filter the list (esc clears it)             r     refresh now
  p          pause / resume automatic refresh            q     quit (top level)
  : or g     jump to a job by id or unique prefix        ?     this help
  g          on Jobs: the failed jobs grouped by error (enter: a group's newest)

Queues:  jobs waiting and running, and how long the oldest due one has waited
Jobs:    the newest jobs (/ words: a state, a queue, a job name)
Detail:  every column of the job, its payload, its DLQ entries
DLQ:     the newest failures, replayed or not
Cron:    schedule, job, enabled, next and last run
Workers: hostname, queues, concurrency, state, leader, last seen
Workflows: the newest workflow runs: state, start, end, error (read-only)

Actions (a dry run, then confirmed; hidden with --read-only):
  Jobs and detail: C cancel (a pending or retrying job)
  DLQ: R replay (a new pending job; each entry once), X delete
  Cron: T run now (the job a fire enqueues), E enable, D disable, X delete

Columns (a word shown on the screen, then what it means; names are dispatch's):
Detail: DLQ entry: an entry of the job shown; failed, replayed, error: as in DLQ.
"""


class DispatchScreens(SystemScreens):
    label = "dispatch"
    tabs = tuple(
        Tab(name, title, f"{__name__}.panes:{cls}")
        for name, title, cls in [
            ("queues", "Queues", "QueuesPane"),
            ("jobs", "Jobs", "JobsPane"),
            ("dlq", "DLQ", "DlqPane"),
            ("cron", "Cron", "CronPane"),
            ("workers", "Workers", "WorkersPane"),
            ("workflows", "Workflows", "RunsPane"),
        ]
    )
    help = HELP
    writes = frozenset(
        {
            "job_cancel",
            "dlq_replay",
            "dlq_delete",
            "cron_trigger",
            "cron_enable",
            "cron_disable",
            "cron_delete",
        }
    )
    jump_prompt = ("jump to a dispatch job", "job id or unique prefix")

    def jump_targets(self, db: Database, text: str) -> list[tuple[str, Any]]:
        from qctl.systems.dispatch import reads
        from qctl_kit.errors import NotFound

        try:
            return [("job", reads.resolve_job(db, text.strip()))]
        except NotFound:
            return []

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        return f"no dispatch job {text!r}"

    def detail(self, entity: str, id: Any) -> Screen[None]:
        from qctl.systems.dispatch.tui.panes import JobDetailScreen

        return JobDetailScreen(str(id))


DISPATCH = DispatchScreens()
