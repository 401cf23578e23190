-- Maintenance passes (azync's driver/azyncpgx/store_maintenance.go): each bulk statement handles one batch of
-- at most %(batch)s rows and the caller repeats it until a batch comes back short.
-- {where} is the fixed source/kind fragment of listing.kind_clause.

-- name: promote_due
-- One batch of due scheduled jobs of the given kinds made pending.
-- SKIP LOCKED: concurrent promoters split disjoint batches.
UPDATE azync_jobs j SET state = 'pending', updated_at = now()
FROM (
    SELECT id FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s::text[])
      AND state = 'scheduled' AND run_at <= now()
    ORDER BY run_at, id
    FOR UPDATE SKIP LOCKED
    LIMIT %(batch)s
) picked
WHERE j.id = picked.id

-- name: reap_expired
-- One batch of expired leases taken back: to pending, or to dead past the reap budget.
-- The update re-checks the state and the same lease token, so a job re-leased
-- between the pick and the update is left alone. Crossing the reap budget kills the
-- job and records an attempt in the same statement.
WITH expired AS (
    SELECT id, lease_token FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s::text[])
      AND state = 'active' AND lease_until < now()
    ORDER BY lease_until
    FOR UPDATE SKIP LOCKED
    LIMIT %(batch)s
), upd AS (
    UPDATE azync_jobs j SET
        state = CASE WHEN j.reap_count + 1 >= %(max_reaps)s THEN 'dead' ELSE 'pending' END,
        reap_count = j.reap_count + 1,
        lease_until = NULL,
        lease_token = NULL,
        last_error = CASE WHEN j.reap_count + 1 >= %(max_reaps)s
                          THEN 'lease expired ' || (j.reap_count + 1) || ' times'
                          ELSE j.last_error END,
        failed_at = CASE WHEN j.reap_count + 1 >= %(max_reaps)s THEN now() ELSE j.failed_at END,
        updated_at = now()
    FROM expired
    WHERE j.id = expired.id AND j.state = 'active'
      AND j.lease_token IS NOT DISTINCT FROM expired.lease_token
    RETURNING j.id, j.kind, j.attempt, j.last_error, j.state = 'dead' AS died
), attempt_row AS (
    INSERT INTO azync_job_attempts (job_id, attempt, error)
    SELECT id, attempt, last_error FROM upd WHERE died
)
SELECT kind, died FROM upd

-- name: vacuum_stats
-- The daily stats rows of one source older than the retention deleted.
DELETE FROM azync_stats_daily WHERE source = %(source)s AND day < CURRENT_DATE - %(days)s::int

-- name: vacuum_idempotency
-- The expired idempotency keys of one source deleted.
DELETE FROM azync_idempotency_keys WHERE source = %(source)s AND expires_at < now()

-- name: vacuum_completed
-- One batch of succeeded queue and event jobs older than the retention deleted.
-- DAG and workflow jobs are exempt (their owners vacuum them); the predicate matches
-- azync_jobs_succeeded_vacuum_idx so each batch is an index scan, in its order
-- (completed_at, then id) after the previous batch's last key (the %(after_*)s, NULL
-- for the first), so no batch walks again over the entries of the rows already deleted
-- (see admin.sql's retry_all_dead). Returns how many rows the batch picked (a row a
-- concurrent vacuum deleted first is picked but not deleted: the walk goes on), how many
-- it deleted, and its last key.
WITH picked AS (
    SELECT id, completed_at FROM azync_jobs
    WHERE source = %(source)s AND state = 'succeeded'
      AND dag_id IS NULL AND run_id IS NULL
      AND completed_at < now() - make_interval(secs => %(retention)s)
      AND (completed_at, id) > (COALESCE(%(after_completed_at)s, '-infinity'::timestamptz),
                                COALESCE(%(after_id)s, '00000000-0000-0000-0000-000000000000'::uuid))
    ORDER BY completed_at, id
    LIMIT %(batch)s
), batch AS (
    DELETE FROM azync_jobs j USING picked WHERE j.id = picked.id RETURNING j.id
)
SELECT COUNT(*) OVER () AS picked, (SELECT COUNT(*) FROM batch) AS n, completed_at, id
FROM picked
ORDER BY completed_at DESC, id DESC LIMIT 1

-- name: vacuum_dead
-- One batch of the dead jobs matching {where} that died before the cutoff, deleted.
-- Age counts from the death (failed_at), the enqueue only where a row has no failed_at.
-- A task of a DAG that is not terminal stays: a suspended saga still needs its dead
-- task, and `dags retry` would settle the DAG without running a task that is gone.
DELETE FROM azync_jobs WHERE id IN (
    SELECT j.id FROM azync_jobs j
    WHERE {where} AND j.state = 'dead'
      AND COALESCE(j.failed_at, j.enqueued_at) < now() - make_interval(secs => %(older_than)s)
      AND (j.dag_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM azync_dags d
          WHERE d.id = j.dag_id AND d.state NOT IN ('succeeded', 'failed', 'cancelled')))
    LIMIT %(batch)s
)

-- name: nuke_jobs
-- Every job of one source deleted (their attempt rows cascade).
DELETE FROM azync_jobs WHERE source = %(source)s

-- name: nuke_stats
-- Every daily stats row of one source deleted.
DELETE FROM azync_stats_daily WHERE source = %(source)s

-- name: nuke_keys
-- Every idempotency key of one source deleted.
DELETE FROM azync_idempotency_keys WHERE source = %(source)s

-- name: analyze_jobs
-- Refresh the planner's statistics of azync_jobs (the console's estimated counts), waiting at most 200 ms for its lock.
SET LOCAL lock_timeout = '200ms'; ANALYZE azync_jobs
