"""Fan-out of wake and change streams to many subscribers, each with a bounded buffer.

A backend's listener (PostgreSQL LISTEN, or SQLite's change-log reader) publishes into a
``Hub``; every ``wake()``/``changes()`` call gets a ``Subscription`` of its own. A slow
subscriber never blocks the listener, writers or the other subscribers: its buffer is
bounded, and on overflow it either drops (wakes) or is owed a reset (changes), azync's
rules. Subscriptions are iterators that any thread can consume and close.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Subscription(Generic[T]):
    """One subscriber's bounded buffer. Iterate to receive; ``close()`` ends iteration."""

    def __init__(
        self,
        maxsize: int,
        reset: Callable[[], T] | None = None,
        on_close: Callable[[Subscription[T]], None] | None = None,
    ) -> None:
        self._maxsize = maxsize
        self._reset = reset
        self._on_close = on_close
        self._items: deque[T] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._overflowed = False
        self.dropped = 0
        """How many items this subscriber lost to a full buffer."""

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def buffered(self) -> int:
        """How many items wait to be received (never more than the buffer size)."""
        with self._cond:
            return len(self._items)

    def offer(self, item: T) -> None:
        """Deliver without blocking. A full buffer drops the item; for a stream with a
        reset, the subscriber's next delivery is then preceded by a reset."""
        with self._cond:
            if self._closed:
                return
            if self._overflowed and self._reset is not None:
                if len(self._items) >= self._maxsize:
                    self.dropped += 1
                    return
                self._items.append(self._reset())
                self._overflowed = False
            if len(self._items) >= self._maxsize:
                self.dropped += 1
                self._overflowed = True
                return
            self._items.append(item)
            self._cond.notify()

    def get(self, timeout: float | None = None) -> T | None:
        """The next item, or None after ``timeout`` seconds or once closed and drained."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._items:
                if self._closed:
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return self._items.popleft()

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        item = self.get()
        if item is None:
            raise StopIteration
        return item

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._items.clear()
            self._cond.notify_all()
        if self._on_close is not None:
            self._on_close(self)

    def __enter__(self) -> Subscription[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Hub(Generic[T]):
    """The subscribers of one stream.

    With a ``reset`` factory the hub follows azync's change-stream rule: every
    subscription's first item is a reset, sent once the source is live (``set_live``),
    and a source that reconnects calls ``set_live`` again, which resets everyone.
    ``on_first`` lets a backend start its listener lazily, on the first subscription.
    """

    def __init__(
        self,
        maxsize: int,
        reset: Callable[[], T] | None = None,
        on_first: Callable[[], None] | None = None,
    ) -> None:
        self._maxsize = maxsize
        self._reset = reset
        self._on_first = on_first
        self._subs: list[Subscription[T]] = []
        self._lock = threading.Lock()
        self._live = False
        self._closed = False
        self._started = False

    def subscribe(self) -> Subscription[T]:
        sub: Subscription[T] = Subscription(self._maxsize, self._reset, self._remove)
        start = False
        with self._lock:
            if self._closed:
                sub.close()
                return sub
            self._subs.append(sub)
            if self._live and self._reset is not None:
                sub.offer(self._reset())
            if not self._started:
                self._started = start = True
        if start and self._on_first is not None:
            self._on_first()
        return sub

    def _remove(self, sub: Subscription[T]) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subs)

    def publish(self, item: T) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub.offer(item)

    def set_live(self, live: bool = True) -> None:
        """Mark the source (re)connected: every subscriber gets a reset."""
        with self._lock:
            self._live = live
            subs = list(self._subs) if live else []
        if self._reset is not None:
            for sub in subs:
                sub.offer(self._reset())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            subs = list(self._subs)
            self._subs.clear()
        for sub in subs:
            sub.close()
