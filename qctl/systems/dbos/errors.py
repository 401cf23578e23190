"""Refusals of DBOS reads and actions: not-found errors (exit 3) whose text is the
whole message."""

from __future__ import annotations

from qctl_store.errors import NotFound, StoreError


class _Refusal(NotFound):
    def __init__(self, op: str, message: str) -> None:
        self.op = op
        StoreError.__init__(self, message)


class WrongState(_Refusal):
    """The workflow is not in a status the verb accepts."""


class NoSuchName(_Refusal):
    """No workflow, queue or schedule by that id or name."""
