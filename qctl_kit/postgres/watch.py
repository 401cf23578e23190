"""Watching a store's own sessions from beside them, on a thread of its own: who holds
the lock a statement has waited on for a while (``Session.on_lock_wait``), and a server
that stopped answering (``Session.unanswered_after``: a paused server, a dead peer the
kernel has not noticed yet).

A paused server never cancels a statement at its ``statement_timeout``, and a cancel
request goes through the postmaster, which is paused too: the only way out is the
client's. So a statement that has had no answer for ``unanswered_after`` has its socket
shut down; the thread waiting on it then fails at once, and the store reports
``errors.NoAnswer`` for it (the backend, if it ever wakes, finds its client gone)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg

TICK = 0.25
"""How often the thread looks at the sessions (a few attribute reads, no round trip)."""
LOCK_WAIT_AFTER = 1.0
"""How long a statement runs before the thread asks the server what it waits for (half
the session's ``lock_timeout`` when that is shorter, so that a statement the limit
cancels still names who held it)."""

# The sessions that block one of ours (pg_blocking_pids: lock holders and the sessions
# queued ahead for the same lock), with what an operator needs to find them.
_BLOCKERS = """
SELECT w.pid AS waiter, b.pid, b.usename AS "user", b.application_name AS application,
       host(b.client_addr) AS client, b.state,
       extract(epoch FROM now() - coalesce(b.xact_start, b.query_start))::int AS seconds,
       left(b.query, 200) AS query
FROM pg_stat_activity w
CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS h(pid)
JOIN pg_stat_activity b ON b.pid = h.pid
WHERE w.pid = ANY(%s)
ORDER BY b.pid
"""


@dataclass(frozen=True)
class Blocker:
    """A session another one of the store's waits behind; text as the server reports
    it (not sanitised: the caller shows it)."""

    waiter: int
    pid: int
    user: str | None
    application: str | None
    client: str | None
    state: str | None
    seconds: int | None
    query: str | None

    def line(self) -> str:
        """``waiting for a lock held by pid N (user, application, client, state for Ns:
        its query)``, the query's whitespace folded and cut at 80 characters."""
        about = [
            f"user {self.user}" if self.user else "",
            f"application {self.application!r}" if self.application else "",
            f"from {self.client}" if self.client else "",
            f"{self.state} for {self.seconds}s"
            if self.state and self.seconds is not None
            else self.state or "",
        ]
        query = " ".join((self.query or "").split())
        query = query if len(query) <= 80 else query[:79] + "…"
        detail = ", ".join(a for a in about if a) + (f": {query}" if query else "")
        return f"waiting for a lock held by pid {self.pid} ({detail})"


