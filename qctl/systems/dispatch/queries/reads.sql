-- qctl's reads of a dispatch database (dispatch v0.1.0's tables, store/postgres/
-- migrations.go). A NULL filter parameter means "any"; every listing is newest first
-- with a keyset cursor on its id, never an offset.

-- name: list_jobs
-- A page of jobs, newest first, filtered by states, queues and names.
-- Newest first is the primary key's order, walked backwards: dispatch's ids are TypeIDs
-- of UUIDv7s (id/id.go), whose text sorts by the creation millisecond. dispatch's schema
-- has no index on created_at, so ordering by it would sort the whole table; the id is
-- the keyset cursor.
SELECT id, name, queue, state, priority, max_retries, retry_count, last_error,
       scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
       heartbeat_at, timeout, created_at, updated_at, payload
FROM dispatch_jobs
WHERE (%(states)s::text[] IS NULL OR state = ANY(%(states)s::text[]))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(names)s::text[] IS NULL OR name = ANY(%(names)s::text[]))
  AND (%(after_id)s::text IS NULL OR id < %(after_id)s::text)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: get_job
-- One job by its whole id.
SELECT id, name, queue, state, priority, max_retries, retry_count, last_error,
       scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
       heartbeat_at, timeout, created_at, updated_at, payload
FROM dispatch_jobs
WHERE id = %(id)s;

-- name: job_ids_with_prefix
-- At most six job ids starting with a prefix (a unique prefix names one job, more are
-- listed): a range of the primary key's index, never a scan. The prefix is a TypeID's (type, '_', then
-- base32 digits and lower-case letters) and %(top)s a run of 'z' longer than any id, so
-- [prefix, prefix || top] holds every id starting with the prefix in any collation
-- (these characters sort as in C); starts_with rechecks each row the range yields.
SELECT id FROM dispatch_jobs
WHERE id >= %(prefix)s AND id <= %(prefix)s || %(top)s AND starts_with(id, %(prefix)s)
ORDER BY id LIMIT 6;

-- name: dlq_of_job
-- The DLQ entries of one job, newest first.
-- dispatch indexes no job_id (the versions qctl knows): the entries are found through
-- idx_dispatch_dlq_queue, in the job's queue and failed since it was created. Both
-- instants are Go clocks (the producer's, the worker's), so a day of slack is allowed.
SELECT id, job_id, job_name, queue, error, retry_count, max_retries, scope_app_id,
       scope_org_id, failed_at, replayed_at, created_at, payload
FROM dispatch_dlq
WHERE queue = %(queue)s AND failed_at >= %(created_at)s::timestamptz - interval '1 day'
  AND job_id = %(job_id)s
ORDER BY failed_at DESC, id DESC;

-- name: queue_stats
-- Per queue: jobs in each state and how long the oldest due pending job has waited.
-- "Due" as dispatch's dequeue (store/postgres/job.go DequeueJobs) takes it: pending or
-- retrying with run_at reached.
SELECT queue,
       count(*) FILTER (WHERE state = 'pending') AS pending,
       count(*) FILTER (WHERE state = 'retrying') AS retrying,
       count(*) FILTER (WHERE state = 'running') AS running,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'failed') AS failed,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       now() - min(run_at) FILTER (
           WHERE state IN ('pending', 'retrying') AND run_at <= now()
       ) AS oldest_pending_age
FROM dispatch_jobs
GROUP BY queue
ORDER BY queue;

-- name: queue_depths
-- Per queue: the jobs waiting (pending, retrying) and running, and how long the oldest
-- due one has waited; the dashboard's live Queues read. Only the states the partial
-- indexes idx_dispatch_jobs_dequeue and idx_dispatch_jobs_state reach without reading the
-- finished jobs (the bulk of the table): queue_stats counts those too, by a scan.
SELECT queue,
       count(*) FILTER (WHERE state = 'pending') AS pending,
       count(*) FILTER (WHERE state = 'retrying') AS retrying,
       count(*) FILTER (WHERE state = 'running') AS running,
       now() - min(run_at) FILTER (
           WHERE state IN ('pending', 'retrying') AND run_at <= now()
       ) AS oldest_pending_age
FROM (
    SELECT queue, state, run_at FROM dispatch_jobs WHERE state IN ('pending', 'retrying')
    UNION ALL
    SELECT queue, state, run_at FROM dispatch_jobs WHERE state = 'running'
) active
GROUP BY queue
ORDER BY queue;

