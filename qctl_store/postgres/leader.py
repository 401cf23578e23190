"""Leader election with session advisory locks, as azync's ``leader.go`` does.

A lease is a ``pg_try_advisory_lock`` held by a dedicated connection (never a pooled
one): the lock lives exactly as long as that session, so ``valid()`` only has to ping
the connection. The key is FNV-1a-64 of ``azync:<name>:<schema>`` read as a signed
64-bit integer, so Go and Python instances contend for the same locks. ``close()`` of the
store does not release leases; they own their connections.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg

from qctl_kit.postgres.connect import Connection
from qctl_store import contract
from qctl_store.postgres.base import PgBase, azync_errors, queries

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3
_U64 = (1 << 64) - 1

# Bound unlock/ping on a dead network the way azync's 1 s unlock timeout does: unacked
# writes fail after a second, and keepalives notice a silent peer.
_LEASE_CONNECTION = {
    "tcp_user_timeout": 1000,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 1,
    "keepalives_count": 3,
}


def fnv1a64(data: bytes) -> int:
    h = _FNV64_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV64_PRIME) & _U64
    return h


def advisory_lock_key(name: str, schema: str) -> int:
    """azync's leadership lock key: FNV-1a-64 of ``azync:<name>:<schema>``, wrapped to a
    signed int64 (``schema`` is the configured one, ``""`` when none)."""
    h = fnv1a64(f"azync:{name}:{schema}".encode())
    return h - (1 << 64) if h >= 1 << 63 else h


class PgLeadershipLease(contract.LeadershipLease):
    def __init__(self, conn: Connection, key: int) -> None:
        self._conn = conn
        self.key = key
        self._lock = threading.Lock()
        self._released = False

    def valid(self) -> bool:
        """True while the session holding the lock is alive."""
        with self._lock:
            if self._released or self._conn.closed or self._conn.broken:
                return False
            try:
                self._conn.execute(queries("leader.sql").ping)
            except psycopg.Error:
                return False
            return True

    def release(self) -> None:
        """Unlock and close; idempotent, never raises."""
        with self._lock:
            if self._released:
                return
            self._released = True
            try:
                if not (self._conn.closed or self._conn.broken):
                    self._conn.execute(queries("leader.sql").unlock, {"key": self.key})
            except psycopg.Error:
                pass  # a dead session has already dropped its lock
            finally:
                self._conn.close()


class LeaderMixin(PgBase):
    def acquire_leadership_lease(self, name: str) -> tuple[contract.LeadershipLease | None, bool]:
        key = advisory_lock_key(name, self.schema)
        conn = self.connect(**_LEASE_CONNECTION)
        try:
            with azync_errors(self.dsn, self.config):
                row = conn.execute(queries("leader.sql").try_lock, {"key": key}).fetchone()
        except BaseException:
            conn.close()
            raise
        if not row or not row["acquired"]:
            conn.close()
            return None, False
        return PgLeadershipLease(conn, key), True

    def acquire_leadership(self, name: str) -> tuple[Callable[[], None], bool]:
        lease, acquired = self.acquire_leadership_lease(name)
        if lease is None or not acquired:
            return _no_op, False
        return lease.release, True


def _no_op() -> None:
    pass
