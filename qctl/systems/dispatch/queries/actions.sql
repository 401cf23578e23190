-- qctl's writes to a dispatch database, each transcribed from the dispatch v0.1.0 code
-- named above it, with the state predicate that code checks in Go made part of the
-- statement (so a worker's concurrent claim cannot be overwritten).

-- name: cancel_job
-- Cancel a pending or retrying job (api/job_handler.go cancelJob).
-- dispatch reads the job, checks the state in Go and writes the whole row back by id
-- (UpdateJob): a worker's dequeue between the two would be overwritten, and the job run
-- after all while marked cancelled. Here the check is the UPDATE's predicate, and only
-- the columns cancelJob changes are written (state, completed_at, updated_at).
UPDATE dispatch_jobs
SET state = 'cancelled', completed_at = now(), updated_at = now()
WHERE id = %(id)s AND state IN ('pending', 'retrying')
RETURNING id, state, completed_at;

-- name: claim_dlq
-- Mark a DLQ entry replayed, once (store/postgres/dlq.go ReplayDLQ sets replayed_at).
-- dispatch's replay (dlq/replay.go) enqueues first and marks after, and never checks
-- replayed_at: two replays of one entry enqueue the job twice. Claiming first, in the
-- transaction that enqueues, makes a replay happen once.
UPDATE dispatch_dlq
SET replayed_at = now()
WHERE id = %(id)s AND replayed_at IS NULL
RETURNING id, job_id, job_name, queue, payload, max_retries, scope_app_id, scope_org_id,
          replayed_at;

-- name: enqueue_replay
-- The job a DLQ replay enqueues (dlq/replay.go Replay, written by EnqueueJob).
-- Replay builds the job from the entry alone: a fresh id, pending, due now, the
-- entry's name, queue, payload, max_retries and scope; priority, retry_count and
-- timeout are Go's zero values. store/postgres/models.go writes absent strings as ''
-- and the zero worker id as its text.
INSERT INTO dispatch_jobs (
    id, name, queue, payload, state, priority, max_retries, retry_count, last_error,
    scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
    heartbeat_at, timeout, created_at, updated_at
) VALUES (
    %(id)s, %(name)s, %(queue)s, %(payload)s, 'pending', 0, %(max_retries)s, 0, '',
    %(scope_app_id)s, %(scope_org_id)s, %(worker_id)s, now(), NULL, NULL, NULL, 0,
    now(), now()
)
RETURNING id, name, queue, state, max_retries, run_at;

-- name: count_purge
-- How many DLQ entries a purge would delete, and how many of them were never replayed.
SELECT count(*) AS n, count(*) FILTER (WHERE replayed_at IS NULL) AS unreplayed
FROM dispatch_dlq
WHERE failed_at < %(before)s;

-- name: purge_dlq
-- Delete DLQ entries that failed before a cutoff (store/postgres/dlq.go PurgeDLQ).
DELETE FROM dispatch_dlq WHERE failed_at < %(before)s
RETURNING replayed_at;

-- name: set_cron_enabled
-- Enable or disable a cron entry (api/cron_handler.go enableCron and disableCron).
-- dispatch reads the entry and writes the whole row back (UpdateCronEntry), which can
-- undo the scheduler's lock and last-run writes made in between. Here only enabled and
-- updated_at are written, and not while the scheduler holds the entry's fire lock
-- (store/postgres/cron.go AcquireCronLock): its fire ends with its own whole-row write
-- (cron/scheduler.go fireEntry), which would put the old enabled value back. A fire that
-- listed the entry before this write and locks it after can still do so; only dispatch's
-- own write could close that window.
UPDATE dispatch_cron_entries
SET enabled = %(enabled)s, updated_at = now()
WHERE id = %(id)s AND enabled <> %(enabled)s
  AND (locked_by IS NULL OR locked_until IS NULL OR locked_until < now())
RETURNING id, enabled;

-- name: delete_cron
-- Delete a cron entry (store/postgres/cron.go DeleteCron), not while it is firing.
DELETE FROM dispatch_cron_entries
WHERE id = %(id)s AND (locked_by IS NULL OR locked_until IS NULL OR locked_until < now())
RETURNING id;
