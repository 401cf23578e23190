-- qctl's writes to a hopper database, each transcribed from the hopper code named above
-- it (driver/internal/pgsql at schema version 8), unqualified: the connection's
-- search_path is the hopper schema. Notifications are sent inside the write's
-- transaction, so, as hopper's, they are delivered when it commits.

-- name: notify
-- One notification, delivered when the transaction commits (jobs.go NotifySQL).
SELECT pg_notify(%(channel)s, %(payload)s);

-- name: pause_queues
-- Pause a batch of queues as QueuePause does to each (cluster.go setPaused): the row
-- created where hopper has none, paused_at set, then NOTIFY hopper_control
-- 'pause:<queue>' (control.go): its clients stop claiming; running jobs finish. A queue
-- already paused is left alone (it keeps its paused_at), and not returned.
WITH paused AS (
    INSERT INTO hopper_queues (name, paused_at)
    SELECT n, now() FROM unnest(%(names)s::text[]) AS n
    ON CONFLICT (name) DO UPDATE SET paused_at = now(), updated_at = now()
    WHERE hopper_queues.paused_at IS NULL
    RETURNING name
)
SELECT name AS id, pg_notify('hopper_control', 'pause:' || name) AS notified FROM paused;

-- name: resume_queues
-- Resume a batch of paused queues as QueueResume does to each (cluster.go setPaused),
-- then NOTIFY hopper_control 'resume:<queue>'. A queue not paused is left alone.
WITH resumed AS (
    UPDATE hopper_queues SET paused_at = NULL, updated_at = now()
    WHERE name = ANY(%(names)s::text[]) AND paused_at IS NOT NULL
    RETURNING name
)
SELECT name AS id, pg_notify('hopper_control', 'resume:' || name) AS notified FROM resumed;

-- name: queue_targets_page
-- A page of the queues a bulk verb's filter matches: those hopper has a row for or
-- live jobs in (as cluster.go statsSQL lists them), by name after a cursor; %(match)s:
-- a part of the name, any case (taken literally).
WITH names AS (SELECT name FROM hopper_queues UNION SELECT queue FROM hopper_jobs),
found AS (
    SELECT n.name, CASE WHEN q.paused_at IS NULL THEN 'active' ELSE 'paused' END AS state,
           CASE WHEN q.name IS NULL THEN 'no queue row yet' ELSE '' END AS kind
    FROM names n LEFT JOIN hopper_queues q ON q.name = n.name
)
SELECT name AS id, state, kind FROM found
WHERE state = ANY(%(states)s::text[])
  AND (%(match)s::text IS NULL OR strpos(lower(name), lower(%(match)s::text)) > 0)
  AND (%(after)s::text IS NULL OR name > %(after)s::text)
ORDER BY name
LIMIT %(limit)s;

-- name: queue_targets
-- The given queues hopper knows (a row, or jobs in it, live or finished: the claim and
-- history queue indexes), each active or paused: one without a row is active (its
-- QueuePause creates the row). A name hopper knows no way is left out: a typo, not a
-- queue to create.
SELECT n AS id, CASE WHEN q.paused_at IS NULL THEN 'active' ELSE 'paused' END AS state,
       CASE WHEN q.name IS NULL THEN 'no queue row yet' ELSE '' END AS kind
FROM unnest(%(names)s::text[]) AS n LEFT JOIN hopper_queues q ON q.name = n
WHERE q.name IS NOT NULL
   OR EXISTS (SELECT 1 FROM hopper_jobs j WHERE j.queue = n)
   OR EXISTS (SELECT 1 FROM hopper_job_history h WHERE h.queue = n);

