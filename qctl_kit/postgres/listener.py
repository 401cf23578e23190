"""A reconnecting LISTEN loop on one dedicated PostgreSQL connection.

Used by azync's store for its wake and ``azync_changes`` hint channels
(``qctl_store/postgres/wake.py``, ``changes.py``) and by ``SqlDatabase.changes`` for the
other systems' channels; it knows nothing about payload formats. API::

    listener = Listener(
        connect=store.connect,          # () -> psycopg.Connection, autocommit, outside the pool
        channel="azync_changes",        # LISTEN "<channel>" (quoted identifier)
        on_notify=handle_payload,       # (payload: str) -> None, once per notification
        on_live=announce_reset,         # () -> None, after EVERY successful LISTEN
        on_down=mark_not_live,          # () -> None, when an established LISTEN is lost
        logger=store.config.logger,
        name="qctl-pg-changes",         # the thread's name (default qctl-listen-<channel>)
    )
    listener.start()    # idempotent; starts the daemon thread (call it lazily)
    listener.live       # True while LISTEN is established
    listener.close()    # idempotent; stops the thread within about POLL_INTERVAL

Behaviour (azync's ``listener.go``): the loop connects, runs LISTEN, calls ``on_live``
(the first connect and every reconnect, since notifications sent while disconnected are
lost), then hands each payload to ``on_notify`` until the connection fails. It then
reconnects after a backoff that starts at 500 ms and doubles up to 30 s, reset by the
next successful LISTEN. Callbacks run on the listener thread and must not block for
long; an exception from a callback is logged and the loop continues. Waiting uses
``Connection.notifies(timeout=...)`` in short slices so ``close()`` is noticed promptly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from qctl_kit.dsn import redact
from qctl_kit.sqlfile import identifier

BACKOFF_MIN = 0.5
BACKOFF_MAX = 30.0
POLL_INTERVAL = 0.2
"""How long one ``notifies()`` slice waits; bounds how late ``close()`` is noticed."""


class Listener:
    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        channel: str,
        on_notify: Callable[[str], None],
        on_live: Callable[[], None] | None = None,
        on_down: Callable[[], None] | None = None,
        logger: logging.Logger | None = None,
        name: str = "",
    ) -> None:
        self.channel = channel
        self.name = name or f"qctl-listen-{channel}"
        self._connect = connect
        self._on_notify = on_notify
        self._on_live = on_live
        self._on_down = on_down
        self._logger = logger or logging.getLogger("qctl_kit")
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._live = False
        self._backoff = BACKOFF_MIN

    @property
    def live(self) -> bool:
        return self._live

    @property
    def closed(self) -> bool:
        return self._stop.is_set()

    def start(self) -> None:
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # --- the loop -------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen_once()
            except Exception as exc:
                if self._stop.is_set():
                    break
                # libpq's messages span lines ("server closed the connection
                # unexpectedly\n\tThis probably means ..."): one log line each.
                self._logger.warning(
                    "LISTEN %s connection lost, reconnecting in %.1fs: %s",
                    self.channel,
                    self._backoff,
                    " ".join(redact(str(exc)).split()) or type(exc).__name__,
                )
            finally:
                if self._live:
                    self._live = False
                    if self._on_down is not None:
                        self._call(self._on_down)
            if self._stop.wait(self._backoff):
                break
            self._backoff = min(self._backoff * 2, BACKOFF_MAX)

    def _listen_once(self) -> None:
        """One connection's life: returns once asked to stop, raises when the
        connection fails."""
        conn = self._connect()
        try:
            conn.execute(f"LISTEN {identifier(self.channel)}")
            self._backoff = BACKOFF_MIN
            self._live = True
            if self._on_live is not None:
                self._call(self._on_live)
            while not self._stop.is_set():
                for notify in conn.notifies(timeout=POLL_INTERVAL):
                    self._call(self._on_notify, notify.payload)
                    if self._stop.is_set():
                        break
        finally:
            conn.close()

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            self._logger.exception("LISTEN %s callback failed", self.channel)
