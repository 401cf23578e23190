"""Wakes (``driver.Notifier``) on SQLite, from the change log.

A job row that becomes pending, inserted or moved there by any process, wakes
``(source, kind)``: the same change-log reader thread that serves ``changes()`` (see
``changes.py``) publishes one wake per distinct pair per read, into a hub whose
subscribers have azync's buffer of 64 and silently drop on overflow. That is a superset
of PostgreSQL's notify points (which skip e.g. promotions and reaps); wakes are hints,
so an extra one only costs the worker an empty dequeue. A poll-only store (and an
in-memory database, which the reader thread cannot see) returns None.
"""

from __future__ import annotations

from qctl_kit.streams import Subscription
from qctl_store.sqlite.base import SqliteBase
from qctl_store.sqlite.changes import change_log_reader, pushes
from qctl_store.types import Wake


class WakeMixin(SqliteBase):
    def wake(self) -> Subscription[Wake] | None:
        if not pushes(self):
            return None
        return change_log_reader(self).subscribe_wakes()
