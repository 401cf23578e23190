"""The dashboard's panes (tabs of the main screen) and drill-in screens."""

from __future__ import annotations

from qctl.tui.screens.dags import DagGraphScreen, DagsPane
from qctl.tui.screens.events import EventDetailScreen, EventsPane
from qctl.tui.screens.jobs import JobDetailScreen, JobsPane
from qctl.tui.screens.leases import LeasesPane
from qctl.tui.screens.overview import OverviewPane
from qctl.tui.screens.workflows import WorkflowDetailScreen, WorkflowsPane

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