-- name: list_dlq
-- A page of DLQ entries, newest first (by id, as list_jobs: an entry's id is made when
-- its job fails), filtered by queues, job names and whether they were replayed.
SELECT id, job_id, job_name, queue, error, retry_count, max_retries, scope_app_id,
       scope_org_id, failed_at, replayed_at, created_at, payload
FROM dispatch_dlq
WHERE (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(names)s::text[] IS NULL OR job_name = ANY(%(names)s::text[]))
  AND (%(replayed)s::boolean IS NULL OR (replayed_at IS NOT NULL) = %(replayed)s::boolean)
  AND (%(after_id)s::text IS NULL OR id < %(after_id)s::text)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: get_dlq
-- One DLQ entry by its whole id.
SELECT id, job_id, job_name, queue, error, retry_count, max_retries, scope_app_id,
       scope_org_id, failed_at, replayed_at, created_at, payload
FROM dispatch_dlq
WHERE id = %(id)s;

-- name: dlq_ids_with_prefix
-- At most six DLQ entry ids starting with a prefix (a range, as job_ids_with_prefix).
SELECT id FROM dispatch_dlq
WHERE id >= %(prefix)s AND id <= %(prefix)s || %(top)s AND starts_with(id, %(prefix)s)
ORDER BY id LIMIT 6;

-- name: list_cron
-- Every cron entry, by name.
SELECT id, name, schedule, job_name, queue, enabled, last_run_at, next_run_at, locked_by,
       locked_until, scope_app_id, scope_org_id, created_at, updated_at, payload
FROM dispatch_cron_entries
ORDER BY name;

-- name: list_workers
-- Every registered worker, the leader first, then by last heartbeat.
SELECT id, hostname, queues, concurrency, state, is_leader, leader_until, last_seen,
       metadata, created_at
FROM dispatch_workers
ORDER BY is_leader DESC, last_seen DESC, id;

-- name: get_cron
-- One cron entry by its id or its name (both unique).
SELECT id, name, schedule, job_name, queue, enabled, last_run_at, next_run_at, locked_by,
       locked_until, scope_app_id, scope_org_id, created_at, updated_at, payload
FROM dispatch_cron_entries
WHERE id = %(key)s OR name = %(key)s;

-- name: list_runs
-- A page of workflow runs, newest first (by id, as list_jobs), filtered by states and
-- workflow names.
SELECT id, name, state, error, scope_app_id, scope_org_id, started_at, completed_at,
       created_at, updated_at, input, output
FROM dispatch_workflow_runs
WHERE (%(states)s::text[] IS NULL OR state = ANY(%(states)s::text[]))
  AND (%(names)s::text[] IS NULL OR name = ANY(%(names)s::text[]))
  AND (%(after_id)s::text IS NULL OR id < %(after_id)s::text)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: get_run
-- One workflow run by its whole id.
SELECT id, name, state, error, scope_app_id, scope_org_id, started_at, completed_at,
       created_at, updated_at, input, output
FROM dispatch_workflow_runs
WHERE id = %(id)s;

-- name: run_ids_with_prefix
-- At most six workflow run ids starting with a prefix (a range, as job_ids_with_prefix).
SELECT id FROM dispatch_workflow_runs
WHERE id >= %(prefix)s AND id <= %(prefix)s || %(top)s AND starts_with(id, %(prefix)s)
ORDER BY id LIMIT 6;

-- name: run_checkpoints
-- The checkpoints of one run (a step that finished), in the order they were written.
-- Step results are Go gob bytes (workflow/step.go StepWithResult): shown escaped.
SELECT id, step_name, created_at, data
FROM dispatch_checkpoints
WHERE run_id = %(id)s
ORDER BY created_at, id;

-- name: stats
-- dispatch's admin stats (api/stats_handler.go stats): jobs per state (its CountJobs),
-- DLQ entries (CountDLQ) and of them the ones not replayed, workflow runs per state.
SELECT
    (SELECT count(*) FROM dispatch_jobs WHERE state = 'pending') AS pending,
    (SELECT count(*) FROM dispatch_jobs WHERE state = 'running') AS running,
    (SELECT count(*) FROM dispatch_jobs WHERE state = 'completed') AS completed,
    (SELECT count(*) FROM dispatch_jobs WHERE state = 'failed') AS failed,
    (SELECT count(*) FROM dispatch_jobs WHERE state = 'retrying') AS retrying,
    (SELECT count(*) FROM dispatch_jobs WHERE state = 'cancelled') AS cancelled,
    (SELECT count(*) FROM dispatch_dlq) AS dlq,
    (SELECT count(*) FROM dispatch_dlq WHERE replayed_at IS NULL) AS dlq_unreplayed,
    (SELECT count(*) FROM dispatch_workflow_runs WHERE state = 'running') AS runs_running,
    (SELECT count(*) FROM dispatch_workflow_runs WHERE state = 'completed') AS runs_completed,
    (SELECT count(*) FROM dispatch_workflow_runs WHERE state = 'failed') AS runs_failed;

