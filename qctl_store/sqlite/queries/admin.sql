-- Admin reads and operator actions (SQLite). Optional filters are static
-- "(:x = '' OR col = :x)" clauses, except where an index should seek on them: the job
-- and event listings (WHERE, ORDER BY, keyset clause) and the bulk actions ({where}:
-- source, plus kind unless every kind) are composed in listing.py from fixed fragments.

-- name: list_kinds
-- The kinds of one source that have jobs or daily stats, sorted.
SELECT kind FROM azync_jobs WHERE source = :source
UNION
SELECT kind FROM azync_stats_daily WHERE source = :source
ORDER BY kind

-- name: kind_depths
-- Per (source, kind, state) job counts of the sources, with the oldest pending job's age.
-- :sources is a JSON array of sources: several in one statement.
SELECT source, kind, state, COUNT(*) AS n,
       CASE WHEN state = 'pending' THEN :now - MIN(run_at) END AS pending_age
FROM azync_jobs WHERE source IN (SELECT value FROM json_each(:sources))
GROUP BY source, kind, state

-- name: depths
-- Per state job counts of one (source, kind), with the oldest pending job's age.
SELECT state, COUNT(*) AS n,
       CASE WHEN state = 'pending' THEN :now - MIN(run_at) END AS pending_age
FROM azync_jobs WHERE source = :source AND kind = :kind
GROUP BY state

-- name: daily
-- The daily throughput window of one source (one kind or all), zero-filled, oldest day first.
-- azync's admin window (queue/manager.go statsWindowDays): the last :days UTC days up to
-- :today, zero-filled, oldest first, slots summed; a NULL :kind means every kind.
WITH RECURSIVE w(day, n) AS (
    SELECT :today, 1
    UNION ALL
    SELECT date(day, '-1 day'), n + 1 FROM w WHERE n < :days
)
SELECT w.day AS day,
       COALESCE(SUM(s.enqueued), 0) AS enqueued, COALESCE(SUM(s.processed), 0) AS processed,
       COALESCE(SUM(s.failed), 0) AS failed, COALESCE(SUM(s.reaped), 0) AS reaped
FROM w LEFT JOIN azync_stats_daily s
    ON s.day = w.day AND s.source = :source AND (:kind IS NULL OR s.kind = :kind)
GROUP BY w.day ORDER BY w.day

-- name: count_jobs
-- How many jobs match {where}.
SELECT COUNT(*) AS n FROM azync_jobs WHERE {where}

-- name: list_jobs
-- A page of the jobs matching {where}, in {order}: {columns} (payload and result or NULLs).
-- The WHERE is built from fixed fragments (listing.job_where); a state filter is inlined as a
-- literal of the enum so SQLite can use the per-state partial indexes.
SELECT {columns} FROM azync_jobs
WHERE {where}
ORDER BY {order}
LIMIT :limit OFFSET :offset

-- name: get_job
-- One job by id within one source.
SELECT {jobs} FROM azync_jobs WHERE id = :id AND source = :source

-- name: find_job
-- One job by id, whatever its source.
SELECT {jobs} FROM azync_jobs WHERE id = :id

-- name: job_attempts
-- The recorded failed attempts of one job of one source, oldest first.
SELECT a.attempt, a.error, a.failed_at
FROM azync_job_attempts a JOIN azync_jobs j ON j.id = a.job_id
WHERE a.job_id = :id AND j.source = :source
ORDER BY a.attempt, a.id

-- name: retry_job
-- A dead job back to pending now, its attempt count and failure fields reset.
UPDATE azync_jobs SET
    state = 'pending', run_at = :now, attempt = 0, reap_count = 0,
    last_error = NULL, failed_at = NULL, deadline_at = NULL, started_at = NULL, updated_at = :now
WHERE id = :id AND source = :source AND state = 'dead'

-- name: retry_all_dead
-- One batch of the dead jobs matching {where} back to pending, attempts reset.
UPDATE azync_jobs SET
    state = 'pending', run_at = :now, attempt = 0, reap_count = 0,
    last_error = NULL, failed_at = NULL, deadline_at = NULL, started_at = NULL, updated_at = :now
WHERE id IN (SELECT id FROM azync_jobs WHERE {where} AND state = 'dead' LIMIT :batch)

-- name: run_now
-- A scheduled job made due now (pending).
UPDATE azync_jobs SET state = 'pending', run_at = :now, updated_at = :now
WHERE id = :id AND source = :source AND state = 'scheduled'

