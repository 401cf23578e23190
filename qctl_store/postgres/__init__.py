"""The PostgreSQL backend, schema- and wire-compatible with azync's ``driver/azyncpgx``."""

from __future__ import annotations

import psycopg

from qctl_store import contract
from qctl_store.postgres.admin import AdminMixin
from qctl_store.postgres.changes import ChangesMixin
from qctl_store.postgres.dags import DAGMixin
from qctl_store.postgres.events import EventsMixin
from qctl_store.postgres.jobs import JobsMixin
from qctl_store.postgres.leader import LeaderMixin
from qctl_store.postgres.maintenance import MaintenanceMixin
from qctl_store.postgres.migrate import MigrateMixin
from qctl_store.postgres.rows import DIALECT, ROWS
from qctl_store.postgres.throughput import ThroughputMixin
from qctl_store.postgres.wake import WakeMixin
from qctl_store.postgres.workflows import WorkflowMixin


class PostgresStore(
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
    contract.AzyncStore[psycopg.Connection],
):
    """Every capability of the contract over one psycopg pool (see ``PgBase``)."""

    dialect = DIALECT
    rows = ROWS
