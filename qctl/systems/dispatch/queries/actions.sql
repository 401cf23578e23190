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

-- name: enqueue_job
-- A job qctl enqueues for dispatch: a DLQ replay's (dlq/replay.go Replay) or a cron
-- entry's run now (what cron/scheduler.go fireEntry enqueues, through engine/engine.go
-- EnqueueRaw), as
-- store/postgres/job.go EnqueueJob writes it.
-- Pending, due now, priority 0, no retries yet; the caller gives the rest (a replay: the
-- entry's name, queue, payload, max_retries and scope, timeout Go's zero; a trigger:
-- EnqueueRaw's defaults). store/postgres/models.go writes absent strings as '' and the
-- zero worker id as its text.
INSERT INTO dispatch_jobs (
    id, name, queue, payload, state, priority, max_retries, retry_count, last_error,
    scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
    heartbeat_at, timeout, created_at, updated_at
) VALUES (
    %(id)s, %(name)s, %(queue)s, %(payload)s, 'pending', 0, %(max_retries)s, 0, '',
    %(scope_app_id)s, %(scope_org_id)s, %(worker_id)s, now(), NULL, NULL, NULL,
    %(timeout)s, now(), now()
)
RETURNING id, name, queue, state, max_retries, run_at;

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

-- name: cron_payload
-- A cron entry's payload, read where the trigger enqueues (the entry may have changed).
SELECT payload FROM dispatch_cron_entries WHERE id = %(id)s;

-- name: delete_dlq
-- Delete one DLQ entry (dispatch's own dlq/store.go only purges by age, PurgeDLQ).
DELETE FROM dispatch_dlq WHERE id = %(id)s RETURNING id;
