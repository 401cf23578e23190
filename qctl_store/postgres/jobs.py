"""Queue producer, leasing and lease-fenced settlement on PostgreSQL (notes 1.A, 2.6, 2.10).

Every settlement matches ``id``, ``state = 'active'`` and the lease token in one
statement; the attempt row and the daily stats bump are fused into that statement, so a
fencing miss writes nothing and surfaces as ``NotFound(op)``.
"""

from __future__ import annotations

import contextlib
import random
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
from psycopg import pq
from psycopg.rows import dict_row

from qctl_store import validate
from qctl_store.errors import InvalidInput, NotFound
from qctl_store.postgres.base import Cursor, PgBase, mapped_errors
from qctl_store.postgres.rows import job_from_row, job_queries
from qctl_store.types import DequeueParams, EnqueueParams, Job, Source

Q = job_queries("jobs.sql")


arg_id = validate.uuid_arg
"""psycopg binds ``uuid.UUID`` as it is: the argument only needs checking."""


def seconds(value: timedelta, what: str) -> float:
    """A validated non-negative duration as float seconds (for make_interval)."""
    return validate.duration(value, what).total_seconds()


def _lease(id: uuid.UUID, lease_token: uuid.UUID) -> dict[str, uuid.UUID]:
    return {"id": arg_id(id), "token": arg_id(lease_token, "lease_token")}


def stat_slot(store: PgBase) -> int:
    """The random stats shard a fused statement bumps (notes 2.5)."""
    return random.randrange(store.config.stats_slots)


@contextlib.contextmanager
def caller_tx(store: PgBase, conn: psycopg.Connection[Any]) -> Iterator[Cursor]:
    """A dict-row cursor on the caller's connection, inside its transaction, with the
    store's schema as search_path until the block ends; the caller's setting is then
    restored, so its session is left as it was."""
    store._check_writable()
    if conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE:
        raise InvalidInput("the connection must be inside a transaction (BEGIN first)")
    with mapped_errors(store.dsn), conn.cursor(row_factory=dict_row) as cur:
        if not store.schema:
            yield cur
            return
        cur.execute("SELECT current_setting('search_path') AS path")
        row = cur.fetchone()
        assert row is not None
        cur.execute("SELECT set_config('search_path', %s, true)", (store.schema,))
        try:
            yield cur
        finally:
            if conn.info.transaction_status == pq.TransactionStatus.INTRANS:
                cur.execute("SELECT set_config('search_path', %s, true)", (row["path"],))


class JobsMixin(PgBase):
    # --- producer -------------------------------------------------------------------

    def _enqueue_args(self, p: EnqueueParams) -> dict[str, Any]:
        """Validated statement arguments; raises before anything is written."""
        validate.kind(p.kind)
        return {
            "id": arg_id(p.id),
            "kind": p.kind,
            "payload": validate.json_text(p.payload),
            "meta": validate.json_text(validate.meta(p.meta), "meta"),
            "run_at": validate.instant(p.run_at, "run_at"),
            "delay": seconds(p.delay, "delay"),
            "max_attempts": validate.non_negative(p.max_attempts, "max_attempts"),
            "explicit": bool(p.max_attempts_explicit),
            "key": p.idempotency_key or None,
            "ttl": seconds(p.idempotency_ttl, "idempotency_ttl"),
        }

    def _enqueue_in(self, cur: Cursor, args: dict[str, Any]) -> bool:
        """Claim the TTL key (when one is asked for), insert, bump enqueued."""
        if args["key"] is not None and args["ttl"] > 0:
            cur.execute(Q.enqueue_claim, args)
            if cur.fetchone() is None:
                return False
        cur.execute(Q.enqueue_insert, args)
        if cur.fetchone() is None:
            return False
        self.bump_stat(cur, Source.QUEUE, args["kind"], "enqueued")
        return True

    def enqueue(self, p: EnqueueParams) -> bool:
        args = self._enqueue_args(p)
        with self.tx() as cur:
            inserted = self._enqueue_in(cur, args)
        if inserted:
            self.notify_after_commit(Source.QUEUE, [p.kind])
        return inserted

    def enqueue_tx(self, tx: psycopg.Connection[Any], p: EnqueueParams) -> bool:
        """Enqueue inside the caller's open transaction (transactional outbox): the
        wake NOTIFY is part of that transaction and is delivered only on commit."""
        args = self._enqueue_args(p)
        with caller_tx(self, tx) as cur:
            inserted = self._enqueue_in(cur, args)
            if inserted:
                self.notify_in_tx(cur, Source.QUEUE, [p.kind])
        return inserted

    # --- leasing --------------------------------------------------------------------

    def dequeue_batch(self, source: Source, p: DequeueParams) -> list[Job]:
        source = validate.source(source)
        validate.kind(p.kind)
        limit = validate.limit(p.limit)
        if limit <= 0:
            return []
        args = {
            "source": source.value,
            "kind": p.kind,
            "limit": limit,
            "lease": seconds(p.lease, "lease"),
            "override": bool(p.override_default),
            "default_max": validate.non_negative(p.default_max_attempts, "default_max_attempts"),
        }
        with self.tx() as cur:
            cur.execute(Q.dequeue, args)
            rows = cur.fetchall()
        # RETURNING has no ORDER BY: restore the claim order (run_at, id).
        jobs = [job_from_row(r) for r in rows]
        jobs.sort(key=lambda j: (j.run_at, j.id.bytes))
        return jobs

    # --- settlement -----------------------------------------------------------------

    def _fenced(self, op: str, sql: str, **args: Any) -> dict[str, Any]:
        """Run one fenced statement that RETURNs a row; none means NotFound(op)."""
        with self.tx() as cur:
            cur.execute(sql, {"slot": stat_slot(self), **args})
            row = cur.fetchone()
        if row is None:
            raise NotFound(op)
        return row

    def _fenced_count(self, op: str, sql: str, **args: Any) -> None:
        with self.tx() as cur:
            cur.execute(sql, args)
            if cur.rowcount == 0:
                raise NotFound(op)

    def ack(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        self._fenced("ack", Q.finish, **_lease(id, lease_token), state="succeeded", error=None)

    def reschedule(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, last_error: str
    ) -> None:
        self._fenced(
            "reschedule",
            Q.fail,
            **_lease(id, lease_token),
            state="scheduled",
            delay=seconds(delay, "delay"),
            error=str(last_error),
        )

    def dead(self, id: uuid.UUID, lease_token: uuid.UUID, last_error: str) -> None:
        self._fenced(
            "dead",
            Q.fail,
            **_lease(id, lease_token),
            state="dead",
            delay=None,
            error=str(last_error),
        )

    def skip(self, id: uuid.UUID, lease_token: uuid.UUID, reason: str) -> None:
        self._fenced(
            "skip", Q.finish, **_lease(id, lease_token), state="skipped", error=str(reason)
        )

    def release(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        self._fenced_count("release", Q.release, **_lease(id, lease_token))

    def snooze(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, deadline_error: str
    ) -> bool:
        row = self._fenced(
            "snooze",
            Q.snooze,
            **_lease(id, lease_token),
            delay=seconds(delay, "delay"),
            error=str(deadline_error),
        )
        return bool(row["deadlined"])

    def extend_lease(self, id: uuid.UUID, lease_token: uuid.UUID, lease: timedelta) -> None:
        self._fenced_count(
            "extend lease",
            Q.extend_lease,
            **_lease(id, lease_token),
            lease=seconds(lease, "lease"),
        )