-- name: queue_set_limits
-- Replace a queue's cluster-wide limits, creating its row if needed (cluster.go
-- QueueSetLimits): each limit NULL where not given; the rate bucket's tokens are reset
-- when the rate changes. Sent with NOTIFY hopper_control 'limit:<queue>'.
INSERT INTO hopper_queues (name, global_limit, rate_per_sec, rate_burst, partition_limit, aging_seconds, tokens, refilled_at)
VALUES (%(name)s, %(global_limit)s, %(rate_per_sec)s, %(rate_burst)s, %(partition_limit)s, %(aging_seconds)s, NULL, NULL)
ON CONFLICT (name) DO UPDATE SET global_limit = EXCLUDED.global_limit, rate_per_sec = EXCLUDED.rate_per_sec,
  rate_burst = EXCLUDED.rate_burst, partition_limit = EXCLUDED.partition_limit, aging_seconds = EXCLUDED.aging_seconds,
  tokens = CASE WHEN hopper_queues.rate_per_sec IS DISTINCT FROM EXCLUDED.rate_per_sec THEN NULL ELSE hopper_queues.tokens END,
  updated_at = now();

-- name: stream_first_at
-- The first event appended at or after an instant, in log order (stream.go
-- StreamConsumerSeek): a seek to a time resumes just before it.
SELECT xid::text AS xid, seq FROM hopper_stream_events
WHERE created_at >= %(at)s
ORDER BY xid, seq
LIMIT 1;

-- name: stream_seek_latest
-- Skip a consumer past everything committed by now (stream.go StreamConsumerSeek,
-- Latest); transactions still running are delivered when they commit.
UPDATE hopper_stream_consumers SET seen = pg_current_snapshot(), reading = NULL, xid = '0', seq = 0
WHERE name = %(name)s
RETURNING name;

-- name: stream_seek_snapshot
-- Rewind a consumer to a snapshot and a cursor (stream.go StreamConsumerSeek): the
-- earliest ('3:3:', which sees no transaction, cursor 0:0), or "x:x:" with the cursor at
-- (x, seq), which resumes the log at transaction x after event seq.
UPDATE hopper_stream_consumers
SET seen = %(snapshot)s::pg_snapshot, reading = NULL, xid = %(xid)s::text::xid8, seq = %(seq)s
WHERE name = %(name)s
RETURNING name;

