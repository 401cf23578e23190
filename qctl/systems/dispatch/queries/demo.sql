-- The demo's stand-in workers: dispatch v0.1.0's worker statements (store/postgres/
-- job.go, dlq.go) run from Python, for a machine without dispatch's Go runtime.

-- name: dequeue
-- Claim due jobs of some queues (store/postgres/job.go DequeueJobs, as written there).
WITH dequeued AS (
    UPDATE dispatch_jobs
    SET state = 'running', started_at = now(), updated_at = now()
    WHERE id IN (
        SELECT id FROM dispatch_jobs
        WHERE state IN ('pending', 'retrying') AND queue = ANY(%(queues)s::text[])
          AND run_at <= now()
        ORDER BY priority DESC, run_at ASC
        FOR UPDATE SKIP LOCKED
        LIMIT %(limit)s
    )
    RETURNING id, name, queue, payload, max_retries, retry_count, scope_app_id, scope_org_id
)
SELECT * FROM dequeued ORDER BY id;

-- name: heartbeat
-- A running job's heartbeat (store/postgres/job.go HeartbeatJob).
UPDATE dispatch_jobs SET heartbeat_at = now(), updated_at = now() WHERE id = %(id)s;

-- name: settle
-- A worker's outcome (worker/executor.go through UpdateJob): completed, retrying after
-- a backoff, or failed once the retries are spent.
UPDATE dispatch_jobs
SET state = %(state)s, retry_count = %(retry_count)s, last_error = %(last_error)s,
    run_at = CASE WHEN %(state)s = 'retrying' THEN now() + %(backoff)s::interval ELSE run_at END,
    completed_at = CASE WHEN %(state)s = 'retrying' THEN NULL ELSE now() END,
    updated_at = now()
WHERE id = %(id)s AND state = 'running';

-- name: push_dlq
-- A job failed for good, into the DLQ (store/postgres/dlq.go PushDLQ, dlq/service.go).
INSERT INTO dispatch_dlq (
    id, job_id, job_name, queue, payload, error, retry_count, max_retries, scope_app_id,
    scope_org_id, failed_at, replayed_at, created_at
) VALUES (
    %(id)s, %(job_id)s, %(job_name)s, %(queue)s, %(payload)s, %(error)s, %(retry_count)s,
    %(max_retries)s, %(scope_app_id)s, %(scope_org_id)s, now(), NULL, now()
);

-- name: job_counts
-- Jobs per state, for the headless demo's summary.
SELECT state, count(*) AS n FROM dispatch_jobs GROUP BY state ORDER BY state;

-- name: enqueue_job
-- The demo producer's job, as store/postgres/job.go EnqueueJob writes it: pending, due
-- now, priority 0, no retries yet; store/postgres/models.go writes absent strings as ''
-- and the zero worker id as its text.
INSERT INTO dispatch_jobs (
    id, name, queue, payload, state, priority, max_retries, retry_count, last_error,
    scope_app_id, scope_org_id, worker_id, run_at, started_at, completed_at,
    heartbeat_at, timeout, created_at, updated_at
) VALUES (
    %(id)s, %(name)s, %(queue)s, %(payload)s, 'pending', 0, %(max_retries)s, 0, '',
    %(scope_app_id)s, %(scope_org_id)s, %(worker_id)s, now(), NULL, NULL, NULL,
    %(timeout)s, now(), now()
)
RETURNING id;