-- name: jobs_after
-- Jobs with an id past a mark, oldest first (the primary key: ids sort by creation).
SELECT id, name, queue, state, priority, created_at, 'job' AS kind
FROM dispatch_jobs
WHERE %(after)s::text IS NULL OR id > %(after)s::text
ORDER BY id
LIMIT %(limit)s;

-- name: dlq_after
-- DLQ entries with an id past a mark, oldest first.
SELECT id, job_id, job_name, queue, error, failed_at, 'dlq' AS kind
FROM dispatch_dlq
WHERE %(after)s::text IS NULL OR id > %(after)s::text
ORDER BY id
LIMIT %(limit)s;

-- name: newest_ids
-- The newest job and DLQ entry ids: where a watch starts.
SELECT (SELECT max(id) FROM dispatch_jobs) AS job, (SELECT max(id) FROM dispatch_dlq) AS dlq;

-- name: throughput
-- Per queue and bucket of %(width)s seconds (their index from the Unix epoch): jobs
-- enqueued (created_at), completed and cancelled (completed_at, which worker/executor.go
-- handleSuccess and api/job_handler.go cancelJob set) and failed for good (DLQ entries
-- by failed_at: a job enters the DLQ when its retries run out, executor.go sendToDLQ).
-- The jobs are one range of the primary key, from %(from_id)s, the smallest id made at
-- the look-back's start (ids are TypeIDs of UUIDv7s, made at enqueue: id/id.go), each
-- row read once for its two instants. dispatch indexes no completed_at, so a job that
-- finished in the window but was enqueued before %(from_id)s is not counted (the
-- command says so). The DLQ is read on idx_dispatch_dlq_queue (queue, failed_at DESC),
-- one range per queue: its queues are found by skipping through that index. Buckets
-- in double precision (date_part): extract's numeric cost more than the reading.
WITH RECURSIVE dlq_queues AS (
    SELECT min(queue) AS queue FROM dispatch_dlq
    UNION ALL
    SELECT (SELECT min(queue) FROM dispatch_dlq WHERE queue > q.queue)
    FROM dlq_queues q WHERE q.queue IS NOT NULL
)
SELECT m.measure, j.queue, floor(date_part('epoch', m.at) / %(width)s)::bigint AS bucket,
       count(*) AS n
FROM dispatch_jobs j,
     LATERAL (VALUES ('enqueued', j.created_at),
                     (j.state, CASE WHEN j.state IN ('completed', 'cancelled')
                                    THEN j.completed_at END)) m (measure, at)
WHERE j.id >= %(from_id)s
  AND (%(queues)s::text[] IS NULL OR j.queue = ANY(%(queues)s::text[]))
  AND m.at >= %(since)s
GROUP BY 1, 2, 3
UNION ALL
SELECT 'failed', d.queue, floor(date_part('epoch', d.failed_at) / %(width)s)::bigint,
       count(*)
FROM dlq_queues q
JOIN dispatch_dlq d ON d.queue = q.queue
WHERE q.queue IS NOT NULL
  AND (%(queues)s::text[] IS NULL OR q.queue = ANY(%(queues)s::text[]))
  AND d.failed_at >= %(since)s
GROUP BY 2, 3;

-- name: failures_of
-- The head of `jobs errors`' read: reads.error_groups follows it with list_jobs as a
-- subquery (newest first by id, the same filters) and takes of each job only its id,
-- name, last_error (its first 4096 characters) and when it last changed (its failure,
-- for a failed job).
SELECT id, name, left(last_error, 4096) AS error, coalesce(completed_at, updated_at) AS at
FROM

-- name: dlq_waiting_bounded
-- DLQ entries not replayed per queue for `qctl metrics`. dispatch indexes no replayed_at
-- (idx_dispatch_dlq_queue is (queue, failed_at)), so at most %(cap)s entries are read, in
-- no order: `read` says how many (fewer than the cap: all of them).
SELECT queue, count(*) FILTER (WHERE replayed_at IS NULL) AS n, count(*) AS read
FROM (SELECT queue, replayed_at FROM dispatch_dlq LIMIT %(cap)s) d
GROUP BY queue;
