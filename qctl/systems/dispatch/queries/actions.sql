-- qctl's writes to a dispatch database, each transcribed from the dispatch v0.1.0 code
-- named above it, with the state predicate that code checks in Go made part of the
-- statement (so a worker's concurrent claim cannot be overwritten).

-- name: cancel_jobs
-- Cancel a batch of pending or retrying jobs (api/job_handler.go cancelJob).
-- dispatch reads the job, checks the state in Go and writes the whole row back by id
-- (UpdateJob): a worker's dequeue between the two would be overwritten, and the job run
-- after all while marked cancelled. Here the check is the UPDATE's predicate, and only
-- the columns cancelJob changes are written (state, completed_at, updated_at).
UPDATE dispatch_jobs
SET state = 'cancelled', completed_at = now(), updated_at = now()
WHERE id = ANY(%(ids)s::text[]) AND state IN ('pending', 'retrying')
RETURNING id;

-- name: replay_dlq
-- Replay a batch of DLQ entries, each once: marked replayed (store/postgres/dlq.go
-- ReplayDLQ sets replayed_at) and enqueued again as a new pending job (dlq/replay.go
-- Replay), in one statement. dispatch's replay enqueues first and marks after, and never
-- checks replayed_at: two replays of one entry enqueue the job twice. Claiming in the
-- statement that enqueues makes a replay happen once. The new jobs are what
-- store/postgres/job.go EnqueueJob writes for dlq/replay.go: the entry's name, queue,
-- payload, max_retries and scope; pending, due now, priority 0, no retries yet, timeout
-- Go's zero, absent strings as ''. Each claimed entry takes the new id of its position
-- (%(new_ids)s has one per entry of the batch).
WITH claimed AS (
    UPDATE dispatch_dlq
    SET replayed_at = now()
    WHERE id = ANY(%(ids)s::text[]) AND replayed_at IS NULL
    RETURNING id, job_name, queue, payload, max_retries, scope_app_id, scope_org_id
), numbered AS (
    SELECT c.*, row_number() OVER (ORDER BY c.id) AS n FROM claimed c
), enqueued AS (
    INSERT INTO dispatch_jobs (
        id, name, queue, payload, state, priority, max_retries, retry_count, last_error,
        scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
        heartbeat_at, timeout, created_at, updated_at
    )
    SELECT (%(new_ids)s::text[])[n], job_name, queue, payload, 'pending', 0, max_retries, 0, '',
           scope_app_id, scope_org_id, %(worker_id)s, now(), NULL, NULL, NULL, 0, now(), now()
    FROM numbered
    RETURNING 1
)
SELECT id FROM numbered;

-- name: wake
-- Wake dispatch's workers: what EnqueueJob sends after each enqueue from dispatch v1.5.3
-- (store/postgres/wake.go notifyWake, channel dispatch_jobs_wake, empty payload).
SELECT pg_notify('dispatch_jobs_wake', '') AS woken;

-- name: count_purge
-- How many DLQ entries a purge would delete, and how many of them were never replayed.
SELECT count(*) AS n, count(*) FILTER (WHERE replayed_at IS NULL) AS unreplayed
FROM dispatch_dlq
WHERE failed_at < %(before)s;

-- name: purge_dlq
-- Delete DLQ entries that failed before a cutoff (store/postgres/dlq.go PurgeDLQ).
DELETE FROM dispatch_dlq WHERE failed_at < %(before)s
RETURNING replayed_at;

-- name: disable_cron
-- Disable a batch of cron entries (api/cron_handler.go disableCron), and hold each
-- entry's fire lock for a while in qctl's name. dispatch's disableCron reads the entry
-- and writes the whole row back (UpdateCronEntry); here only enabled, the lock and
-- updated_at are written. The lock is what makes the disable last: the scheduler's tick
-- lists the entries (cron/scheduler.go tick; at dispatch main 6f7dda7 a cached list,
-- re-read every 30 s by default), then fires each one its copy says is enabled and due:
-- it takes the entry's lock (store/postgres/cron.go AcquireCronLock: only a lock that
-- is free, expired or its own), enqueues, and ends by writing back the whole entry it
-- read (fireEntry: UpdateCronEntry), enabled included. A fire from a copy read before
-- this write finds the lock taken and does nothing (fireEntry returns when the lock is
-- not acquired); a read after it finds the entry disabled. Not while the scheduler
-- holds the lock itself: its fire is under way and would write the entry back.
UPDATE dispatch_cron_entries
SET enabled = false, locked_by = %(hold_by)s, locked_until = now() + %(hold)s,
    updated_at = now()
