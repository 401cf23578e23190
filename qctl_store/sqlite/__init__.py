"""The embedded SQLite backend."""

from __future__ import annotations

import sqlite3

from qctl_store import contract
from qctl_store.sqlite.admin import AdminMixin
from qctl_store.sqlite.changes import ChangesMixin
from qctl_store.sqlite.dags import DAGMixin
from qctl_store.sqlite.events import EventsMixin
from qctl_store.sqlite.jobs import JobsMixin
from qctl_store.sqlite.leader import LeaderMixin
from qctl_store.sqlite.maintenance import MaintenanceMixin
from qctl_store.sqlite.migrate import MigrateMixin
from qctl_store.sqlite.rows import DIALECT, ROWS
from qctl_store.sqlite.throughput import ThroughputMixin
from qctl_store.sqlite.wake import WakeMixin
from qctl_store.sqlite.workflows import WorkflowMixin


class SqliteStore(
    JobsMixin,
    EventsMixin,
    AdminMixin,
    ThroughputMixin,
    MaintenanceMixin,
    DAGMixin,
    WorkflowMixin,
    ChangesMixin,
    WakeMixin,
    LeaderMixin,
    MigrateMixin,
    contract.AzyncStore[sqlite3.Connection],
):
    """Every capability of the contract over per-thread SQLite connections (see ``SqliteBase``)."""

    dialect = DIALECT
    rows = ROWS
