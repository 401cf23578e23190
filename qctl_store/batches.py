"""The batching loop of both backends' bulk maintenance and admin actions (over the
toolkit's ``sized_batches``), and the batched verbs that run the same statements on both."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from qctl_kit.batches import BatchSize, sized_batches
from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.config import Config
from qctl_store.types import NukeReport, Source

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Store(Protocol[T_co]):
    """A backend base: ``PgBase`` (``tx()`` yields a cursor) or ``SqliteBase`` (a ``Tx``)."""

    @property
    def config(self) -> Config: ...

    def tx(self) -> AbstractContextManager[T_co]: ...

    def bump_kinds(self, cur: Any, source: str, kinds: Any, column: str) -> None: ...


def batched_tx(
    store: _Store[T],
    step: Callable[[T, int], int],
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """``step(tx, batch)``, each call in its own write transaction, until a batch comes
    back short; ``step`` returns how many rows its batch took, the result is their sum.
    No statement or transaction ever holds more than ``config.maintenance_batch`` rows,
    each is sized toward ``config.maintenance_batch_seconds`` (``BatchSize``), and
    concurrent maintainers interleave between batches."""
    size = BatchSize(store.config.maintenance_batch, store.config.maintenance_batch_seconds)
    return sized_batches(size, store.tx, step, clock).rows


def reap_batches(
    store: _Store[T], source: str, step: Callable[[T, int], Sequence[Any]]
) -> tuple[int, int]:
    """``reap_expired``'s batches: ``step(tx, batch)`` takes one batch of expired leases
    back and returns their rows (``kind``, ``died``), whose reaps are counted per kind in
    the same transaction; (reaped, of those killed past their reap budget)."""
    killed = 0

    def counted(t: T, batch: int) -> int:
        nonlocal killed
        rows = step(t, batch)
        store.bump_kinds(t, source, (r["kind"] for r in rows), "reaped")
        killed += sum(1 for r in rows if r["died"])
        return len(rows)

    return batched_tx(store, counted), killed


class Nuke(StoreBase):
    """Mixed into each backend's ``MaintenanceMixin`` (``maintenance.sql``)."""

    def nuke_all(self, source: Source) -> NukeReport:
        q = self.queries("maintenance.sql")
        args = {"source": validate.source(source).value}
        # One transaction, as azync's NukeAll (driver/azyncpgx/store_admin.go): the
        # source is gone at once or not at all, never half deleted. Attempt rows cascade;
        # the event ledger is left intact.
        with self.tx() as cur:
            jobs = cur.execute(q.nuke_jobs, args).rowcount
            stats = cur.execute(q.nuke_stats, args).rowcount
            keys = cur.execute(q.nuke_keys, args).rowcount
        return NukeReport(jobs=jobs, stats=stats, keys=keys)
