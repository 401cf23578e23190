-- A stand-in for hopper's Go client: hopper's own statements, run from Python where no
-- hopper Go process can (the module proxy refuses hopper), by `qctl demo --system hopper`
-- and the tests. Transcribed from driver/internal/pgsql at schema version 8 (jobs.go,
-- flow.go, cluster.go, stream.go); standin.py says what differs.

-- name: insert
-- One job through hopper's SQL producer function (hoppermigrate/migrations/002).
SELECT hopper_insert(%(kind)s, %(args)s::jsonb, %(opts)s::jsonb) AS id;

-- name: claim
-- Claim due jobs of a queue (jobs.go jobClaimSQL); none while the queue is paused (a
-- pause stops every client's claims: driver.go QueuePause); a non-NULL mark also
-- requires the job's metadata to contain it, so the demo claims only the jobs it inserted.
WITH c AS MATERIALIZED (
  SELECT cand.id FROM hopper_jobs cand
  WHERE cand.queue = %(queue)s AND cand.state IN ('available', 'scheduled', 'retryable')
    AND NOT EXISTS (SELECT 1 FROM hopper_queues q
                    WHERE q.name = %(queue)s AND q.paused_at IS NOT NULL)
    AND cand.scheduled_at <= now() AND (cand.expires_at IS NULL OR cand.expires_at > now())
    AND (%(mark)s::jsonb IS NULL OR cand.metadata @> %(mark)s::jsonb)
  ORDER BY cand.priority, cand.scheduled_at, cand.seq
  LIMIT %(limit)s
  FOR UPDATE SKIP LOCKED
)
UPDATE hopper_jobs j
SET state = 'running', attempt = j.attempt + 1, attempted_at = now(), attempted_by = %(by)s
FROM c WHERE j.id = c.id
RETURNING j.id;

-- name: attempt
-- A live job's attempt number (for the error entry its finalize appends) and its limit.
SELECT attempt, max_attempts FROM hopper_jobs WHERE id = %(id)s;

-- name: finalize
-- One result, fenced on the claiming client (jobs.go jobFinalizeSQL): a retry stays
-- live, a final state moves the job to history through fragments.sql's finalize_tail
-- (flow.go finalizeTailSQL: the workflow cascade, batch accounting and callbacks,
-- promotion of dependents, the done notice of an awaited job).
WITH RECURSIVE r AS (
  SELECT %(id)s::uuid AS id, %(by)s::bigint AS attempted_by, %(state)s::text AS state,
         %(delay)s::float8 AS delay, %(error)s::jsonb AS error, %(output)s::jsonb AS output
),
retry AS (
  UPDATE hopper_jobs j
  SET state = r.state::hopper_job_state, scheduled_at = now() + make_interval(secs => r.delay),
      errors = CASE WHEN r.error IS NULL THEN j.errors
                    ELSE j.errors || jsonb_set(r.error, ARRAY['at'], to_jsonb(now())) END,
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
         ELSE j.errors || jsonb_set(r.error, ARRAY['at'], to_jsonb(now())) END AS errors,
    j.unique_key, j.ordering_key, j.partition_key, j.batch_id, j.expires_at,
    j.cancel_requested_at, j.await, j.created_at, r.output AS output, true AS archive,
    r.state AS final_state,
    CASE WHEN j.await THEN pg_notify(%(done)s, j.id::text) END AS notified
),
{finalize_tail}
SELECT id FROM retry UNION ALL SELECT id FROM finished;

-- name: register
-- A client lease (cluster.go ClientRegister).
INSERT INTO hopper_clients (hostname, expires_at, info)
VALUES (%(hostname)s, now() + make_interval(secs => %(ttl)s::float8), %(info)s::jsonb)
RETURNING id;

-- name: renew
-- Extend an unexpired client lease (cluster.go ClientRenew).
UPDATE hopper_clients SET expires_at = now() + make_interval(secs => %(ttl)s::float8)
WHERE id = %(id)s AND expires_at > now();

-- name: deregister
-- A client leaving: its lease row goes (cluster.go ClientDelete).
DELETE FROM hopper_clients WHERE id = %(id)s;

-- name: lead
-- Take the leader lease if free or expired, or renew it (cluster.go leaderSQL).
INSERT INTO hopper_leader (name, client_id, elected_at, expires_at)
VALUES ('default', %(id)s, now(), now() + make_interval(secs => %(ttl)s::float8))
ON CONFLICT (name) DO UPDATE SET
  client_id  = EXCLUDED.client_id,
  elected_at = CASE WHEN hopper_leader.client_id = EXCLUDED.client_id THEN hopper_leader.elected_at ELSE now() END,
  expires_at = EXCLUDED.expires_at
WHERE hopper_leader.expires_at < now() OR hopper_leader.client_id = EXCLUDED.client_id
RETURNING client_id;

-- name: resign
-- Give the leader lease up (cluster.go LeaderResign).
DELETE FROM hopper_leader WHERE name = 'default' AND client_id = %(id)s;

-- name: new_ids
-- Ids for a workflow's jobs, taken before they are inserted (flow.go WorkflowInsert).
SELECT hopper_uuidv7() AS id FROM generate_series(1, %(n)s);

-- name: insert_workflow
-- A workflow's batch row with its whole graph (flow.go WorkflowInsert).
INSERT INTO hopper_batches (name, pending, total, on_success, on_failure, on_complete, metadata, edges)
VALUES (%(name)s, %(total)s, %(total)s, %(on_success)s::jsonb, %(on_failure)s::jsonb,
        %(on_complete)s::jsonb, %(metadata)s::jsonb, %(edges)s::jsonb)
RETURNING id;

-- name: insert_workflow_job
-- One job of a workflow: pending while it depends on another (flow.go WorkflowInsert).
INSERT INTO hopper_jobs (id, kind, queue, state, batch_id, args, metadata)
VALUES (%(id)s, %(kind)s, %(queue)s, %(state)s::hopper_job_state, %(batch_id)s, %(args)s::jsonb,
        %(metadata)s::jsonb);

-- name: insert_dep
-- One edge of a workflow's working set (flow.go WorkflowInsert).
INSERT INTO hopper_job_deps (job_id, depends_on, on_failure)
VALUES (%(job_id)s, %(depends_on)s, %(on_failure)s);

-- name: insert_consumer
-- A stream consumer starting at the latest (stream.go StreamConsumerUpsert).
INSERT INTO hopper_stream_consumers (name, pattern, kind, queue, seen)
VALUES (%(name)s, %(pattern)s, 'deliver', %(queue)s, pg_current_snapshot());

-- name: append
-- One event in a transaction of its own (stream.go StreamAppend).
INSERT INTO hopper_stream_events (topic, payload) VALUES (%(topic)s, %(payload)s::jsonb)
RETURNING xid::text AS xid, seq;

-- name: consumer_for_pump
-- A consumer's position, locked for its pump (stream.go StreamPump).
SELECT pattern, kind, queue, seen::text AS seen, xid::text AS xid, seq
FROM hopper_stream_consumers WHERE name = %(name)s FOR UPDATE;

-- name: snapshot
-- The snapshot a pump delivers up to.
SELECT pg_current_snapshot()::text AS s;

-- name: pump
-- A whole delta of stream.go streamPumpSQL (no limit), as the leader pumps.
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
RETURNING metadata->>'position' AS position;

-- name: pumped
-- Record a consumer's delta as delivered (stream.go StreamPump).
UPDATE hopper_stream_consumers SET seen = %(seen)s::pg_snapshot, reading = NULL, xid = '0', seq = 0
WHERE name = %(name)s;
