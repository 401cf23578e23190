"""The refresh driver: debounced hints, polling fallback, stream failure (no Textual)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from qctl.core.changes import RESET, Hint
from qctl.tui.live import LIVE, MAX_SPACING, POLLING, LiveFeed
from qctl_kit.streams import Hub, Subscription

JOBS = Hint("jobs", bulk=True)


def reset() -> Hint:
    return RESET


class HintStore:
    """Just ``changes()``: a hub the test publishes into, or None (poll-only); its hints
    cover every change unless ``partial``."""

    def __init__(self, push: bool = True, partial: bool = False) -> None:
        self.hub: Hub[Hint] = Hub(256, reset)
        self.hub.set_live()
        self.push = push
        self.partial = partial
        self.opened = 0

    def changes(self) -> Subscription[Hint] | None:
        self.opened += 1
        return self.hub.subscribe() if self.push else None


def feed_for(store: HintStore, **kw: float) -> tuple[LiveFeed, list[float], list[str]]:
    refreshes: list[float] = []
    modes: list[str] = []
    feed = LiveFeed(store, lambda: refreshes.append(time.monotonic()), modes.append, **kw)
    return feed, refreshes, modes


@contextmanager
def storm(store: HintStore, burst: int, pause: float) -> Iterator[None]:
    """Publish ``burst`` job hints every ``pause`` seconds from a thread, while the body runs."""
    stop = threading.Event()

    def publish() -> None:
        while not stop.is_set():
            for _ in range(burst):
                store.hub.publish(JOBS)
            time.sleep(pause)

    t = threading.Thread(target=publish)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def test_poll_only_backend_polls() -> None:
    store = HintStore(push=False)
    feed, refreshes, modes = feed_for(store, poll_interval=0.05)
    feed.start()
    time.sleep(0.4)
    feed.stop()
    assert modes == [POLLING]
    assert len(refreshes) >= 3


def test_hint_storm_is_debounced_to_the_cap() -> None:
    store = HintStore()
    feed, refreshes, modes = feed_for(store, min_interval=0.2, heartbeat=60)
    feed.start()
    with storm(store, 200, 0.001):
        time.sleep(1.2)
    time.sleep(0.3)
    feed.stop()
    assert modes == [LIVE]
    assert feed.hints > 1000
    # One refresh per 0.2 s at most, whatever the hint rate (plus the trailing one).
    assert 2 <= len(refreshes) <= 1.5 / 0.2 + 1
    gaps = [b - a for a, b in itertools.pairwise(refreshes)]
    assert all(g >= 0.19 for g in gaps)


def test_quiet_stream_refreshes_on_heartbeat_only() -> None:
    store = HintStore()
    feed, refreshes, _ = feed_for(store, min_interval=0.05, heartbeat=0.15)
    feed.start()
    time.sleep(0.5)
    feed.stop()
    # The opening reset plus heartbeats, nothing more.
    assert 2 <= len(refreshes) <= 5


def test_a_partial_feed_polls_behind_its_hints() -> None:
    """Where the system's notices miss some changes, the heartbeat is the poll."""
    feed, refreshes, modes = feed_for(HintStore(partial=True), poll_interval=0.05, heartbeat=60)
    feed.start()
    settle(lambda: len(refreshes) >= 4)
    feed.stop()
    assert modes == [LIVE]


def test_a_failed_stream_falls_back_to_polling_then_reopens() -> None:
    store = HintStore()
    feed, refreshes, modes = feed_for(store, poll_interval=0.05, reopen_after=0.2, heartbeat=60)
    feed.start()
    time.sleep(0.15)
    store.hub.close()  # the backend's listener died: every subscription ends
    store.hub = Hub(256, reset)
    store.hub.set_live()
    time.sleep(0.6)
    feed.stop()
    assert modes[:3] == [LIVE, POLLING, LIVE]
    assert store.opened >= 2
    assert refreshes


def test_changes_raising_is_treated_as_poll_only() -> None:
    class Broken:
        partial = False

        def changes(self) -> None:
            raise RuntimeError("connection refused")

    refreshes: list[float] = []
    modes: list[str] = []
    feed = LiveFeed(Broken(), lambda: refreshes.append(1.0), modes.append, poll_interval=0.05)
    feed.start()
    time.sleep(0.3)
    feed.stop()
    assert modes == [POLLING]
    assert refreshes


def settle(cond: Callable[[], bool]) -> None:
    """Wait for ``cond`` (the limit only keeps a failure from hanging the run)."""
    end = time.monotonic() + 30
    while not cond():
        assert time.monotonic() < end, "never happened"
        time.sleep(0.01)


def test_refreshes_are_spaced_by_their_own_cost() -> None:
    store = HintStore()
    feed, refreshes, _ = feed_for(store, min_interval=0.02, heartbeat=60)
    feed.start()
    time.sleep(0.1)
    t0 = time.monotonic()
    store.hub.publish(JOBS)
    # A cheap refresh follows the change (the heartbeat is a minute away).
    settle(lambda: any(r >= t0 for r in refreshes))
    feed.took(0.1)  # then refreshes that take 0.1 s start 0.3 s apart at least
    t1 = time.monotonic()
    with storm(store, 1, 0.002):
        settle(lambda: len([r for r in refreshes if r > t1]) >= 3)
    feed.stop()
    late = [r for r in refreshes if r > t1]
    gaps = [b - a for a, b in itertools.pairwise(late)]
    assert all(g >= 0.29 for g in gaps), gaps
    feed.took(2.0)  # a slow refresh holds the next one back no longer than MAX_SPACING
    assert feed.spacing == MAX_SPACING