WHERE id = ANY(%(ids)s::text[]) AND enabled
  AND (locked_by IS NULL OR locked_until IS NULL OR locked_until < now()
       OR locked_by = %(hold_by)s)
RETURNING id;

-- name: enable_cron
-- Enable a batch of cron entries (api/cron_handler.go enableCron): only enabled and
-- updated_at are written, and the lock a qctl disable holds (disable_cron) is released,
-- so the scheduler fires the entry at its next due time. Not while the scheduler holds
-- the lock: its fire would write back the entry it read.
UPDATE dispatch_cron_entries
SET enabled = true, updated_at = now(),
    locked_by = CASE WHEN locked_by = %(hold_by)s THEN NULL ELSE locked_by END,
    locked_until = CASE WHEN locked_by = %(hold_by)s THEN NULL ELSE locked_until END
WHERE id = ANY(%(ids)s::text[]) AND NOT enabled
  AND (locked_by IS NULL OR locked_until IS NULL OR locked_until < now()
       OR locked_by = %(hold_by)s)
RETURNING id;

-- name: delete_cron
-- Delete a batch of cron entries (store/postgres/cron.go DeleteCron), not while it is
-- firing (a lock a qctl disable holds is no fire).
DELETE FROM dispatch_cron_entries
WHERE id = ANY(%(ids)s::text[])
  AND (locked_by IS NULL OR locked_until IS NULL OR locked_until < now()
       OR locked_by = %(hold_by)s)
RETURNING id;

-- name: cron_next_runs
-- The planned entries' next scheduled fires, for a disable's plan: what it stops.
SELECT name, next_run_at FROM dispatch_cron_entries
WHERE id = ANY(%(ids)s::text[]) AND enabled
ORDER BY next_run_at NULLS LAST, name;

-- name: count_vacuum
-- What a vacuum would delete: finished jobs, acked events and replayed DLQ entries from
-- before a cutoff.
SELECT
    (SELECT count(*) FROM dispatch_jobs
     WHERE state IN ('completed', 'cancelled') AND completed_at < %(before)s) AS jobs,
    (SELECT count(*) FROM dispatch_events
     WHERE acked AND created_at < %(before)s) AS events,
    (SELECT count(*) FROM dispatch_dlq WHERE replayed_at < %(before)s) AS dlq;

-- name: vacuum_jobs
-- Delete up to a batch of jobs that finished (completed or cancelled) before a cutoff.
-- dispatch keeps every job row forever (it has no retention); these states are final in
-- its code (nothing moves a job out of them), and the predicate is checked again on the
-- rows it deletes. Failed jobs stay: their DLQ entries and `jobs retry` refer to them.
-- Each vacuum statement picks its batch in an ARRAY(...) sub-select, which runs once:
-- `id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)` may be planned as a semi join that
-- runs the sub-select again for each row, each run skipping the rows just deleted, so
-- one "batch" deleted every matching row (seen on a small table).
DELETE FROM dispatch_jobs
WHERE id = ANY(ARRAY(
    SELECT id FROM dispatch_jobs
    WHERE state IN ('completed', 'cancelled') AND completed_at < %(before)s
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
))
  AND state IN ('completed', 'cancelled') AND completed_at < %(before)s;

-- name: vacuum_events
-- Delete up to a batch of events that were acknowledged, created before a cutoff
-- (store/postgres/event.go AckEvent sets acked; nothing reads an acked event again).
DELETE FROM dispatch_events
WHERE id = ANY(ARRAY(
    SELECT id FROM dispatch_events WHERE acked AND created_at < %(before)s
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
));

-- name: vacuum_dlq
-- Delete up to a batch of DLQ entries replayed before a cutoff (their jobs live on as
-- new jobs; an entry never replayed is only deleted by `dlq purge`).
DELETE FROM dispatch_dlq
WHERE id = ANY(ARRAY(
    SELECT id FROM dispatch_dlq WHERE replayed_at < %(before)s
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
));

