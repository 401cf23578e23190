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

-- name: register_worker
-- A stand-in worker joins the cluster (store/postgres/cluster.go RegisterWorker: an
-- upsert on its id).
INSERT INTO dispatch_workers (id, hostname, queues, concurrency, state, last_seen, metadata)
VALUES (%(id)s, %(hostname)s, %(queues)s, %(concurrency)s, 'active', now(), %(metadata)s)
ON CONFLICT (id) DO UPDATE SET
    hostname = EXCLUDED.hostname, queues = EXCLUDED.queues,
    concurrency = EXCLUDED.concurrency, state = EXCLUDED.state,
    last_seen = EXCLUDED.last_seen, metadata = EXCLUDED.metadata;

-- name: heartbeat_worker
-- A worker's heartbeat (store/postgres/cluster.go HeartbeatWorker).
UPDATE dispatch_workers SET last_seen = now() WHERE id = %(id)s;

-- name: deregister_worker
-- A worker leaves on shutdown (store/postgres/cluster.go DeregisterWorker).
DELETE FROM dispatch_workers WHERE id = %(id)s;

-- name: clear_expired_leader
-- The first step of store/postgres/cluster.go AcquireLeadership: an expired leader is
-- no leader.
UPDATE dispatch_workers SET is_leader = FALSE, leader_until = NULL
WHERE is_leader = TRUE AND leader_until < now();

-- name: claim_leadership
-- AcquireLeadership's other steps as one statement: claim (or keep) the leadership for
-- %(ttl)s unless another worker holds it; returns the worker when it leads.
UPDATE dispatch_workers SET is_leader = TRUE, leader_until = now() + %(ttl)s::interval
WHERE id = %(id)s AND NOT EXISTS (
    SELECT 1 FROM dispatch_workers
    WHERE is_leader = TRUE AND leader_until >= now() AND id <> %(id)s
)
RETURNING id;

-- name: register_cron
-- A cron entry, as store/postgres/cron.go RegisterCron inserts it; an entry of that name
-- already there is kept (RegisterCron refuses it: ErrDuplicateCron), so a demo run again
-- on its schema finds its entries.
INSERT INTO dispatch_cron_entries (
    id, name, schedule, job_name, queue, payload, scope_app_id, scope_org_id,
    next_run_at, enabled
) VALUES (
    %(id)s, %(name)s, %(schedule)s, %(job_name)s, %(queue)s, %(payload)s, '', '',
    now(), TRUE
)
ON CONFLICT (name) DO NOTHING;

-- name: due_crons
-- The leader's tick (cron/scheduler.go tick over store/postgres/cron.go ListCrons): the
-- enabled entries whose next run is due.
SELECT id, name, schedule, job_name, queue, payload FROM dispatch_cron_entries
WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= now()
ORDER BY id;

-- name: acquire_cron_lock
-- A fire's per-entry lock (store/postgres/cron.go AcquireCronLock): free, expired, or
-- already this worker's; returns the entry when taken.
UPDATE dispatch_cron_entries
SET locked_by = %(worker_id)s, locked_until = now() + %(ttl)s::interval, updated_at = now()
WHERE id = %(id)s
  AND (locked_by IS NULL OR locked_until < now() OR locked_by = %(worker_id)s)
RETURNING id;

-- name: cron_fired
-- After a fire's enqueue (cron/scheduler.go fireEntry): UpdateCronLastRun, then
-- UpdateCronEntry with the schedule's next run (the demo's entries are "@every" ones).
UPDATE dispatch_cron_entries
SET last_run_at = now(), next_run_at = now() + %(every)s::interval, updated_at = now()
WHERE id = %(id)s;

-- name: release_cron_lock
-- store/postgres/cron.go ReleaseCronLock.
UPDATE dispatch_cron_entries SET locked_by = NULL, locked_until = NULL, updated_at = now()
WHERE id = %(id)s AND locked_by = %(worker_id)s;

-- name: create_run
-- A workflow run starts (store/postgres/workflow.go CreateRun): running.
INSERT INTO dispatch_workflow_runs (id, name, state, input, scope_app_id, scope_org_id)
VALUES (%(id)s, %(name)s, 'running', %(input)s, '', '');

-- name: save_checkpoint
-- A step's checkpoint (store/postgres/workflow.go SaveCheckpoint: an upsert on the run
-- and step).
INSERT INTO dispatch_checkpoints (id, run_id, step_name, data, created_at)
VALUES (%(id)s, %(run_id)s, %(step_name)s, %(data)s, now())
ON CONFLICT (run_id, step_name) DO UPDATE SET data = EXCLUDED.data, created_at = EXCLUDED.created_at;

-- name: finish_run
-- The run's outcome (store/postgres/workflow.go UpdateRun): completed with its output,
-- or failed with its error.
UPDATE dispatch_workflow_runs
SET state = %(state)s, output = %(output)s, error = %(error)s, completed_at = now(),
    updated_at = now()
WHERE id = %(id)s;
