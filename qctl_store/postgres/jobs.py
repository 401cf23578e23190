"""Queue producer, leasing and lease-fenced settlement on PostgreSQL (azync's
``driver/azyncpgx/store_jobs.go``).

Every settlement matches ``id``, ``state = 'active'`` and the lease token in one
statement; the attempt row and the daily stats bump are fused into that statement, so a
fencing miss writes nothing and surfaces as ``NotFound(op)``.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import uuid
from datetime import timedelta
from typing import Any, NamedTuple

import psycopg

from qctl_kit.errors import InvalidInput, NotFound
from qctl_kit.postgres.connect import Cursor
from qctl_kit.sqlfile import fill
from qctl_store import validate
from qctl_store.contract import distinct_job_ids, settled_in_order
from qctl_store.postgres.base import PgBase, queries, seconds
from qctl_store.postgres.rows import DIALECT, arg_id, caller_cursor, fetch_jobs
from qctl_store.types import DequeueParams, EnqueueParams, Job, Source
from qctl_store.writes import enqueue_fields

Q = queries("jobs.sql")


def _lease(id: uuid.UUID, lease_token: uuid.UUID) -> dict[str, uuid.UUID]:
    return {"id": arg_id(id), "token": arg_id(lease_token, "lease_token")}


_JSON_FIELDS = dataclasses.replace(
    DIALECT,
    arg_id=lambda value, what: arg_id(value, what).hex,
    instant=lambda value: None if value is None else value.isoformat(),
)
"""``DIALECT`` for the fields of ``Q.enqueue``'s input: ids and instants as text
(an id as its 32 hex digits, which PostgreSQL's uuid input takes, at a third of
``str``'s cost)."""


_COLUMNS = (
    "id",
    "kind",
    "payload",
    "meta",
    "run_at",
    "delay",
    "max_attempts",
    "explicit",
    "key",
    "ttl",
)
"""The arrays of ``Q.enqueue_input_document``, one element per job sent."""
_ROW = operator.itemgetter(*_COLUMNS)


class _Batch(NamedTuple):
    """A batch of ``enqueue_many``, validated: its ids in input order, those left out
    (each deduplicated by an earlier job's TTL claim), the statement and its arguments."""

    ids: list[uuid.UUID]
    left_out: set[uuid.UUID]
    sql: str
    args: dict[str, Any]


def _as_value(value: Any, what: str) -> Any:
    """A payload or meta left as it is, to be encoded with the rest of the document."""
    return value


def _fields(p: EnqueueParams) -> dict[str, Any]:
    """One job's columns of ``Q.enqueue``'s input, checked; payload and meta not yet
    encoded, the delay and the TTL as float seconds."""
    job = enqueue_fields(_JSON_FIELDS, p, _as_value)
    job["delay"] = p.delay.total_seconds()
    job["ttl"] = p.idempotency_ttl.total_seconds()
    return job


def _claims(job: dict[str, Any]) -> bool:
    """Whether a job claims a TTL dedupe window (``Q.enqueue_claim``)."""
    return job["key"] is not None and job["ttl"] > 0


def _scalars(job: dict[str, Any]) -> dict[str, Any]:
    """``Q.enqueue_input_one``'s parameters for one job: payload and meta as JSON text."""
    return {
        **job,
        "payload": validate.json_text(job["payload"]),
        "meta": validate.json_text(job["meta"], "meta"),
    }


def _check_json(p: EnqueueParams) -> None:
    """The check the document's encoding makes of one job's payload and meta, raised
    with the field's name."""
    validate.json_text(p.payload)
    validate.json_text(p.meta, "meta")


class JobsMixin(PgBase):
    # --- producer -------------------------------------------------------------------

    def _enqueue_batch(self, params: list[EnqueueParams]) -> _Batch:
        """A batch validated, before anything is written. A job whose (kind, key) TTL
        window an earlier job of the batch claims is left out: it would find that claim
        unexpired, so it is not inserted and writes nothing."""
        ids: list[uuid.UUID] = []
        claimed: set[tuple[str, str]] = set()
        left_out: set[uuid.UUID] = set()
        sent = []
        for p in params:
            job = _fields(p)
            ids.append(p.id)
            if _claims(job):
                if (job["kind"], job["key"]) in claimed:
                    _check_json(p)  # not sent, but checked as the others are
                    left_out.add(p.id)
                    continue
                claimed.add((job["kind"], job["key"]))
            sent.append(job)
        args: dict[str, Any]
        if len(sent) == 1:  # scalar parameters: no document to build or to unpack
            args = _scalars(sent[0])
        else:
            columns = zip(_COLUMNS, zip(*map(_ROW, sent), strict=True), strict=True) if sent else ()
            try:
                args = {"jobs": validate.json_text(dict(columns), "jobs")}
            except InvalidInput:
                for p in params:  # name the payload or meta that cannot be encoded
                    _check_json(p)
                raise
        args["slot"] = self.random_slot()
        args["channel"] = self.config.channel
        sql = self._enqueue_sqls[bool(claimed), len(sent) == 1]
        return _Batch(distinct_job_ids(ids), left_out, sql, args)

    @functools.cached_property
    def _enqueue_sqls(self) -> dict[tuple[bool, bool], str]:
        """``Q.enqueue`` qualified, by (with the TTL claim, for one job's scalar
        parameters): filled once per store, not twice a call."""
        return {
            (claim, one): self.qualified(
                Q.enqueue,
                claim=self.qualified(Q.enqueue_claim) if claim else Q.enqueue_no_claim,
                input=Q.enqueue_input_one if one else Q.enqueue_input_document,
            )
            for claim in (False, True)
            for one in (False, True)
        }

    def _enqueue_one(self, cur: Cursor, p: EnqueueParams) -> bool:
        """A single job's enqueue: ``_enqueue_batch`` and ``_enqueue_run`` for a batch of
        one, without their lists, sets and dedupe."""
        job = _fields(p)
        args = _scalars(job)
        args["slot"] = self.random_slot()
        args["channel"] = self.config.channel
        cur.execute(self._enqueue_sqls[_claims(job), True], args)
        return cur.fetchone() is None  # the statement returns the id not inserted

    def _enqueue_run(self, cur: Cursor, batch: _Batch) -> list[bool]:
        if not batch.ids:
            return []
        cur.execute(batch.sql, batch.args)
        skipped = batch.left_out.union(row["id"] for row in cur.fetchall())
        if not skipped:  # the usual case: no id to hash
            return [True] * len(batch.ids)
        return [id not in skipped for id in batch.ids]

    def enqueue(self, p: EnqueueParams) -> bool:
        """One statement in autocommit: its wake is delivered when it commits."""
        with self.write() as cur:
            return self._enqueue_one(cur, p)

    def enqueue_many(self, params: list[EnqueueParams]) -> list[bool]:
        """One statement in autocommit: its wakes are delivered when it commits."""
        batch = self._enqueue_batch(params)
        with self.write() as cur:
            return self._enqueue_run(cur, batch)

    def enqueue_tx(self, tx: psycopg.Connection[Any], p: EnqueueParams) -> bool:
        """Enqueue inside the caller's open transaction (transactional outbox): the
        wake NOTIFY is part of that transaction and is delivered only on commit."""
        with caller_cursor(self, tx) as cur:
            return self._enqueue_one(cur, p)

    def enqueue_many_tx(
        self, tx: psycopg.Connection[Any], params: list[EnqueueParams]
    ) -> list[bool]:
        batch = self._enqueue_batch(params)
        with caller_cursor(self, tx) as cur:
            return self._enqueue_run(cur, batch)

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
            "lease": seconds(p.lease, "lease"),
            "override": bool(p.override_default),
            "default_max": validate.non_negative(p.default_max_attempts, "default_max_attempts"),
        }
        with self.write() as cur:
            # int's own repr: a subclass's __str__ never reaches the statement text.
            cur.execute(fill(Q.dequeue, limit=int.__repr__(limit)), args)
            jobs = fetch_jobs(cur)
        # RETURNING has no ORDER BY: restore the claim order (run_at, id).
        jobs.sort(key=lambda j: (j.run_at, j.id.bytes))
        return jobs

    # --- settlement -----------------------------------------------------------------

    def _fenced(self, op: str, sql: str, **args: Any) -> dict[str, Any]:
        """Run one fenced statement that RETURNs a row; none means NotFound(op)."""
        with self.write() as cur:
            cur.execute(sql, {"slot": self.random_slot(), **args})
            row = cur.fetchone()
        if row is None:
            raise NotFound(op)
        return row

    def _fenced_count(self, op: str, sql: str, **args: Any) -> None:
        with self.write() as cur:
            cur.execute(sql, args)
            if cur.rowcount == 0:
                raise NotFound(op)

    def ack(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        self._fenced("ack", Q.finish, **_lease(id, lease_token), state="succeeded", error=None)

    def ack_many(self, pairs: list[tuple[uuid.UUID, uuid.UUID]]) -> list[uuid.UUID]:
        # The two arrays checked as they are built: no dict a pair.
        ids = [arg_id(id) for id, _ in pairs]
        tokens = [arg_id(token, "lease_token") for _, token in pairs]
        if not ids:
            return []
        with self.write() as cur:
            cur.execute(
                Q.ack_many,
                {"ids": ids, "tokens": tokens, "slot": self.random_slot()},
                binary=True,
            )
            settled = {row["id"] for row in cur.fetchall()}
        return settled_in_order(pairs, settled)

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