-- name: archive_job
-- A pending or scheduled job moved to dead without running it.
UPDATE azync_jobs SET state = 'dead', lease_until = NULL, updated_at = :now
WHERE id = :id AND source = :source AND state IN ('pending', 'scheduled')

-- name: pause_job
-- A pending or scheduled job paused.
UPDATE azync_jobs SET state = 'paused', updated_at = :now
WHERE id = :id AND source = :source AND state IN ('pending', 'scheduled')

-- name: resume_job
-- A paused job back to pending, or to scheduled while its run_at is in the future.
UPDATE azync_jobs SET
    state = CASE WHEN run_at <= :now THEN 'pending' ELSE 'scheduled' END, updated_at = :now
WHERE id = :id AND source = :source AND state = 'paused'

-- name: delete_job
-- One job of one source deleted, only while it is in the given state.
DELETE FROM azync_jobs WHERE id = :id AND source = :source AND state = :state

-- name: delete_all
-- One batch of the jobs matching {where} in one state deleted.
-- :state is bound before the first step, so SQLite still picks that state's partial index.
DELETE FROM azync_jobs WHERE id IN (
    SELECT id FROM azync_jobs WHERE {where} AND state = :state LIMIT :batch
)

-- Set-based forms of the single-job actions above, one statement per batch of ids that
-- a bulk verb runs: the same columns set, the source and state re-checked in the WHERE
-- in the statement's one write transaction (a job a worker leased before it is
-- 'active', and left alone), the ids changed returned. The change-log triggers record each row
-- changed, as for the single-job forms.

-- name: retry_jobs
-- Dead jobs of the given ids and sources back to pending now, as retry_job.
UPDATE azync_jobs SET
    state = 'pending', run_at = :now, attempt = 0, reap_count = 0,
    last_error = NULL, failed_at = NULL, deadline_at = NULL, started_at = NULL,
    updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND source IN (SELECT value FROM json_each(:sources)) AND state = 'dead'
RETURNING id, source, kind

-- name: run_now_jobs
-- Scheduled jobs of the given ids and sources made due now, as run_now.
-- Never a DAG's $sleep timer: only a scheduled timer completes, a pending one would
-- strand its DAG.
UPDATE azync_jobs SET state = 'pending', run_at = :now, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND source IN (SELECT value FROM json_each(:sources)) AND state = 'scheduled'
  AND NOT (source = 'dag' AND kind = '$sleep')
RETURNING id, source, kind

-- name: pause_jobs
-- Pending or scheduled jobs of the given ids and sources paused, as pause_job.
UPDATE azync_jobs SET state = 'paused', updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND source IN (SELECT value FROM json_each(:sources)) AND state IN ('pending', 'scheduled')
RETURNING id, source, kind

-- name: resume_jobs
-- Paused jobs of the given ids and sources resumed, as resume_job.
UPDATE azync_jobs SET
    state = CASE WHEN run_at <= :now THEN 'pending' ELSE 'scheduled' END,
    updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND source IN (SELECT value FROM json_each(:sources)) AND state = 'paused'
RETURNING id, source, kind

-- name: archive_jobs
-- Pending or scheduled jobs of the given ids and sources moved to dead, as archive_job.
UPDATE azync_jobs SET state = 'dead', lease_until = NULL, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND source IN (SELECT value FROM json_each(:sources)) AND state IN ('pending', 'scheduled')
RETURNING id, source, kind

-- name: delete_jobs
-- Jobs of the given ids and sources deleted while in one of the given states.
-- As delete_job.
DELETE FROM azync_jobs
WHERE id IN (SELECT value FROM json_each(:ids)) AND source IN (SELECT value FROM json_each(:sources)) AND state IN (SELECT value FROM json_each(:states))
RETURNING id, source, kind

-- name: job_targets
-- A keyset page of the jobs {where} matches, in id order after the previous page's.
-- Its states are inlined in {where}; ids and the columns a bulk verb checks, nothing
-- decoded.
SELECT id, source, state, kind FROM azync_jobs
WHERE {where}
ORDER BY id
LIMIT :limit

-- name: job_targets_of
-- job_targets' columns of the given ids that exist.
SELECT id, source, state, kind FROM azync_jobs WHERE id IN (SELECT value FROM json_each(:ids))

-- name: find_ids_by_prefix
-- Up to limit ids of {table} that start with a uuid prefix, in id order.
-- A range scan on the canonical text id: every character of an id sorts below 'g'.
SELECT id FROM {table} WHERE id >= :prefix AND id < :prefix || 'g' ORDER BY id LIMIT :limit
