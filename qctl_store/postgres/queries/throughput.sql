-- AdminStore.throughput (see qctl_store/throughput.py): per-bucket counts read from the
-- job rows' timestamps, each branch bounded by an index to the window.

-- name: clock
-- The database's clock.
SELECT now() AS now

-- name: kinds
-- The kinds of one source with daily stats in the window.
-- The kinds with any activity in the window: every enqueue, ack and failure bumps its
-- kind's stats row of the day (the day in the session's time zone, hence the day before).
SELECT DISTINCT kind FROM azync_stats_daily
WHERE source = %(source)s AND day >= (%(since)s::timestamptz)::date - 1

-- name: attempt_bounds
-- The lowest and highest attempt row ids.
SELECT min(id) AS lo, max(id) AS hi FROM azync_job_attempts

-- name: attempt_probe
-- The first attempt row at or after an id, and when it was written.
SELECT id, failed_at FROM azync_job_attempts WHERE id >= %(id)s ORDER BY id LIMIT 1

-- name: counts
-- Per (measure, kind, bucket) counts of the window.
-- (measure, kind, bucket index, n). Enqueued counts the jobs in the states whose index
-- bounds the read: each live state's partial index (the backlog), a DAG's blocked and
-- waiting tasks on azync_jobs_dag_blocked_idx / azync_jobs_dag_waiting_idx (partial
-- on the state: the read is that state's rows, never the table), dead jobs on
-- azync_jobs_dead_idx (enqueued_at is its third column) and succeeded jobs, which
-- completed after they were enqueued, within the succeeded range. Paused, cancelled,
-- uncertain and skipped jobs on the console's index of each (``db tune``), where its
-- {paused}, {cancelled}, {uncertain} or {skipped} is TRUE (the index exists: with FALSE
-- the planner drops the branch, so no scan of the table is planned): a job counts where
-- it was enqueued whatever its state now.
WITH e AS (
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'pending'
      AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'scheduled'
      AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'active'
      AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE %(source)s = 'dag' AND source = 'dag' AND kind = ANY(%(kinds)s)
      AND state = 'blocked' AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE %(source)s = 'dag' AND source = 'dag' AND kind = ANY(%(kinds)s)
      AND state = 'waiting' AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'dead'
      AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'succeeded'
      AND completed_at >= %(since)s AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE {paused} AND source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'paused'
      AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE {cancelled} AND source = %(source)s AND kind = ANY(%(kinds)s)
      AND state = 'cancelled' AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE {uncertain} AND source = %(source)s AND kind = ANY(%(kinds)s)
      AND state = 'uncertain' AND enqueued_at >= %(since)s
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE {skipped} AND source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'skipped'
      AND completed_at >= %(since)s AND enqueued_at >= %(since)s
)
SELECT 'enqueued' AS measure, kind,
       floor(extract(epoch FROM enqueued_at) / %(width)s)::bigint AS bucket, count(*) AS n
FROM e GROUP BY 2, 3
UNION ALL
SELECT 'processed', kind, floor(extract(epoch FROM completed_at) / %(width)s)::bigint,
       count(*)
FROM azync_jobs
WHERE source = %(source)s AND kind = ANY(%(kinds)s) AND state = 'succeeded'
  AND completed_at >= %(since)s
GROUP BY 2, 3
UNION ALL
SELECT CASE WHEN a.error LIKE %(reap_kill)s THEN 'reaped' ELSE 'failed' END, j.kind,
       floor(extract(epoch FROM a.failed_at) / %(width)s)::bigint, count(*)
FROM azync_job_attempts a JOIN azync_jobs j ON j.id = a.job_id
WHERE a.id >= %(first_attempt)s AND a.failed_at >= %(since)s
  AND j.source = %(source)s AND j.kind = ANY(%(kinds)s)
GROUP BY 1, 2, 3
