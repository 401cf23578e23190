"""PLACEHOLDER: replaced by the capability's implementation."""

from qctl_store.postgres.base import PgBase


class WorkflowMixin(PgBase):
    pass