-- name: trigger_cron
-- Run a batch of cron entries' jobs now: the job a scheduled fire enqueues
-- (cron/scheduler.go fireEntry: engine/engine.go EnqueueRaw with the entry's job name,
-- payload and queue override, else "default"; EnqueueRaw's defaults from
-- job/options.go: three retries, a five-minute timeout), read from each entry as it is
-- now, the schedule untouched, a disabled entry too. The scheduler's fire carries no
-- scope, so neither does this. A NULL payload (the column allows it) would fail
-- dispatch_jobs' NOT NULL: dispatch's own trigger errors there; qctl enqueues the empty
-- payload the handler would have been given. Each entry takes the new id of its
-- position (%(new_ids)s has one per entry of the batch).
WITH entries AS (
    SELECT e.*, row_number() OVER (ORDER BY e.id) AS n
    FROM dispatch_cron_entries e WHERE e.id = ANY(%(ids)s::text[])
), enqueued AS (
    INSERT INTO dispatch_jobs (
        id, name, queue, payload, state, priority, max_retries, retry_count, last_error,
        scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
        heartbeat_at, timeout, created_at, updated_at
    )
    SELECT (%(new_ids)s::text[])[n], job_name, coalesce(nullif(queue, ''), 'default'),
           coalesce(payload, ''::bytea), 'pending', 0, 3, 0, '', '', '', %(worker_id)s, now(),
           NULL, NULL, NULL, 300000000000, now(), now()
    FROM entries
    RETURNING 1
)
SELECT id FROM entries;

-- name: delete_dlq
-- Delete a batch of DLQ entries (dlq/store.go DeleteDLQ).
DELETE FROM dispatch_dlq WHERE id = ANY(%(ids)s::text[]) RETURNING id;

-- name: job_targets_page
-- A page of the jobs a bulk verb's filter matches, ids and states only, newest first
-- after a cursor (reads.sql list_jobs without the columns a verb does not check).
SELECT id, state, name FROM dispatch_jobs
WHERE state = ANY(%(states)s::text[])
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(names)s::text[] IS NULL OR name = ANY(%(names)s::text[]))
  AND (%(after)s::text IS NULL OR id < %(after)s::text)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: job_targets
-- The current state of the given jobs that exist.
SELECT id, state, name FROM dispatch_jobs WHERE id = ANY(%(ids)s::text[]);

-- name: dlq_targets_page
-- A page of the DLQ entries a bulk verb's filter matches, newest first after a cursor;
-- an entry's state is whether it was replayed.
SELECT id, CASE WHEN replayed_at IS NULL THEN 'waiting' ELSE 'replayed' END AS state,
       job_name AS name
FROM dispatch_dlq
WHERE CASE WHEN replayed_at IS NULL THEN 'waiting' ELSE 'replayed' END = ANY(%(states)s::text[])
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(names)s::text[] IS NULL OR job_name = ANY(%(names)s::text[]))
  AND (%(after)s::text IS NULL OR id < %(after)s::text)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: dlq_targets
-- The given DLQ entries that exist, each waiting or replayed.
SELECT id, CASE WHEN replayed_at IS NULL THEN 'waiting' ELSE 'replayed' END AS state,
       job_name AS name
FROM dispatch_dlq WHERE id = ANY(%(ids)s::text[]);

-- name: cron_targets
-- The given cron entries that exist, each enabled, disabled or firing (the scheduler
-- holds its fire lock, store/postgres/cron.go AcquireCronLock; a qctl disable's hold
-- is no fire).
SELECT id,
       CASE WHEN locked_by <> %(hold_by)s AND locked_until > now() THEN 'firing'
            WHEN enabled THEN 'enabled' ELSE 'disabled' END AS state,
       name
FROM dispatch_cron_entries WHERE id = ANY(%(ids)s::text[]);

-- name: cron_targets_page
-- Every cron entry of the given job names or queues, by id after a cursor.
SELECT id, state, name FROM (
    SELECT id, name, job_name, queue,
           CASE WHEN locked_by <> %(hold_by)s AND locked_until > now() THEN 'firing'
                WHEN enabled THEN 'enabled' ELSE 'disabled' END AS state
    FROM dispatch_cron_entries
) e
WHERE state = ANY(%(states)s::text[])
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(names)s::text[] IS NULL OR job_name = ANY(%(names)s::text[]))
  AND (%(after)s::text IS NULL OR id < %(after)s::text)
ORDER BY id DESC
LIMIT %(limit)s;