class WatchedConnection(psycopg.Connection[Any]):
    """A connection that knows since when a statement of it waits for the server
    (every round trip goes through ``wait``; connecting does not). A wait with a
    ``timeout`` of its own is bounded already and no statement: psycopg's
    ``notifies()`` waits so for notifications on an idle session."""

    waiting_since: float | None = None

    def wait(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("timeout") is not None:
            return super().wait(*args, **kwargs)
        self.waiting_since = time.monotonic()
        try:
            return super().wait(*args, **kwargs)
        finally:
            self.waiting_since = None


def side_connection(dsn: str, application_name: str) -> psycopg.Connection[Any]:
    """The connection a watch asks the server on: short limits of its own, never the
    watched sessions' (read-only or timeouts)."""
    return psycopg.connect(
        dsn,
        autocommit=True,
        application_name=f"{application_name}-watch",
        options="-c statement_timeout=2000",
        connect_timeout=2,
    )


class SessionWatch:
    """A store's connections, and the thread that watches them when asked to (a
    callback, ``unanswered_after`` or ``lock_timeout`` given). ``connect`` opens the side
    connection it asks the server on (lazily, once a statement has run
    ``LOCK_WAIT_AFTER``); ``on_lock_wait`` is called once per blocker of each waiting
    statement; ``unanswered_after``: seconds, or None; ``lock_timeout``: the session's,
    in seconds (None or 0: none), after which a waiting statement fails naming the last
    blocker seen (``answered``)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        on_lock_wait: Callable[[Blocker], None] | None,
        unanswered_after: float | None,
        lock_timeout: float | None = None,
    ) -> None:
        self._connect = connect
        self._on_lock_wait = on_lock_wait
        self._unanswered_after = unanswered_after
        self._ask_after = (
            min(LOCK_WAIT_AFTER, lock_timeout / 2) if lock_timeout else LOCK_WAIT_AFTER
        )
        self._holders: dict[int, tuple[float, Blocker]] = {}
        """The last blocker seen of each waiting backend, with since when it waited."""
        self._sessions: weakref.WeakSet[WatchedConnection] = weakref.WeakSet()
        self.abandoned: weakref.WeakSet[WatchedConnection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._side: psycopg.Connection[Any] | None = None
        self._thread: threading.Thread | None = None
        if on_lock_wait is not None or unanswered_after is not None or lock_timeout:
            self._thread = threading.Thread(
                target=self._run, name="qctl-session-watch", daemon=True
            )
            self._thread.start()

    def add(self, conn: psycopg.Connection[Any]) -> None:
        """Watch ``conn``, a ``WatchedConnection`` (every connection the store opens)."""
        if isinstance(conn, WatchedConnection):
            with self._lock:
                self._sessions.add(conn)

    def interrupt(self) -> None:
        """Cancel every statement in flight on the server (a cancel request each) and
        give up the connections still waiting a second later (a server that cannot
        answer the cancel either): the threads waiting on them fail at once."""
        with self._lock:
            busy = [c for c in self._sessions if c.waiting_since is not None]
        for conn in busy:
            with contextlib.suppress(Exception):
                conn.cancel_safe(timeout=0.5)
        deadline = time.monotonic() + 1.0
        while busy and time.monotonic() < deadline:
            time.sleep(0.02)
            busy = [c for c in busy if c.waiting_since is not None]
        for conn in busy:
            self._abandon(conn)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._side is not None:
            with contextlib.suppress(Exception):
                self._side.close()

    @contextlib.contextmanager
    def answered(self, conn: WatchedConnection) -> Iterator[None]:
        """Around a use of ``conn``: a failure because this watch shut its socket is
        ``errors.NoAnswer``; a lock wait the session's ``lock_timeout`` ended carries the
        last blocker seen (``qctl_holder``, which ``connect.timeout_error`` names)."""
        from psycopg import errors as pgerr

        from qctl_kit import errors

        pid = conn.info.backend_pid if not conn.closed else 0
        started = time.monotonic()
        try:
            yield
        except psycopg.Error as exc:
            if conn in self.abandoned and self._unanswered_after is not None:
                raise errors.NoAnswer(self._unanswered_after) from None
            seen = self._holders.pop(pid, None)
            if seen is not None and seen[0] >= started and isinstance(exc, pgerr.LockNotAvailable):
                exc.qctl_holder = seen[1]  # type: ignore[attr-defined]
            raise
        finally:
            self._holders.pop(pid, None)

    def _run(self) -> None:
        told: set[tuple[int, float, int]] = set()  # (waiter, since, blocker) reported
        while not self._stop.wait(TICK):
            now = time.monotonic()
            with self._lock:
                busy = [(c, c.waiting_since) for c in self._sessions]
            waiting: dict[int, float] = {}  # backend pid -> since when it waits
            for conn, started in busy:
                if started is None or conn.closed:
                    continue
                if self._unanswered_after is not None and now - started >= self._unanswered_after:
                    self._abandon(conn)
                elif now - started >= self._ask_after:
                    waiting[conn.info.backend_pid] = started
            if waiting:
                for blocker in self._blockers(list(waiting)):
                    since = waiting.get(blocker.waiter, 0.0)
                    self._holders[blocker.waiter] = (since, blocker)
                    key = (blocker.waiter, since, blocker.pid)
                    if key not in told and self._on_lock_wait is not None:
                        told.add(key)
                        self._on_lock_wait(blocker)

    def _blockers(self, pids: list[int]) -> list[Blocker]:
        """Who blocks the backends ``pids``, asked on the side connection; nothing when
        the server cannot be asked (the statement's own limits still apply)."""
        try:
            if self._side is None or self._side.closed or self._side.broken:
                self._side = self._connect()
            rows = self._side.execute(_BLOCKERS, (pids,)).fetchall()
        except Exception:
            return []
        return [Blocker(*row) for row in rows]

    def _abandon(self, conn: WatchedConnection) -> None:
        """Shut ``conn``'s socket down (a duplicate of its descriptor: libpq keeps and
        closes its own), which wakes the thread waiting on it with an error."""
        if conn in self.abandoned:
            return
        self.abandoned.add(conn)
        try:
            sock = socket.socket(fileno=_dup(conn))
        except (OSError, psycopg.Error):
            return
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()


def _dup(conn: WatchedConnection) -> int:
    import os

    return os.dup(conn.pgconn.socket)
