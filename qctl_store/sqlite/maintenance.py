"""PLACEHOLDER: replaced by the capability's implementation."""

from qctl_store.sqlite.base import SqliteBase


class MaintenanceMixin(SqliteBase):
    pass
