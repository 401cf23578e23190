"""azync: job stores operated through ``qctl_store`` (every command in
``qctl.cli.registry``)."""

from __future__ import annotations

from qctl.cli.registry import COMMANDS
from qctl.systems import System

SYSTEM = System(
    name="azync",
    label="azync",
    tables=("azync_jobs",),
    default_schema=None,
    commands=COMMANDS,
    instead={
        "schedules": "see `qctl jobs list --state scheduled`",
        "versions": "see `qctl workflows list`",
    },
    capabilities=frozenset({"change_hints", "migrate"}),
)
