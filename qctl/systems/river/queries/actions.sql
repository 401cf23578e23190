-- qctl's writes to a River database, each with the effect of the River v0.51.2 query
-- named above it (riverdriver/riverpgxv5/internal/dbsqlc/*.sql), for a batch of ids at
-- once: the state River checks is the statement's own predicate, so a producer's fetch or
-- a worker's completion between qctl's plan and its write leaves that row alone.

-- name: lock_job
-- Wait for one job's row lock, holding no other (River's JobCancel and JobRetry lock one
-- job per statement): for a job a batch skipped because River's producer, completer or
-- scheduler held it, before the batch's statement runs again for that job alone.
SELECT id FROM river_job WHERE id = %(id)s FOR UPDATE;

-- name: gin_pending_limit
-- The rest of this transaction merges GIN pending lists of more than 512 kB (4 MB by
-- default): every row a batch rewrites adds its args and metadata to the pending lists of
-- river_job_args_index and river_job_metadata_index, and the insert that finds a list
-- over the limit merges all of it inside its own statement; under a smaller limit a
-- batch merges a little, often, instead of one batch holding its rows for a 4 MB merge.
SELECT set_config('gin_pending_list_limit', '512kB', true);

-- name: cancel_jobs
-- Cancel a batch of jobs (river_job.sql JobCancel): a job not yet finalized is locked;
-- one that is not running is finalized cancelled at once; a running one keeps its state
-- (its client's producer cancels its work context and River's completer then finalizes
-- it cancelled) and is notified on River's control topic, as JobCancel does for every job
-- it did not find finalized. Every one gets metadata.cancel_attempted_at, which tells the
-- rescuer not to rescue a job whose cancel was asked (maintenance/job_rescuer.go) and
-- the completer to cancel, not retry, a running job that then fails or snoozes
-- (JobSetStateIfRunningMany). The instant is written as Go's time.Time marshals it
-- (RFC 3339, UTC): the rescuer unmarshals it into one. Rows another transaction holds
-- are skipped, not waited for: River's completer (JobSetStateIfRunningMany) and
-- scheduler (JobSchedule) lock many jobs in an order of their own, and a batch waiting
-- on one of them while holding others deadlocks with it (seen beside a draining
-- producer); actions.py runs each skipped job again alone (lock_job).
WITH locked AS (
    SELECT id
    FROM river_job
    WHERE id = ANY(%(ids)s::bigint[])
      AND state NOT IN ('cancelled', 'completed', 'discarded')
      AND finalized_at IS NULL
    FOR UPDATE SKIP LOCKED
), updated AS (
    UPDATE river_job j
    SET state = CASE WHEN j.state = 'running' THEN j.state ELSE 'cancelled' END,
        finalized_at = CASE WHEN j.state = 'running' THEN j.finalized_at ELSE now() END,
        metadata = jsonb_set(
            j.metadata, ARRAY['cancel_attempted_at'],
            to_jsonb(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')),
            true
        )
    FROM locked
    WHERE j.id = locked.id
    RETURNING j.id, j.queue
)
SELECT id::text AS id,
       pg_notify(
           %(channel)s,
           json_build_object('action', 'cancel', 'job_id', id, 'queue', queue)::text
       ) AS notified
FROM updated;

-- name: retry_jobs
-- Make a batch of jobs available now (river_job.sql JobRetry): attempt kept,
-- max_attempts raised by one when the job spent them all, finalized_at cleared, a cancel
-- asked of an earlier attempt forgotten (metadata - 'cancel_attempted_at'). Never a
-- running job; an available one, which JobRetry leaves alone when its scheduled_at has
-- passed, and a pending one (waiting for what River Pro's workflows say) are passed
-- over by qctl's predicate. JobRetry fails with a unique violation where another job in
-- one of its unique states holds the retried job's unique key (river_job_unique_idx,
-- 006_bulk_unique.up.sql); here such a job is left as it is and returned as held, as is
-- the second of two jobs of the batch with one key. Locked rows are skipped as in
-- cancel_jobs.
WITH locked AS (
    SELECT id, unique_key, unique_states
    FROM river_job
    WHERE id = ANY(%(ids)s::bigint[])
    FOR UPDATE SKIP LOCKED
), held AS (
    SELECT l.id
    FROM locked l
    WHERE l.unique_key IS NOT NULL AND l.unique_states IS NOT NULL
      AND river_job_state_in_bitmask(l.unique_states, 'available')
      AND (
          EXISTS (
              SELECT 1 FROM river_job o
              WHERE o.unique_key = l.unique_key AND o.id <> l.id
                AND o.unique_states IS NOT NULL
                AND river_job_state_in_bitmask(o.unique_states, o.state)
          )
          OR EXISTS (SELECT 1 FROM locked e WHERE e.unique_key = l.unique_key AND e.id < l.id)
      )
), updated AS (
    UPDATE river_job j
    SET state = 'available',
        max_attempts = CASE WHEN j.attempt = j.max_attempts THEN j.max_attempts + 1
                            ELSE j.max_attempts END,
        finalized_at = NULL,
        metadata = j.metadata - 'cancel_attempted_at',
        scheduled_at = now()
    FROM locked
    WHERE j.id = locked.id
      AND j.id NOT IN (SELECT id FROM held)
      AND j.state IN ('scheduled', 'retryable', 'cancelled', 'completed', 'discarded')
    RETURNING j.id
)
SELECT id::text AS id, false AS held FROM updated
UNION ALL
SELECT id::text, true FROM held;

-- name: delete_jobs
-- Delete a batch of jobs (river_job.sql JobDeleteMany and JobDelete): never a running
-- job, and, as JobDeleteMany, not one another transaction holds locked (a producer
-- fetching it): it is counted under its state after the batch.
WITH doomed AS (
    SELECT id
    FROM river_job
    WHERE id = ANY(%(ids)s::bigint[]) AND state <> 'running'
    FOR UPDATE SKIP LOCKED
)
DELETE FROM river_job j
USING doomed
WHERE j.id = doomed.id
RETURNING j.id::text AS id;

-- name: job_targets_page
-- A page of the jobs a bulk verb's filter matches, ids and states only, newest first
-- after a cursor (reads.sql list_jobs without the columns a verb does not check).
-- Ordered by the column, not the text id the select names (a bare ORDER BY id would
-- sort the text: 999 before 3000, so the keyset would skip jobs).
SELECT id::text AS id, state::text AS state, kind
FROM river_job
WHERE state::text = ANY(%(states)s::text[])
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
  AND (%(priorities)s::int[] IS NULL OR priority = ANY(%(priorities)s::int[]))
  AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::varchar(255)[])
  AND {contains}
  AND (%(after_id)s::bigint IS NULL OR id < %(after_id)s::bigint)
ORDER BY river_job.id DESC
LIMIT %(limit)s;

-- name: job_targets
-- The current state of the given jobs that exist.
SELECT id::text AS id, state::text AS state, kind
FROM river_job
WHERE id = ANY(%(ids)s::bigint[]);

-- name: pause_queues
-- Pause a batch of queues (river_queue.sql QueuePause, then client.go
-- notifyQueuePauseOrResume's control notification {"action": "pause", "queue": ...}):
-- each producer of the queue stops fetching (producer.go handleControlNotification);
-- its running jobs finish. A queue already paused keeps its paused_at.
WITH paused AS (
    UPDATE river_queue
    SET paused_at = now(), updated_at = now()
    WHERE name = ANY(%(names)s::text[]) AND paused_at IS NULL
    RETURNING name
)
SELECT name AS id,
       pg_notify(%(channel)s, json_build_object('action', 'pause', 'queue', name)::text)
           AS notified
FROM paused;

-- name: resume_queues
-- Resume a batch of paused queues (river_queue.sql QueueResume, then the control
-- notification {"action": "resume", "queue": ...}): their producers fetch again.
WITH resumed AS (
    UPDATE river_queue
    SET paused_at = NULL, updated_at = now()
    WHERE name = ANY(%(names)s::text[]) AND paused_at IS NOT NULL
    RETURNING name
)
SELECT name AS id,
       pg_notify(%(channel)s, json_build_object('action', 'resume', 'queue', name)::text)
           AS notified
FROM resumed;

-- name: queue_targets_page
-- A page of the queues a bulk verb's filter matches (river_queue rows: a queue River
-- never worked has none, and River's QueuePause refuses it), by name after a cursor;
-- %(match)s as QueueNameList's: a part of the name, any case (taken literally).
SELECT name AS id, CASE WHEN paused_at IS NULL THEN 'active' ELSE 'paused' END AS state,
       '' AS kind
FROM river_queue
WHERE CASE WHEN paused_at IS NULL THEN 'active' ELSE 'paused' END = ANY(%(states)s::text[])
  AND (%(match)s::text IS NULL OR strpos(lower(name), lower(%(match)s::text)) > 0)
  AND (%(after)s::text IS NULL OR name > %(after)s::text)
ORDER BY name
LIMIT %(limit)s;

-- name: queue_targets
-- The given queues that have a river_queue row, each active or paused.
SELECT name AS id, CASE WHEN paused_at IS NULL THEN 'active' ELSE 'paused' END AS state,
       '' AS kind
FROM river_queue
WHERE name = ANY(%(names)s::text[]);

-- name: count_cleanable
-- What a vacuum would delete, per final state: the jobs River's JobCleaner deletes
-- (river_job.sql JobDeleteBefore), finalized in %(states)s before %(before)s. Each
-- state is one range of river_job_state_and_finalized_at_index (state, finalized_at).
SELECT state::text AS state, count(*) AS n
FROM river_job
WHERE state::text = ANY(%(states)s::text[])
  AND finalized_at IS NOT NULL
  AND finalized_at < %(before)s
GROUP BY 1;

-- name: clean_jobs
-- Delete a batch of the jobs River's JobCleaner deletes (river_job.sql JobDeleteBefore:
-- finalized cancelled, completed or discarded before their horizon, lowest ids first,
-- at most a batch per statement), one horizon for the states asked. The batch is picked
-- in an ARRAY(...) sub-select, which runs once (an `id IN (SELECT ... LIMIT n)` may be
-- planned as a semi join whose sub-select runs again); the predicate is checked again on
-- the rows deleted, so a job retried since (JobRetry clears finalized_at) stays.
DELETE FROM river_job
WHERE id = ANY(ARRAY(
    SELECT id FROM river_job
    WHERE state::text = ANY(%(states)s::text[])
      AND finalized_at IS NOT NULL
      AND finalized_at < %(before)s
    ORDER BY id
    LIMIT %(batch)s
))
  AND state::text = ANY(%(states)s::text[])
  AND finalized_at < %(before)s;
