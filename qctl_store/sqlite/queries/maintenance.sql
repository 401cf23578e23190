-- Maintenance sweeps (SQLite). Bulk statements act on at most :batch rows; the caller
-- repeats them, one short transaction per batch, until a batch comes back short.
-- Kind lists arrive as a JSON array (:kinds) so the statements stay static.

-- name: promote_due
-- One batch of due scheduled jobs of the given kinds made pending.
UPDATE azync_jobs SET state = 'pending', updated_at = :now
WHERE id IN (
    SELECT id FROM azync_jobs
    WHERE source = :source AND kind IN (SELECT value FROM json_each(:kinds))
      AND state = 'scheduled' AND run_at <= :now
    ORDER BY run_at, id
    LIMIT :batch
)

-- name: reap_expired
-- An expired lease goes back to pending, or to dead once it expired max_reaps times.
UPDATE azync_jobs SET
    state = CASE WHEN reap_count + 1 >= :max_reaps THEN 'dead' ELSE 'pending' END,
    reap_count = reap_count + 1,
    lease_until = NULL,
    lease_token = NULL,
    last_error = CASE WHEN reap_count + 1 >= :max_reaps
                      THEN 'lease expired ' || (reap_count + 1) || ' times'
                      ELSE last_error END,
    failed_at = CASE WHEN reap_count + 1 >= :max_reaps THEN :now ELSE failed_at END,
    updated_at = :now
WHERE id IN (
    SELECT id FROM azync_jobs
    WHERE source = :source AND kind IN (SELECT value FROM json_each(:kinds))
      AND state = 'active' AND lease_until < :now
    ORDER BY lease_until
    LIMIT :batch
)
RETURNING id, kind, attempt, last_error, state = 'dead' AS died

-- name: vacuum_stats
-- The daily stats rows of one source older than the retention deleted.
DELETE FROM azync_stats_daily WHERE source = :source AND day < :cutoff_day

-- name: vacuum_idempotency
-- The expired idempotency keys of one source deleted.
DELETE FROM azync_idempotency_keys WHERE source = :source AND expires_at < :now

-- name: vacuum_completed
-- One batch of succeeded queue and event jobs older than the retention deleted.
-- DAG tasks and workflow jobs are exempt: their engines vacuum them with the header.
DELETE FROM azync_jobs WHERE id IN (
    SELECT id FROM azync_jobs
    WHERE source = :source AND state = 'succeeded' AND dag_id IS NULL AND run_id IS NULL
      AND completed_at < :now - :retention
    LIMIT :batch
)

-- name: vacuum_dead
-- One batch of the dead jobs matching {where} that died before the cutoff, deleted.
-- Age counts from the death (failed_at), the enqueue only where a row has no failed_at.
-- A task of a DAG that is not terminal stays: a suspended saga still needs its dead
-- task, and `dags retry` would settle the DAG without running a task that is gone.
DELETE FROM azync_jobs WHERE id IN (
    SELECT j.id FROM azync_jobs j
    WHERE {where} AND j.state = 'dead'
      AND COALESCE(j.failed_at, j.enqueued_at) < :now - :older_than
      AND (j.dag_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM azync_dags d
          WHERE d.id = j.dag_id AND d.state NOT IN ('succeeded', 'failed', 'cancelled')))
    LIMIT :batch
)

-- name: nuke_jobs
-- Every job of one source deleted (their attempt rows cascade).
DELETE FROM azync_jobs WHERE source = :source

-- name: nuke_stats
-- Every daily stats row of one source deleted.
DELETE FROM azync_stats_daily WHERE source = :source

-- name: nuke_keys
-- Every idempotency key of one source deleted.
DELETE FROM azync_idempotency_keys WHERE source = :source
