-- AdminStore.throughput (see qctl_store/throughput.py): per-bucket counts read from the
-- job rows' timestamps (µs), each branch bounded by an index to the window.

-- name: kinds
-- The kinds of one source with daily stats in the window.
-- The kinds with any activity in the window: every enqueue, ack and failure bumps its
-- kind's stats row of the (UTC) day.
SELECT DISTINCT kind FROM azync_stats_daily WHERE source = :source AND day >= :since_day

-- name: attempt_bounds
-- The lowest and highest attempt row ids.
SELECT min(id) AS lo, max(id) AS hi FROM azync_job_attempts

-- name: attempt_probe
-- The first attempt row at or after an id, and when it was written.
SELECT id, failed_at FROM azync_job_attempts WHERE id >= :id ORDER BY id LIMIT 1

-- name: counts
-- Per (measure, kind, bucket) counts of the window.
-- (measure, kind, bucket index, n); enqueued over the states whose index bounds the
-- read, as on PostgreSQL, and the jobs now paused, cancelled, uncertain or skipped, which
-- no index holds: a job counts where it was enqueued whatever its state now (SQLite has
-- no ``db tune``; its tables are a single host's).
WITH k(kind) AS (SELECT value FROM json_each(:kinds)),
e AS (
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = :source AND kind IN k AND state = 'pending' AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = :source AND kind IN k AND state = 'scheduled' AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = :source AND kind IN k AND state = 'active' AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE :source = 'dag' AND source = 'dag' AND kind IN k AND state = 'blocked'
      AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE :source = 'dag' AND source = 'dag' AND kind IN k AND state = 'waiting'
      AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = :source AND kind IN k AND state = 'dead' AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = :source AND kind IN k AND state = 'succeeded'
      AND completed_at >= :since AND enqueued_at >= :since
    UNION ALL
    SELECT kind, enqueued_at FROM azync_jobs
    WHERE source = :source AND kind IN k
      AND state IN ('paused', 'cancelled', 'uncertain', 'skipped') AND enqueued_at >= :since
)
SELECT 'enqueued' AS measure, kind, enqueued_at / :width AS bucket, count(*) AS n
FROM e GROUP BY 2, 3
UNION ALL
SELECT 'processed', kind, completed_at / :width, count(*)
FROM azync_jobs
WHERE source = :source AND kind IN k AND state = 'succeeded' AND completed_at >= :since
GROUP BY 2, 3
UNION ALL
SELECT CASE WHEN a.error LIKE :reap_kill THEN 'reaped' ELSE 'failed' END, j.kind,
       a.failed_at / :width, count(*)
FROM azync_job_attempts a JOIN azync_jobs j ON j.id = a.job_id
WHERE a.id >= :first_attempt AND a.failed_at >= :since
  AND j.source = :source AND j.kind IN k
GROUP BY 1, 2, 3
