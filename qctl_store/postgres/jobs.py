"""PLACEHOLDER: replaced by the capability's implementation."""

from qctl_store.postgres.base import PgBase


class JobsMixin(PgBase):
    pass