-- name: targets_page
-- A page of the jobs a bulk verb's filter matches, ids and states only, newest first
-- after a cursor: reads.sql list_jobs without the columns a verb does not check (each
-- part walks its id index backwards; a part the states exclude, or whose rows hold none
-- of the queues, is not walked).
(SELECT id, state::text AS state, kind FROM hopper_jobs
 WHERE %(live)s
   AND state = ANY(%(states)s::hopper_job_state[])
   AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
   AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
   AND (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
 ORDER BY id DESC LIMIT %(limit)s)
UNION ALL
(SELECT id, state::text AS state, kind FROM hopper_job_history_completed
 WHERE %(completed)s
   AND state = ANY(%(states)s::hopper_job_state[])
   AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
   AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
   AND (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
   AND (%(queues)s::text[] IS NULL
        OR EXISTS (SELECT 1 FROM hopper_job_history_completed q WHERE q.queue = ANY(%(queues)s::text[])))
 ORDER BY id DESC LIMIT %(limit)s)
UNION ALL
(SELECT id, state::text AS state, kind FROM hopper_job_history_failed
 WHERE %(failed)s
   AND state = ANY(%(states)s::hopper_job_state[])
   AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
   AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
   AND (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
   AND (%(queues)s::text[] IS NULL
        OR EXISTS (SELECT 1 FROM hopper_job_history_failed q WHERE q.queue = ANY(%(queues)s::text[])))
 ORDER BY id DESC LIMIT %(limit)s)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: target_states
-- The current state of the given jobs that exist, live or finalized.
SELECT id, state::text AS state, kind FROM hopper_jobs WHERE id = ANY(%(ids)s::uuid[])
UNION ALL
SELECT id, state::text AS state, kind FROM hopper_job_history WHERE id = ANY(%(ids)s::uuid[]);

-- name: cancel_waiting
-- Finalize a batch of waiting jobs as cancelled with hopper's whole finalize tail (jobs.go
-- jobCancelWaitingSQL, flow.go finishedColumns, appendErrorSQL and finalizeTailSQL):
-- each job moves to history with an error entry "hopper: cancelled", and
-- fragments.sql's finalize_tail settles their workflow dependents, batches, callbacks and
-- an awaited job's done notice. The running predicate fences the delete: a job a
-- client claimed is never finalized here (cancel_running asks its client instead).
WITH RECURSIVE finished AS (
  DELETE FROM hopper_jobs j WHERE j.id = ANY(%(ids)s::uuid[]) AND j.state <> 'running'
  RETURNING j.id, j.seq, j.kind, j.queue, j.priority, j.attempt, j.max_attempts, j.scheduled_at,
    j.attempted_at, j.attempted_by, j.args, j.metadata,
    j.errors || jsonb_build_object('at', now(), 'attempt', j.attempt, 'error', 'hopper: cancelled') AS errors,
    j.unique_key, j.ordering_key, j.partition_key, j.batch_id, j.expires_at, j.cancel_requested_at,
    j.await, j.created_at, NULL::jsonb AS output, true AS archive, 'cancelled'::text AS final_state,
    CASE WHEN j.await THEN pg_notify(%(done)s, j.id::text) END AS notified
),
{finalize_tail}
SELECT f.id FROM finished f;

-- name: cancel_running
-- Ask the clients of a batch's running jobs to cancel them (jobs.go jobCancelRunningSQL,
-- then NOTIFY hopper_control 'cancel:<id>'): only cancel_requested_at is set; the client
-- that holds a job finalizes it, so nothing finalizes a job a live client holds.
WITH asked AS (
  UPDATE hopper_jobs SET cancel_requested_at = coalesce(cancel_requested_at, now())
  WHERE id = ANY(%(ids)s::uuid[]) AND state = 'running'
  RETURNING id
)
SELECT id, pg_notify('hopper_control', 'cancel:' || id::text) AS notified FROM asked;

-- name: retry_live
-- Make a batch's waiting jobs available now (jobs.go jobRetryLiveSQL). qctl also leaves
-- a pending job alone (hopper's SQL would run a workflow step before its dependencies
-- finish), and a running one (ErrJobRunning).
UPDATE hopper_jobs SET state = 'available', scheduled_at = now()
WHERE id = ANY(%(ids)s::uuid[]) AND state NOT IN ('running', 'pending')
RETURNING id, queue;

-- name: unique_held
-- Which finalized jobs of a batch a live job's unique key blocks (jobs.go
-- jobRetryHistorySQL fails with ErrUniqueConflict on them): they stay in history.
SELECT h.id FROM hopper_job_history h
WHERE h.id = ANY(%(ids)s::uuid[]) AND h.unique_key IS NOT NULL
  AND EXISTS (SELECT 1 FROM hopper_jobs l WHERE l.kind = h.kind AND l.unique_key = h.unique_key);

-- name: retry_history
-- Move a batch's finalized jobs back to the live table, available now, with their attempt
-- counts and errors (jobs.go jobRetryHistorySQL): a fresh seq, as a new insert would get,
-- and one more attempt allowed where they had run out; those unique_held named stay.
WITH h AS (
  DELETE FROM hopper_job_history WHERE id = ANY(%(ids)s::uuid[]) AND NOT id = ANY(%(held)s::uuid[])
  RETURNING *
)
INSERT INTO hopper_jobs (id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
  args, metadata, errors, unique_key, ordering_key, partition_key, batch_id, await, created_at)
SELECT id, kind, queue, 'available', priority, attempt,
  CASE WHEN attempt >= max_attempts THEN attempt + 1 ELSE max_attempts END, now(), args, metadata,
  errors, unique_key, ordering_key, partition_key, batch_id, await, created_at
FROM h
RETURNING id, queue;

-- name: batches_counted
-- The batches (a few) that counted finalized jobs of a retry's batch as finished.
SELECT DISTINCT batch_id FROM hopper_job_history
WHERE id = ANY(%(ids)s::uuid[]) AND batch_id IS NOT NULL
LIMIT 5;

-- name: notify_queues
-- One hopper_insert notification per queue jobs were made available in (control.go
-- JobRetry: the client's notifier announces each retried job's queue).
SELECT pg_notify('hopper_insert', q) FROM unnest(%(queues)s::text[]) AS q;
