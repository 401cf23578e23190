-- The demo's stand-in Oban nodes (qctl demo --system oban), each statement after the
-- oban-py 0.7.0 statement named above it (oban/queries/*.sql); staging and fetching
-- limited by a non-NULL mark to the jobs the demo's run inserted (meta @> it): on a
-- schema shared with real nodes it touches no other job.

-- name: insert_job
-- A job (insert_job.sql), marked as the demo's, then the insert notice oban-py's
-- producers wake on (Oban.insert: notify "insert" with the queue).
WITH job AS (
    INSERT INTO oban_jobs (queue, worker, args, meta, max_attempts, priority, tags,
                           scheduled_at, state)
    VALUES (%(queue)s, %(worker)s, %(args)s, %(meta)s, %(max_attempts)s, %(priority)s,
            %(tags)s,
            timezone('UTC', now()) + make_interval(secs => %(delay)s),
            CASE WHEN %(delay)s > 0 THEN 'scheduled' ELSE 'available' END::oban_job_state)
    RETURNING id, queue
)
SELECT id, pg_notify(%(channel)s, json_build_object('queue', queue)::text) FROM job;

-- name: stage_jobs
-- Make the due scheduled and retryable jobs available (stage_jobs.sql).
UPDATE oban_jobs SET state = 'available'
WHERE state IN ('scheduled', 'retryable') AND scheduled_at <= timezone('UTC', now())
  AND (%(mark)s::jsonb IS NULL OR meta @> %(mark)s::jsonb);

-- name: fetch_jobs
-- Claim up to %(demand)s available jobs of a queue (fetch_jobs.sql).
WITH locked AS (
    SELECT id FROM oban_jobs
    WHERE state = 'available' AND queue = %(queue)s
      AND (%(mark)s::jsonb IS NULL OR meta @> %(mark)s::jsonb)
    ORDER BY priority, scheduled_at, id
    LIMIT %(demand)s
    FOR UPDATE SKIP LOCKED
)
UPDATE oban_jobs j
SET attempt = j.attempt + 1, attempted_at = timezone('UTC', now()),
    attempted_by = %(attempted_by)s, state = 'executing'
FROM locked
WHERE j.id = locked.id AND j.attempt < j.max_attempts
RETURNING j.id, j.attempt, j.max_attempts, j.attempted_at;

-- name: ack_job
-- Finish an attempt (ack_job.sql): completed, cancelled, or failed (the error appended,
-- retryable after a backoff, discarded when out of attempts); only while executing.
UPDATE oban_jobs
SET state = %(state)s::oban_job_state,
    completed_at = CASE WHEN %(state)s = 'completed' THEN timezone('UTC', now()) END,
    cancelled_at = CASE WHEN %(state)s = 'cancelled' THEN timezone('UTC', now()) END,
    discarded_at = CASE WHEN %(state)s = 'discarded' THEN timezone('UTC', now()) END,
    scheduled_at = CASE WHEN %(state)s = 'retryable'
                        THEN timezone('UTC', now()) + make_interval(secs => %(backoff)s)
                        ELSE scheduled_at END,
    errors = CASE WHEN %(error)s::jsonb IS NULL THEN errors ELSE errors || %(error)s::jsonb END
WHERE id = %(id)s AND state = 'executing' AND attempted_at = %(attempted_at)s;

-- name: insert_producer
-- A producer row (insert_producer.sql).
INSERT INTO oban_producers (uuid, name, node, queue, meta)
VALUES (%(uuid)s, 'Oban', %(node)s, %(queue)s, %(meta)s)
ON CONFLICT (uuid) DO NOTHING;

-- name: update_producer
-- What a producer records of itself after a signal (update_producer.sql).
UPDATE oban_producers SET meta = meta || %(meta)s::jsonb WHERE uuid = %(uuid)s;

-- name: refresh_producers
-- A node's heartbeat (_refresher.py, refresh_producers.sql).
UPDATE oban_producers SET updated_at = timezone('UTC', now()) WHERE uuid = ANY(%(uuids)s::uuid[]);

-- name: delete_producers
-- A node's producers at its stop (delete_producer.sql).
DELETE FROM oban_producers WHERE uuid = ANY(%(uuids)s::uuid[]);

-- name: elect_leader
-- Take or keep the leadership (elect_leader.sql), on a schema the demo created only.
INSERT INTO oban_leaders (name, node, elected_at, expires_at)
VALUES ('Oban', %(node)s, timezone('UTC', now()), timezone('UTC', now()) + interval '30 seconds')
ON CONFLICT (name) DO UPDATE SET expires_at = EXCLUDED.expires_at
WHERE oban_leaders.node = EXCLUDED.node;

-- name: job_counts
-- The demo's jobs per state (its headless report).
SELECT state::text AS state, count(*) AS n FROM oban_jobs
WHERE meta @> %(mark)s::jsonb GROUP BY state ORDER BY state;

-- name: rescue_jobs
-- A stopping node's unfinished jobs, as oban-py's lifeline rescues an orphan
-- (rescue_jobs.sql): available again, or discarded when out of attempts.
UPDATE oban_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END::oban_job_state,
    discarded_at = CASE WHEN attempt >= max_attempts THEN timezone('UTC', now())
                        ELSE discarded_at END,
    meta = CASE WHEN attempt >= max_attempts THEN meta
                ELSE meta || jsonb_build_object('rescued',
                                                coalesce((meta ->> 'rescued')::int, 0) + 1) END
WHERE id = ANY(%(ids)s::bigint[]) AND state = 'executing';
