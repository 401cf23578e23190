"""The dashboard's panes (tabs of the main screen) and drill-in screens.

Each is imported from its module when first used (PEP 562): the dashboard's first frame
shows the Overview tab only, so it does not wait for the other tabs' modules."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qctl.tui.screens.dags import DagGraphScreen, DagsPane
    from qctl.tui.screens.events import EventDetailScreen, EventsPane
    from qctl.tui.screens.jobs import JobDetailScreen, JobsPane
    from qctl.tui.screens.leases import LeasesPane
    from qctl.tui.screens.overview import OverviewPane
    from qctl.tui.screens.workflows import WorkflowDetailScreen, WorkflowsPane

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
