"""``batched_tx``'s batch sizing, on a fake store and clock: the rows each batch is
asked for, given how long the one before it took; and what ``sized_batches`` reports."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from qctl_kit.batches import BatchSize, sized_batches
from qctl_kit.config import MAINTENANCE_BATCH, MAINTENANCE_BATCH_SECONDS
from qctl_store.batches import batched_tx
from qctl_store.config import Config


class Clocked:
    """A store whose transactions each take ``seconds_per_row`` per row asked for (the
    next value of ``stalls`` added, when given), over ``rows`` rows in all."""

    def __init__(self, rows: int, seconds_per_row: float, stalls: list[float] | None = None):
        self.config = Config(maintenance_batch=1000)
        self.left = rows
        self.per_row = seconds_per_row
        self.stalls = stalls or []
        self.now = 0.0
        self.asked: list[int] = []
        self.open = False

    def clock(self) -> float:
        return self.now

    @contextlib.contextmanager
    def tx(self) -> Iterator[None]:
        assert not self.open, "one transaction at a time"
        self.open = True
        yield
        self.open = False
        if self.stalls:
            self.now += self.stalls.pop(0)  # at commit, as a slow WAL flush

    def bump_kinds(self, cur: object, source: str, kinds: object, column: str) -> None:
        raise AssertionError("not used")

    def step(self, _tx: None, batch: int) -> int:
        assert self.open
        self.asked.append(batch)
        n = min(batch, self.left)
        self.left -= n
        self.now += batch * self.per_row
        return n


def run(store: Clocked) -> int:
    return batched_tx(store, store.step, store.clock)


def test_fast_batches_grow_from_a_tenth_to_the_configured_size_and_take_every_row() -> None:
    store = Clocked(rows=5500, seconds_per_row=0.00001)  # 10 ms a batch of 1,000
    assert run(store) == 5500
    assert store.asked == [100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000]


def test_slow_batches_shrink_toward_the_target_time() -> None:
    store = Clocked(rows=10_000, seconds_per_row=0.001)  # 1 s a batch of 1,000
    assert run(store) == 10_000
    assert store.asked[:4] == [100, 200, 250, 250]
    assert all(n * 0.001 <= MAINTENANCE_BATCH_SECONDS for n in store.asked)


def test_a_stall_at_commit_shrinks_the_next_batch_and_the_size_recovers() -> None:
    store = Clocked(rows=20_000, seconds_per_row=0.00001, stalls=[0, 0, 0, 0, 0, 2.0])
    assert run(store) == 20_000
    # The sixth batch's commit stalled 2 s: the seventh is cut to an eighth, then each
    # fast batch doubles back up to the maximum.
    assert store.asked[4:11] == [1000, 1000, 124, 248, 496, 992, 1000]


def test_the_size_never_falls_below_a_hundredth_of_the_maximum() -> None:
    store = Clocked(rows=3000, seconds_per_row=0.1)  # 100 s a batch of 1,000
    assert run(store) == 3000
    assert min(store.asked) == 10


def test_the_last_short_batch_ends_the_loop_whatever_its_size() -> None:
    store = Clocked(rows=0, seconds_per_row=1.0)
    assert run(store) == 0
    assert store.asked == [100]


def test_a_sized_run_counts_the_batches_that_took_rows_and_the_slowest() -> None:
    store = Clocked(rows=1000, seconds_per_row=0.00001, stalls=[0, 0.5])
    run = sized_batches(BatchSize(1000, 0.25), store.tx, store.step, store.clock)
    # The second batch's commit stalled: the third is halved, then they double again
    # until one comes back empty, which ends the run uncounted.
    assert store.asked == [100, 200, 100, 200, 400, 800]
    assert (run.rows, run.batches) == (1000, 5)
    assert run.slowest == pytest.approx(0.502)


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_a_target_that_is_not_positive_means_the_default(seconds: float) -> None:
    config = Config(maintenance_batch=0, maintenance_batch_seconds=seconds)
    assert config.maintenance_batch == MAINTENANCE_BATCH
    assert config.maintenance_batch_seconds == MAINTENANCE_BATCH_SECONDS
