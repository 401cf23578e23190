"""The dashboard's refresh driver (no Textual): change hints, debounced, or polling.

A ``LiveFeed`` runs in one daemon thread. With a change stream it calls ``on_refresh``
when hints arrive: at once when the last refresh is long enough ago, else when it is (a
storm of hints costs one refresh per interval), plus a slow heartbeat so ages keep moving.
The interval is ``SPACING`` times what the last refresh took (``took``), never less than
``min_interval`` and never more than ``MAX_SPACING``: a cheap refresh follows a change
within milliseconds, and a slower one keeps the database busy a third of the time at
most until the interval reaches its cap. The hints are
neutral (``qctl.core.changes``), whatever system sends them. When the backend is
poll-only (``changes()`` None: SQLite for most systems), or the stream fails or closes,
it polls every ``poll_interval`` and tries to reopen the stream now and then; without a
feed (``store`` None) it polls from the start. ``on_mode`` reports ``live`` or
``polling``; connection errors are the refresh's business (the app shows
``disconnected``). Where hints cover only some changes (``partial``: every system but
azync), the heartbeat is the poll: live for what is hinted, polled for the rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from qctl.core.changes import ChangeFeed, Hints

LIVE = "live"
POLLING = "polling"
DISCONNECTED = "disconnected"
LOCKED = "waiting for a lock"
"""A load waits behind another session's lock (the database answers)."""
PAUSED = "paused"
MANUAL = "manual"
"""No live feed: refreshes only on request (tests, ``r``)."""
SPACING = 3.0
"""Refreshes start at least this many times their own duration apart..."""
MAX_SPACING = 0.3
"""...but at most this many seconds: a change never waits longer behind the refresh
before it (a slow refresh on a busy server would otherwise hold the next one back)."""


class LiveFeed:
    def __init__(
        self,
        store: ChangeFeed | None,
        on_refresh: Callable[[], None],
        on_mode: Callable[[str], None],
        *,
        min_interval: float = 0.3,
        poll_interval: float = 2.0,
        heartbeat: float = 5.0,
        reopen_after: float = 10.0,
    ) -> None:
        self.store = store
        self.on_refresh = on_refresh
        self.on_mode = on_mode
        self.min_interval = min_interval
        self.spacing = min_interval
        """The least time between two refreshes, from the last one's cost."""
        self.poll_interval = poll_interval
        self.partial = store is not None and store.partial
        # A partial feed's hints miss some changes: its heartbeat is the poll.
        self.heartbeat = poll_interval if self.partial else heartbeat
        self.reopen_after = reopen_after
        self.mode = ""
        self.hints = 0
        self.refreshes = 0
        self._stop = threading.Event()
        self._sub: Hints | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="qctl-live", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            sub = self._sub
        if sub is not None:
            sub.close()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2)

    def took(self, seconds: float) -> None:
        """The last refresh took ``seconds`` to load and show (any thread)."""
        self.spacing = max(self.min_interval, min(MAX_SPACING, SPACING * seconds))

    def _set_mode(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            self.on_mode(mode)

    def _refresh(self) -> None:
        self.refreshes += 1
        self.on_refresh()

    def _open(self) -> Hints | None:
        if self.store is None:
            return None
        try:
            sub = self.store.changes()  # None: poll-only
        except Exception:  # unavailable now: poll, and try again later
            return None
        with self._lock:
            self._sub = sub
        if self._stop.is_set() and sub is not None:
            sub.close()
            return None
        return sub

    def _run(self) -> None:
        while not self._stop.is_set():
            sub = self._open()
            if sub is not None:
                self._set_mode(LIVE)
                self._follow(sub)
                sub.close()
                with self._lock:
                    self._sub = None
            if not self._stop.is_set():
                # Poll-only, or the stream failed: poll a while before trying again.
                self._set_mode(POLLING)
                self._poll(self.reopen_after)

    def _poll(self, span: float) -> None:
        end = time.monotonic() + span
        while not self._stop.wait(self.poll_interval):
            self._refresh()
            if time.monotonic() >= end:
                return

    def _follow(self, sub: Hints) -> None:
        """Debounce hints until the stream ends (closed by the backend or by stop)."""
        dirty = False
        last = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if dirty:
                wait = max(0.0, last + self.spacing - now)
            else:
                wait = max(0.0, last + self.heartbeat - now)
            item = sub.get(timeout=wait) if wait > 0 else None
            if item is not None:
                self.hints += 1
                dirty = True
                continue
            if sub.closed:
                return
            now = time.monotonic()
            if (dirty and now - last >= self.spacing) or now - last >= self.heartbeat:
                dirty = False
                last = now
                self._refresh()
