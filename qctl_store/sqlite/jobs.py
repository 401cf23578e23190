"""Queue jobs on SQLite: enqueue (live and TTL idempotency), lease, fenced settlement.

Writers serialise on the database lock (``BEGIN IMMEDIATE``), so the lease needs no
``SKIP LOCKED``: the due ids are picked and leased inside one write transaction, and no
other writer can pick them in between. Every settlement is fenced on
``state = 'active' AND lease_token = ?`` and raises ``NotFound(op)`` on a miss, like
azync's PostgreSQL driver; the stats bump rides in the same transaction, so a fencing
miss bumps nothing.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

from qctl_kit import errors, values
from qctl_store import validate
from qctl_store.contract import distinct_job_ids, settled_in_order
from qctl_store.sqlite.base import SqliteBase, Tx, queries, td_us
from qctl_store.sqlite.rows import DIALECT, arg_id, caller_tx, jobs_from_rows
from qctl_store.types import DequeueParams, EnqueueParams, Job, Source
from qctl_store.writes import enqueue_fields

Q = queries("jobs.sql")


class JobsMixin(SqliteBase):
    # --- enqueue ----------------------------------------------------------------------

    def enqueue(self, p: EnqueueParams) -> bool:
        return self.enqueue_many([p])[0]

    def enqueue_many(self, params: list[EnqueueParams]) -> list[bool]:
        rows = self._enqueue_rows(params)
        with self.tx() as t:
            return self._enqueue(t, params, rows)

    def enqueue_tx(self, tx: sqlite3.Connection, p: EnqueueParams) -> bool:
        """Enqueue inside the caller's open transaction on their own connection to the
        same database file; it commits or rolls back with the caller's work. Open it with
        ``BEGIN IMMEDIATE``: a deferred transaction that already read cannot take the
        write lock once another process committed (SQLite then fails it as a Conflict)."""
        return self.enqueue_many_tx(tx, [p])[0]

    def enqueue_many_tx(self, tx: sqlite3.Connection, params: list[EnqueueParams]) -> list[bool]:
        rows = self._enqueue_rows(params)
        with caller_tx(self, tx) as t:
            return self._enqueue(t, params, rows)

    def _enqueue_rows(self, params: list[EnqueueParams]) -> list[dict[str, Any]]:
        """Validated insert arguments, one per job; raises before anything is written."""
        rows = [enqueue_fields(DIALECT, p) for p in params]
        distinct_job_ids([p.id for p in params])
        return rows

    def _enqueue(
        self, t: Tx, params: list[EnqueueParams], rows: list[dict[str, Any]]
    ) -> list[bool]:
        """TTL claims job by job (claims never depend on jobs, so taking them all first
        decides what one-by-one enqueues would), then every job in one executemany and
        one enqueued bump per kind."""
        sent = []
        for p, args in zip(params, rows, strict=True):
            if p.idempotency_key and p.idempotency_ttl > timedelta(0):
                claimed = t.one(
                    Q.claim_idempotency_key,
                    {
                        "kind": p.kind,
                        "key": p.idempotency_key,
                        "expires_at": t.now + td_us(p.idempotency_ttl),
                        "now": t.now,
                    },
                )
                if claimed is None:
                    continue  # deduplicated by the time window
            if args["run_at"] is None:
                args["run_at"] = t.now + td_us(p.delay)
            args["now"] = t.now
            sent.append(args)
        if not sent:
            return [False] * len(rows)
        t.executemany(Q.insert_job, sent)
        keyed = [a["id"] for a in sent if a["key"] is not None]
        present = (
            {r["id"] for r in t.all(Q.present_jobs, {"ids": json.dumps(keyed)})} if keyed else set()
        )
        inserted = {a["id"]: a["kind"] for a in sent if a["key"] is None or a["id"] in present}
        self.bump_kinds(t, Source.QUEUE, inserted.values(), "enqueued")
        return [a["id"] in inserted for a in rows]

    # --- lease ------------------------------------------------------------------------

    def dequeue_batch(self, source: Source, p: DequeueParams) -> list[Job]:
        source = validate.source(source)
        validate.kind(p.kind)
        if validate.limit(p.limit) <= 0:
            return []  # before the other checks, as the PostgreSQL backend
        validate.non_negative(p.default_max_attempts, "default_max_attempts")
        values.duration(p.lease, "lease")
        with self.tx() as t:
            ids = [
                r["id"]
                for r in t.all(
                    Q.pick_due,
                    {"source": source.value, "kind": p.kind, "now": t.now, "limit": p.limit},
                )
            ]
            if not ids:
                return []
            t.executemany(
                Q.lease_job,
                [
                    {
                        "id": id,
                        "now": t.now,
                        "lease": td_us(p.lease),
                        "token": str(uuid.uuid4()),  # fresh per job, as gen_random_uuid()
                        "override": int(p.override_default),
                        "default_max": p.default_max_attempts,
                    }
                    for id in ids
                ],
            )
            return jobs_from_rows(t.all(Q.leased_jobs, {"ids": json.dumps(ids)}))

    # --- fenced settlement --------------------------------------------------------------

    def _fenced(self, op: str, sql: str, args: dict[str, Any]) -> sqlite3.Row:
        """One fenced transition and the counter its statement reports, in one
        transaction; no row is ``NotFound(op)`` (and then nothing was written)."""
        with self.tx() as t:
            row = t.one(sql, {"now": t.now, **args})
            if row is None:
                raise errors.NotFound(op)
            if row["counter"] == "failed":
                insert_attempt(t, row["id"], row["attempt"], row["last_error"])
            if row["counter"] is not None:
                self.bump_stat(t, row["source"], row["kind"], row["counter"])
            return row

    def ack(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        self._fenced("ack", Q.ack, _lease(id, lease_token))

    def ack_many(self, pairs: list[tuple[uuid.UUID, uuid.UUID]]) -> list[uuid.UUID]:
        leases = [_lease(id, token) for id, token in pairs]
        if not leases:
            return []
        arg = json.dumps([[lease["id"], lease["token"]] for lease in leases])
        with self.tx() as t:
            rows = t.all(Q.ack_many, {"pairs": arg, "now": t.now})
            for (source, kind), n in Counter((r["source"], r["kind"]) for r in rows).items():
                self.bump_stat(t, source, kind, "processed", n)
        return settled_in_order(pairs, {uuid.UUID(r["id"]) for r in rows})

    def reschedule(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, last_error: str
    ) -> None:
        args = _lease(id, lease_token)
        delay_us = td_us(values.duration(delay, "delay"))
        self._fenced(
            "reschedule",
            Q.fail,
            {**args, "state": "scheduled", "delay": delay_us, "error": str(last_error)},
        )

    def dead(self, id: uuid.UUID, lease_token: uuid.UUID, last_error: str) -> None:
        args = _lease(id, lease_token)
        self._fenced(
            "dead", Q.fail, {**args, "state": "dead", "delay": None, "error": str(last_error)}
        )

    def skip(self, id: uuid.UUID, lease_token: uuid.UUID, reason: str) -> None:
        self._fenced("skip", Q.skip, {**_lease(id, lease_token), "error": str(reason)})

    def release(self, id: uuid.UUID, lease_token: uuid.UUID) -> None:
        self._fenced("release", Q.release, _lease(id, lease_token))

    def snooze(
        self, id: uuid.UUID, lease_token: uuid.UUID, delay: timedelta, deadline_error: str
    ) -> bool:
        args = _lease(id, lease_token)
        delay_us = td_us(values.duration(delay, "delay"))
        row = self._fenced(
            "snooze", Q.snooze, {**args, "delay": delay_us, "error": str(deadline_error)}
        )
        return row["counter"] is not None  # dead-lettered past its deadline

    def extend_lease(self, id: uuid.UUID, lease_token: uuid.UUID, lease: timedelta) -> None:
        args = _lease(id, lease_token)
        lease_us = td_us(values.duration(lease, "lease"))
        self._fenced("extend lease", Q.extend_lease, {**args, "lease": lease_us})


def _lease(id: uuid.UUID, lease_token: uuid.UUID) -> dict[str, str]:
    """The fencing arguments of a settlement, checked before any transaction starts."""
    return {"id": arg_id(id), "token": arg_id(lease_token, "lease_token")}


def insert_attempt(t: Tx, job_id: str, attempt: int, error: str) -> None:
    """The attempt history row of a failing transition (shared with the reaper)."""
    t.execute(Q.insert_attempt, {"id": job_id, "attempt": attempt, "error": error, "now": t.now})
