"""azync's dashboard: its panes (tabs of the main screen) and drill-in screens, and
``AZYNC``, what the shell (``qctl.tui.app``) needs to know of them.

Each is imported from its module when first used (PEP 562): the dashboard's first frame
shows the Overview tab only, so it does not wait for the other tabs' modules."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from qctl.tui.base import SystemScreens, Tab

if TYPE_CHECKING:
    from textual.screen import Screen

    from qctl.core.changes import ChangeFeed
    from qctl.systems.azync.tui.dags import DagGraphScreen, DagsPane
    from qctl.systems.azync.tui.events import EventDetailScreen, EventsPane
    from qctl.systems.azync.tui.jobs import JobDetailScreen, JobsPane
    from qctl.systems.azync.tui.leases import LeasesPane
    from qctl.systems.azync.tui.overview import OverviewPane
    from qctl.systems.azync.tui.workflows import WorkflowDetailScreen, WorkflowsPane
    from qctl_store.contract import ConsoleStore

MODULES = {
    "DagGraphScreen": "dags",
    "DagsPane": "dags",
    "EventDetailScreen": "events",
    "EventsPane": "events",
    "JobDetailScreen": "jobs",
    "JobsPane": "jobs",
    "LeasesPane": "leases",
    "OverviewPane": "overview",
    "WorkflowDetailScreen": "workflows",
    "WorkflowsPane": "workflows",
}

__all__ = [
    "DagGraphScreen",
    "DagsPane",
    "EventDetailScreen",
    "EventsPane",
    "JobDetailScreen",
    "JobsPane",
    "LeasesPane",
    "OverviewPane",
    "WorkflowDetailScreen",
    "WorkflowsPane",
]


def __getattr__(name: str) -> Any:
    if name not in MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{MODULES[name]}"), name)


HELP = """\
qctl top: live view of an azync store

  1-6        switch screen: Overview, Jobs, DAGs, Events, Workflows, Leases
  enter      drill in (row detail, DAG graph)        esc   back
  /          filter the list (esc clears it)         r     refresh now
  p          pause / resume automatic refresh        q     quit (top level)
  tab        move between tables                     ?     this help
  : or g     jump to a job, DAG run, event or workflow execution by id or prefix
             (on the dead jobs, g groups them by error: use :)

Jobs:      s source, t state, n/b next/previous page, v payload (detail);
           / a kind, key=value meta, error:TEXT; a word that names no kind
           matches the jobs whose kind, id or last error contains it
           space mark a row, * mark every job matching the filter (again: clear);
           the actions then apply to the marked jobs after one confirmation;
           g on dead jobs: grouped by last error with counts (error-first
           triage), enter a group's jobs, g again the jobs
DAGs:      t state tab; enter on a name narrows the runs, esc clears it;
           graph: arrows select a task, enter its job
Events:    t events without deliveries only; enter an event's deliveries
Workflows: t state; enter an execution's jobs and history
Leases:    active jobs, soonest expiry first; per kind, the kinds whose leases
           expire most first
Overview:  o sort column, enter jobs of the row; ~ an estimated count;
           last hour: processed per minute, ✗ failed

Actions (confirmed; hidden with --read-only):
  R retry / replay   N run now   P pause   U resume   A archive   D delete
  C compensate       X cancel    S signal  Z resolve an uncertain operation

Columns and bars (a word shown on the screen, then what it means):
Status bar: live: change hints push updates; polling: re-read every --refresh
  seconds; manual: read on r only; paused: p stopped the refresh; connecting: before
  the first answer; disconnected: the database does not answer (its error follows,
  in full); waiting for a lock: a read waits behind another session's lock (its
  holder follows: pid, user, application, what it runs); then the target (database,
  schema, [read-only]); updated: the last read.
Bars: source: the job source listed (s); state: the state listed (t), or DAG state
  tabs with their counts; filter: the / text, what it came to mean in italics; name:
  the DAG or workflow name listed; type: the event type listed; without deliveries
  only: events with no delivery row, none subscribed when published or its deliveries
  vacuumed (t); shown: rows on screen of how many match (≈ estimated);
  page: the page number (n/b); no index: the listing reads the whole table; marked:
  jobs the actions apply to (space, *); active leases: jobs leased now; overdue: of
  them, past their expiry and not yet reaped; ~: an estimated count (queues); grouped
  by error: distinct errors of the jobs read (the newest 10,000 at most).
"""


class AzyncScreens(SystemScreens):
    label = "azync"
    tabs = tuple(
        Tab(name, title, f"{__name__}.{MODULES[pane]}:{pane}")
        for name, title, pane in [
            ("overview", "Overview", "OverviewPane"),
            ("jobs", "Jobs", "JobsPane"),
            ("dags", "DAGs", "DagsPane"),
            ("events", "Events", "EventsPane"),
            ("workflows", "Workflows", "WorkflowsPane"),
            ("leases", "Leases", "LeasesPane"),
        ]
    )
    help = HELP
    writes = frozenset(
        {
            "job_retry",
            "job_run_now",
            "job_pause",
            "job_resume",
            "job_archive",
            "job_delete",
            "dag_retry",
            "dag_compensate",
            "dag_cancel",
            "dag_pause",
            "dag_signal",
            "event_replay",
            "wf_resolve",
            "wf_cancel",
        }
    )
    jump_prompt = (
        "jump to a job, DAG run, event or workflow execution",
        "id or unique prefix (8+ hex digits)",
    )

    def changes(self, store: ConsoleStore) -> ChangeFeed:
        from qctl.systems.azync.tui.feed import AzyncFeed

        return AzyncFeed(store)  # LISTEN on PostgreSQL, the change log on SQLite

    def jump_targets(self, store: ConsoleStore, text: str) -> list[tuple[str, Any]]:
        from qctl.systems.azync.tui.jump import jump_targets

        return list(jump_targets(store, text))

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        from qctl.systems.azync.tui.jump import describe

        return describe(targets, text)

    def detail(self, entity: str, id: Any) -> Screen[None]:
        screen = {
            "job": "JobDetailScreen",
            "dag": "DagGraphScreen",
            "event": "EventDetailScreen",
            "workflow": "WorkflowDetailScreen",
        }[entity]
        detail: Screen[None] = __getattr__(screen)(id)
        return detail


AZYNC = AzyncScreens()
