"""Bulk work in batches, each in a transaction of its own, sized toward a time per
transaction: every system's bulk actions and maintenance run through ``sized_batches``."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TypeVar

from qctl_kit import errors

T = TypeVar("T")


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
