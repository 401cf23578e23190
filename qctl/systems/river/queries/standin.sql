-- The statements of `qctl demo --system river`'s labelled stand-in (standin.py), each
-- one River v0.51.2's own query of riverdriver/riverpgxv5/internal/dbsqlc/*.sql as a
-- River client runs it; fetch and schedule narrowed by a non-NULL mark to the run's jobs
-- (metadata @> it) so that on a schema shared with real River clients it touches no job
-- it did not insert.

-- name: insert_job
-- One job (river_job.sql JobInsertFastMany for one row, no unique key), then River's
-- insert notification for its queue when it is available (client.go
-- maybeNotifyInsertForQueues: pg_misc.sql PGNotifyMany on <schema>.river_insert).
WITH inserted AS (
    INSERT INTO river_job (args, kind, max_attempts, metadata, priority, queue,
                           scheduled_at, state, tags)
    VALUES (%(args)s::jsonb, %(kind)s, %(max_attempts)s, %(metadata)s::jsonb,
            %(priority)s, %(queue)s, coalesce(%(scheduled_at)s::timestamptz, now()),
            %(state)s::river_job_state, %(tags)s::varchar(255)[])
    RETURNING id, queue, state
)
SELECT id,
       CASE WHEN state = 'available'
            THEN pg_notify(%(insert_channel)s, json_build_object('queue', queue)::text)
       END AS notified
FROM inserted;

-- name: register_queue
-- A producer's queue row, created or its updated_at renewed (river_queue.sql
-- QueueCreateOrSetUpdatedAt); whether the queue is paused (producer.go fetches nothing
-- from a paused queue).
INSERT INTO river_queue (created_at, metadata, name, paused_at, updated_at)
VALUES (now(), '{}'::jsonb, %(name)s, NULL, now())
ON CONFLICT (name) DO UPDATE SET updated_at = EXCLUDED.updated_at
RETURNING paused_at IS NOT NULL AS paused;

-- name: queue_paused
-- Whether a queue is paused, where the demo shares the schema with River's clients and
-- leaves their queue rows alone (producer.go fetches nothing from a paused queue).
SELECT EXISTS (SELECT 1 FROM river_queue WHERE name = %(name)s AND paused_at IS NOT NULL)
    AS paused;

-- name: fetch
-- Lock and start up to %(max)s available jobs of a queue, highest priority first
-- (river_job.sql JobGetAvailable, attempted_by kept to River's 100 last clients).
WITH locked_jobs AS (
    SELECT id
    FROM river_job
    WHERE state = 'available'
      AND queue = %(queue)s
      AND scheduled_at <= now()
      AND (%(mark)s::jsonb IS NULL OR metadata @> %(mark)s::jsonb)
    ORDER BY priority ASC, scheduled_at ASC, id ASC
    LIMIT %(max)s
    FOR UPDATE SKIP LOCKED
)
UPDATE river_job
SET state = 'running',
    attempt = river_job.attempt + 1,
    attempted_at = now(),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= 100
             THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - 100:]
             ELSE river_job.attempted_by
        END,
        %(client)s::text)
FROM locked_jobs
WHERE river_job.id = locked_jobs.id
RETURNING river_job.id, river_job.attempt, river_job.max_attempts;

-- name: complete
-- A running job's attempt settled as River's completer does (river_job.sql
-- JobSetStateIfRunningMany): completed; or failed, its error appended to errors, then
-- retryable at %(retry_at)s or discarded once its attempts are spent; a job whose cancel
-- was asked (metadata cancel_attempted_at, JobCancel) ends cancelled instead. Only while
-- it is still running: a job River or qctl moved on meanwhile is left alone.
UPDATE river_job
SET state = CASE
        WHEN metadata ? 'cancel_attempted_at' THEN 'cancelled'
        WHEN NOT %(failed)s THEN 'completed'
        WHEN attempt >= max_attempts THEN 'discarded'
        ELSE 'retryable'
    END::river_job_state,
    finalized_at = CASE
        WHEN metadata ? 'cancel_attempted_at' OR NOT %(failed)s OR attempt >= max_attempts
        THEN now()
    END,
    scheduled_at = CASE
        WHEN %(failed)s AND NOT metadata ? 'cancel_attempted_at' AND attempt < max_attempts
        THEN %(retry_at)s::timestamptz ELSE scheduled_at
    END,
    errors = CASE WHEN %(failed)s
        THEN array_append(errors, jsonb_build_object(
            'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
            'attempt', attempt, 'error', %(error)s::text, 'trace', ''))
        ELSE errors
    END
WHERE id = %(id)s AND state = 'running';

-- name: schedule
-- Make the scheduled and retryable jobs whose time came available (river_job.sql
-- JobSchedule, which the leader's scheduler runs; the demo's jobs carry no unique key).
UPDATE river_job
SET state = 'available'
WHERE id IN (
    SELECT id FROM river_job
    WHERE state IN ('retryable', 'scheduled')
      AND scheduled_at <= now()
      AND (%(mark)s::jsonb IS NULL OR metadata @> %(mark)s::jsonb)
    ORDER BY priority, scheduled_at, id
    LIMIT 1000
    FOR UPDATE
);

-- name: elect
-- Become the leader, or stay it (river_leader.sql LeaderAttemptElect, then
-- LeaderAttemptReelect): whether this client leads.
WITH elected AS (
    INSERT INTO river_leader (leader_id, elected_at, expires_at)
    VALUES (%(client)s, now(), now() + make_interval(secs => %(ttl)s))
    ON CONFLICT (name) DO NOTHING
    RETURNING leader_id
), reelected AS (
    UPDATE river_leader
    SET expires_at = now() + make_interval(secs => %(ttl)s)
    WHERE leader_id = %(client)s AND expires_at >= now()
    RETURNING leader_id
)
SELECT EXISTS (SELECT 1 FROM elected) OR EXISTS (SELECT 1 FROM reelected) AS leading;

-- name: expire_leader
-- Remove a leader whose lease ran out (river_leader.sql LeaderDeleteExpired).
DELETE FROM river_leader WHERE expires_at < now();

-- name: resign
-- Give up the leadership (river_leader.sql LeaderResign), then tell River's electors
-- (internal/leadership/elector.go: river_leadership, action resigned).
WITH resigned AS (
    DELETE FROM river_leader WHERE leader_id = %(client)s RETURNING leader_id
)
SELECT pg_notify(%(leadership_channel)s,
                 json_build_object('action', 'resigned', 'leader_id', leader_id)::text)
FROM resigned;

-- name: job_counts
-- The demo's jobs per state (the headless summary).
SELECT state::text AS state, count(*) AS n
FROM river_job
WHERE metadata @> %(mark)s::jsonb
GROUP BY 1;
