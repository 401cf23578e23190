"""Leader election on SQLite: one lease row per name in ``qctl_leases``.

SQLite has no session-scoped advisory locks, so leadership is a row with a holder and an
expiry. ``acquire_leadership_lease`` takes the row when it is free or expired; the lease
then renews itself from a daemon thread every ttl/3. A holder that dies stops renewing,
and another process takes over once the row expired. Like azync's PostgreSQL lease, a
lease uses its own connection (and so outlives ``close()`` of the store that made it).
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta

from qctl_kit import errors
from qctl_store import contract, validate
from qctl_store.sqlite.base import SqliteBase, now_us, queries, td_us

Q = queries("leader.sql")

LEASE_TTL = timedelta(seconds=15)


class SqliteLease(contract.LeadershipLease):
    """A held leadership lease; ``valid()`` turns false for good once a renewal failed,
    the row was taken over, or ``release()`` ran."""

    def __init__(self, db: SqliteBase, name: str, holder: str, ttl: timedelta) -> None:
        self._db = db
        self._name = name
        self._holder = holder
        self._ttl_us = td_us(ttl)
        self._lost = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._released = False
        self._thread = threading.Thread(
            target=self._renew_loop, name=f"qctl-lease-{name}", daemon=True
        )
        self._thread.start()

    def _params(self, now: int) -> dict[str, object]:
        return {
            "name": self._name,
            "holder": self._holder,
            "now": now,
            "expires_at": now + self._ttl_us,
        }

    def _renew_loop(self) -> None:
        interval = self._ttl_us / 3 / 1_000_000
        while not self._stop.wait(interval):
            try:
                with self._db.tx() as t:
                    renewed = t.execute(Q.renew, self._params(t.now)).rowcount == 1
            except Exception as exc:
                self._db.config.logger.warning(
                    "leadership lease %s: renewal failed: %s", self._name, exc
                )
                renewed = False
            if not renewed:
                self._lost.set()
                return

    def valid(self) -> bool:
        if self._lost.is_set() or self._stop.is_set():
            return False
        try:
            with self._db.read() as t:
                held = t.one(Q.holds, self._params(now_us())) is not None
        except errors.StoreError:
            held = False
        if not held:
            self._lost.set()
        return held

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        with contextlib.suppress(errors.StoreError), self._db.tx() as t:
            t.execute(Q.release, {"name": self._name, "holder": self._holder})
        self._db.close()


class LeaderMixin(SqliteBase):
    lease_ttl: timedelta = LEASE_TTL
    """How long a lease row stays valid without renewal (renewed every third of it)."""

    def acquire_leadership_lease(self, name: str) -> tuple[contract.LeadershipLease | None, bool]:
        validate.kind(name, "leadership name")
        db = SqliteBase(self.path, self.config)  # the lease's own connection
        holder = str(uuid.uuid4())
        try:
            with db.tx() as t:
                row = t.one(
                    Q.acquire,
                    {
                        "name": name,
                        "holder": holder,
                        "now": t.now,
                        "expires_at": t.now + td_us(self.lease_ttl),
                    },
                )
        except BaseException:
            db.close()
            raise
        if row is None:
            db.close()
            return None, False
        return SqliteLease(db, name, holder, self.lease_ttl), True

    def acquire_leadership(self, name: str) -> tuple[Callable[[], None], bool]:
        lease, acquired = self.acquire_leadership_lease(name)
        if lease is None:
            return (lambda: None), acquired
        return lease.release, acquired
