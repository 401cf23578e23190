"""The batching loop of both backends' bulk maintenance and admin actions, and the
batched verbs that run the same statements on both."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from qctl_store import errors, validate
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


class BatchSize:
    """How many rows the next batch of bulk work takes, sized from the last full batch's
    transaction time, commit included, toward ``target`` seconds (as
    pt-online-schema-change's ``--chunk-time`` does): on a disk that flushes slowly, the
    WAL of a thousand rows rewritten all over a big table made single commits take
    seconds. The first batch, whose time nothing predicts, takes a tenth of ``most``;
    each next one shrinks in proportion to how far over the target its predecessor ran,
    or grows at most twofold after one under it, between a hundredth of ``most`` and
    ``most``."""

    def __init__(self, most: int, target: float) -> None:
        self.most = most
        self.least = max(1, most // 100)
        self.target = target
        self.rows = max(self.least, most // 10)

    def took(self, seconds: float) -> None:
        """A batch of ``rows`` rows took ``seconds``, from its start to its commit."""
        fitted = round(self.rows * self.target / max(seconds, 1e-6))
        self.rows = max(self.least, min(self.most, 2 * self.rows, fitted))


@dataclass
class SizedRun:
    """What ``sized_batches`` did."""

    rows: int = 0
    batches: int = 0
    """Batches that took at least one row."""
    slowest: float = 0.0
    """The longest batch's seconds, from its start to its commit."""


def sized_batches(
    size: BatchSize,
    tx: Callable[[], AbstractContextManager[T]],
    step: Callable[[T, int], int],
    clock: Callable[[], float] = time.monotonic,
    rest: Callable[[float], None] | None = None,
) -> SizedRun:
    """``step(t, rows)`` in a transaction of its own (``with tx() as t``), ``rows`` from
    ``size``, until a batch comes back short; ``step`` returns how many rows its batch
    took. Only a full batch's time sizes the next one. ``rest(seconds)``, given the
    batch's time, runs between batches, outside any transaction (and outside the time
    that sizes batches)."""
    run = SizedRun()
    while True:
        rows = size.rows
        started = clock()
        try:
            with tx() as t:
                n = step(t, rows)
        except BaseException as exc:  # the batches committed before stay: say how many
            errors.add_done(exc, run.rows, run.batches)
            raise
        took = clock() - started
        run.rows += n
        run.batches += 1 if n else 0
        run.slowest = max(run.slowest, took)
        if n < rows:
            return run
        size.took(took)
        if rest is not None:
            rest(took)


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
