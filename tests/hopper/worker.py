"""A stand-in for hopper's Go client in the tests: what it writes, in hopper's own SQL.
Inserts go through ``hopper_insert`` (hopper's SQL producer function); the claim,
finalize (with its tail), client lease, leader and workflow statements are transcribed
from hopper's ``driver/internal/pgsql`` (jobs.go jobClaimSQL and jobFinalizeSQL, flow.go
finalizeTailSQL and WorkflowInsert, cluster.go ClientRegister and leaderSQL)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tests.conftest import PG_DSN

FINALIZE = """
WITH RECURSIVE r AS (
  SELECT %(id)s::uuid AS id, %(by)s::bigint AS attempted_by, %(state)s::text AS state,
         %(delay)s::float8 AS delay, %(error)s::jsonb AS error, %(output)s::jsonb AS output
),
retry AS (
  UPDATE hopper_jobs j
  SET state = r.state::hopper_job_state, scheduled_at = now() + make_interval(secs => r.delay),
      errors = CASE WHEN r.error IS NULL THEN j.errors
                    ELSE j.errors || jsonb_set(r.error, '{at}', to_jsonb(now())) END,
      attempted_by = NULL
  FROM r
  WHERE j.id = r.id AND j.state = 'running' AND j.attempted_by = r.attempted_by
    AND r.state IN ('retryable', 'scheduled')
  RETURNING j.id
),
finished AS (
  DELETE FROM hopper_jobs j USING r
  WHERE j.id = r.id AND j.state = 'running' AND j.attempted_by = r.attempted_by
    AND r.state IN ('completed', 'cancelled', 'discarded')
  RETURNING j.id, j.seq, j.kind, j.queue, j.priority, j.attempt, j.max_attempts, j.scheduled_at,
    j.attempted_at, j.attempted_by, j.args, j.metadata,
    CASE WHEN r.error IS NULL THEN j.errors
         ELSE j.errors || jsonb_set(r.error, '{at}', to_jsonb(now())) END AS errors,
    j.unique_key, j.ordering_key, j.partition_key, j.batch_id, j.expires_at,
    j.cancel_requested_at, j.await, j.created_at, r.output AS output, true AS archive,
    r.state AS final_state,
    CASE WHEN j.await THEN pg_notify('hopper_done', j.id::text) END AS notified
),
cascade AS (
  SELECT d.job_id FROM hopper_job_deps d JOIN finished f ON d.depends_on = f.id
  WHERE f.final_state IN ('cancelled', 'discarded') AND d.on_failure = 'cancel'
  UNION
  SELECT d.job_id FROM hopper_job_deps d JOIN cascade c ON d.depends_on = c.job_id
  WHERE d.on_failure = 'cancel'
),
cascaded AS (
  DELETE FROM hopper_jobs j USING (SELECT DISTINCT job_id FROM cascade) c
  WHERE j.id = c.job_id AND j.state = 'pending'
  RETURNING j.id, j.seq, j.kind, j.queue, j.priority, j.attempt, j.max_attempts, j.scheduled_at,
    j.attempted_at, j.attempted_by, j.args, j.metadata,
    j.errors || jsonb_build_object('at', now(), 'attempt', j.attempt,
                                   'error', 'hopper: dependency failed') AS errors,
    j.unique_key, j.ordering_key, j.partition_key, j.batch_id, j.expires_at,
    j.cancel_requested_at, j.await, j.created_at, NULL::jsonb AS output, true AS archive,
    'cancelled'::text AS final_state,
    CASE WHEN j.await THEN pg_notify('hopper_done', j.id::text) END AS notified
),
done AS (SELECT * FROM finished UNION ALL SELECT * FROM cascaded),
archived AS (
  INSERT INTO hopper_job_history (
    id, seq, kind, queue, state, priority, attempt, max_attempts, scheduled_at, attempted_at,
    attempted_by, args, metadata, errors, unique_key, ordering_key, partition_key, batch_id,
    expires_at, cancel_requested_at, await, created_at, finalized_at, output)
  SELECT id, seq, kind, queue, final_state::hopper_job_state, priority, attempt, max_attempts,
    scheduled_at, attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
    partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, now(), output
  FROM done WHERE archive
  RETURNING id
),
batches AS (
  UPDATE hopper_batches b
  SET pending = b.pending - c.n, failed = b.failed + c.f,
      completed_at = CASE WHEN b.pending - c.n <= 0 THEN now() ELSE b.completed_at END
  FROM (SELECT batch_id, count(*) AS n,
               count(*) FILTER (WHERE final_state IN ('cancelled', 'discarded')) AS f
        FROM done WHERE batch_id IS NOT NULL GROUP BY batch_id) c
  WHERE b.id = c.batch_id
  RETURNING b.id, b.pending, b.failed, b.on_success, b.on_failure, b.on_complete
),
callbacks AS (
  INSERT INTO hopper_jobs (kind, queue, priority, max_attempts, args, metadata)
  SELECT cb->>'kind', coalesce(cb->>'queue', 'default'), coalesce((cb->>'priority')::smallint, 2),
    coalesce((cb->>'max_attempts')::smallint, 25), coalesce(cb->'args', '{}'),
    coalesce(cb->'metadata', '{}')
      || jsonb_build_object('batch_id', b.id::text, 'batch_failed', b.failed)
  FROM batches b, LATERAL (VALUES (CASE WHEN b.failed = 0 THEN b.on_success ELSE b.on_failure END),
                                  (b.on_complete)) AS v(cb)
  WHERE b.pending <= 0 AND cb IS NOT NULL
  RETURNING pg_notify('hopper_insert', queue)
),
promoted AS (
  UPDATE hopper_jobs j
  SET state = CASE WHEN j.scheduled_at > now() THEN 'scheduled'
                   ELSE 'available' END::hopper_job_state
  WHERE j.state = 'pending'
    AND j.id IN (SELECT d.job_id FROM hopper_job_deps d JOIN done ON d.depends_on = done.id)
    AND j.id NOT IN (SELECT id FROM cascaded)
    AND NOT EXISTS (
      SELECT 1 FROM hopper_job_deps d JOIN hopper_jobs x ON x.id = d.depends_on
      WHERE d.job_id = j.id AND x.id NOT IN (SELECT id FROM done))
  RETURNING pg_notify('hopper_insert', j.queue)
),
edges AS (
  DELETE FROM hopper_job_deps d WHERE d.job_id IN (SELECT id FROM done) RETURNING d.job_id
)
SELECT id FROM retry UNION ALL SELECT id FROM finished
"""

CLAIM = """
WITH c AS MATERIALIZED (
  SELECT cand.id FROM hopper_jobs cand
  WHERE cand.queue = %(queue)s AND cand.state IN ('available', 'scheduled', 'retryable')
    AND cand.scheduled_at <= now() AND (cand.expires_at IS NULL OR cand.expires_at > now())
  ORDER BY cand.priority, cand.scheduled_at, cand.seq
  LIMIT %(limit)s
  FOR UPDATE SKIP LOCKED
)
UPDATE hopper_jobs j
SET state = 'running', attempt = j.attempt + 1, attempted_at = now(), attempted_by = %(by)s
FROM c WHERE j.id = c.id
RETURNING j.id
"""


PUMP = """
WITH ev AS (
  SELECT xid, seq, topic, key, payload, headers, message_id FROM hopper_stream_events
  WHERE xid >= pg_snapshot_xmin(%(seen)s::pg_snapshot)
    AND xid < pg_snapshot_xmax(%(now)s::pg_snapshot)
    AND (xid, seq) > (%(xid)s::text::xid8, %(seq)s::bigint)
    AND pg_visible_in_snapshot(xid, %(now)s::pg_snapshot)
    AND NOT pg_visible_in_snapshot(xid, %(seen)s::pg_snapshot)
    AND topic ~ hopper_topic_regex(%(pattern)s::text)
  ORDER BY xid, seq
)
INSERT INTO hopper_jobs (kind, queue, args, metadata, ordering_key)
SELECT %(kind)s, %(queue)s, ev.payload,
  jsonb_build_object('topic', ev.topic, 'position', ev.xid::text || ':' || ev.seq::text), ev.key
