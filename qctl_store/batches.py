"""The batching loop of both backends' bulk maintenance and admin actions."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from qctl_store.config import Config

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Store(Protocol[T_co]):
    """A backend base: ``PgBase`` (``tx()`` yields a cursor) or ``SqliteBase`` (a ``Tx``)."""

    @property
    def config(self) -> Config: ...

    def tx(self) -> AbstractContextManager[T_co]: ...


def batched_tx(store: _Store[T], step: Callable[[T, int], int]) -> int:
    """``step(tx, batch)``, each call in its own write transaction, until a batch comes
    back short; ``step`` returns how many rows its batch took, the result is their sum.
    No statement or transaction ever holds more than ``config.maintenance_batch`` rows,
    and concurrent maintainers interleave between batches."""
    batch = store.config.maintenance_batch
    total = 0
    while True:
        with store.tx() as t:
            n = step(t, batch)
        total += n
        if n < batch:
            return total