FROM ev
RETURNING metadata->>'position' AS position
"""
"""A whole delta of stream.go streamPumpSQL (no limit), as the leader pumps."""


class Worker:
    """One connection to a hopper schema, acting as hopper's client would."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.conn = psycopg.connect(
            PG_DSN, autocommit=True, row_factory=dict_row, options=f"-c search_path={schema}"
        )

    def close(self) -> None:
        self.conn.close()

    def insert(self, kind: str, args: Any = None, **opts: Any) -> uuid.UUID:
        """``SELECT hopper_insert(kind, args, opts)``: hopper's SQL producer."""
        row = self.conn.execute(
            "SELECT hopper_insert(%s, %s::jsonb, %s::jsonb) AS id",
            (kind, json.dumps(args or {}), json.dumps(opts)),
        ).fetchone()
        assert row is not None
        return uuid.UUID(str(row["id"]))

    def register(self, hostname: str = "host", ttl: float = 60.0) -> int:
        """A client lease (cluster.go ClientRegister)."""
        row = self.conn.execute(
            "INSERT INTO hopper_clients (hostname, expires_at, info)"
            " VALUES (%s, now() + make_interval(secs => %s::float8), '{}') RETURNING id",
            (hostname, ttl),
        ).fetchone()
        assert row is not None
        return int(row["id"])

    def lead(self, client: int, ttl: float = 60.0) -> None:
        """Take the leader lease (cluster.go leaderSQL)."""
        self.conn.execute(
            "INSERT INTO hopper_leader (name, client_id, elected_at, expires_at)"
            " VALUES ('default', %s, now(), now() + make_interval(secs => %s::float8))"
            " ON CONFLICT (name) DO UPDATE SET client_id = EXCLUDED.client_id,"
            " expires_at = EXCLUDED.expires_at",
            (client, ttl),
        )

    def claim(self, queue: str, client: int, limit: int = 1) -> list[uuid.UUID]:
        rows = self.conn.execute(CLAIM, {"queue": queue, "by": client, "limit": limit}).fetchall()
        return [uuid.UUID(str(r["id"])) for r in rows]

    def finalize(
        self,
        job: uuid.UUID,
        client: int,
        state: str,
        error: str | None = None,
        output: Any = None,
        delay: float = 0.0,
    ) -> bool:
        """One result through hopper's finalize statement; False when fenced."""
        attempt = self.conn.execute(
            "SELECT attempt FROM hopper_jobs WHERE id = %s", (job,)
        ).fetchone()
        err = (
            json.dumps({"attempt": attempt["attempt"] if attempt else 0, "error": error})
            if error
            else None
        )
        params = {
            "id": job,
            "by": client,
            "state": state,
            "delay": delay,
            "error": err,
            "output": json.dumps(output) if output is not None else None,
        }
        return bool(self.conn.execute(FINALIZE, params).fetchall())

    def dead(
        self, kind: str, queue: str, client: int, error: str = "boom", **opts: Any
    ) -> uuid.UUID:
        """A job hopper's worker ran and discarded (out of attempts)."""
        job = self.insert(kind, {"k": kind}, queue=queue, max_attempts=1, **opts)
        assert self.claim(queue, client) == [job]
        assert self.finalize(job, client, "discarded", error=error)
        return job

    def workflow(
        self, queue: str, kinds: list[str], deps: list[tuple[int, int]], **callbacks: Any
    ) -> tuple[uuid.UUID, list[uuid.UUID]]:
        """A workflow as flow.go WorkflowInsert writes it: the batch with its edges,
        the jobs (pending where they depend on another), the working set of edges."""
        with self.conn.transaction():
            ids = [
                uuid.UUID(str(r["id"]))
                for r in self.conn.execute(
                    "SELECT hopper_uuidv7() AS id FROM generate_series(1, %s)", (len(kinds),)
                ).fetchall()
            ]
            edges = [[str(ids[j]), str(ids[d])] for j, d in deps]
            batch = self.conn.execute(
                "INSERT INTO hopper_batches (name, pending, total, on_success, on_failure,"
                " on_complete, metadata, edges) VALUES (%s, %s, %s, %s::jsonb, %s::jsonb,"
                " %s::jsonb, '{}', %s::jsonb) RETURNING id",
                (
                    f"wf-{queue}",
                    len(kinds),
                    len(kinds),
                    *(
                        json.dumps(callbacks[k]) if k in callbacks else None
                        for k in ("on_success", "on_failure", "on_complete")
                    ),
                    json.dumps(edges),
                ),
            ).fetchone()
            assert batch is not None
            pending = {j for j, _ in deps}
            for i, kind in enumerate(kinds):
                self.conn.execute(
                    "INSERT INTO hopper_jobs (id, kind, queue, state, batch_id)"
                    " VALUES (%s, %s, %s, %s::hopper_job_state, %s)",
                    (ids[i], kind, queue, "pending" if i in pending else "available", batch["id"]),
                )
            for j, d in deps:
                self.conn.execute(
                    "INSERT INTO hopper_job_deps (job_id, depends_on, on_failure)"
                    " VALUES (%s, %s, 'cancel')",
                    (ids[j], ids[d]),
                )
        return uuid.UUID(str(batch["id"])), ids

    def consumer(self, name: str, pattern: str, queue: str) -> None:
        """A stream consumer starting at the latest (stream.go StreamConsumerUpsert)."""
        self.conn.execute(
            "INSERT INTO hopper_stream_consumers (name, pattern, kind, queue, seen)"
            " VALUES (%s, %s, 'deliver', %s, pg_current_snapshot())",
            (name, pattern, queue),
        )

    def append(self, topic: str, payload: Any) -> tuple[int, int]:
        """One event in a transaction of its own (stream.go StreamAppend): its xid, seq."""
        row = self.conn.execute(
            "INSERT INTO hopper_stream_events (topic, payload) VALUES (%s, %s::jsonb)"
            " RETURNING xid::text AS xid, seq",
            (topic, json.dumps(payload)),
        ).fetchone()
        assert row is not None
        return int(row["xid"]), int(row["seq"])

    def pump(self, name: str) -> list[str]:
        """Deliver a consumer's whole delta and record the new snapshot as seen; the
        positions delivered, in order."""
        with self.conn.transaction():
            c = self.conn.execute(
                "SELECT pattern, kind, queue, seen::text AS seen, xid::text AS xid, seq"
                " FROM hopper_stream_consumers WHERE name = %s FOR UPDATE",
                (name,),
            ).fetchone()
            assert c is not None
            now = self.conn.execute("SELECT pg_current_snapshot()::text AS s").fetchone()
            assert now is not None
            rows = self.conn.execute(PUMP, {**c, "now": now["s"]}).fetchall()
            self.conn.execute(
                "UPDATE hopper_stream_consumers SET seen = %s::pg_snapshot, reading = NULL,"
                " xid = '0', seq = 0 WHERE name = %s",
                (now["s"], name),
            )
        return [r["position"] for r in rows]
