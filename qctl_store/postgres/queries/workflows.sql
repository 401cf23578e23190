-- Workflow-as-code executions (driver.WorkflowStore) on azync's PostgreSQL schema.
-- Parameters are psycopg's %(name)s; JSON goes in as text and is cast to jsonb.

-- name: insert_execution
-- A workflow execution inserted unless a live one of its name holds the business key.
-- Dedupes against a live (running or suspended) execution holding the same business
-- key; the ON CONFLICT target infers azync_workflow_executions_live_biz_idx.
INSERT INTO azync_workflow_executions
    (id, name, version, business_idempotency_key, task_queue, input, meta)
VALUES (%(id)s, %(name)s, %(version)s, NULLIF(%(biz_key)s, ''), %(task_queue)s,
        %(input)s::jsonb, %(meta)s::jsonb)
ON CONFLICT (name, business_idempotency_key)
    WHERE business_idempotency_key IS NOT NULL AND state IN ('running', 'suspended')
DO NOTHING
RETURNING id

-- name: find_live_execution
-- The live execution of a name holding a business key.
SELECT id FROM azync_workflow_executions
WHERE name = %(name)s AND business_idempotency_key = %(biz_key)s
  AND state IN ('running', 'suspended')

-- name: insert_started_history
-- The WorkflowStarted history event of a new execution.
INSERT INTO azync_workflow_history (workflow_id, event_seq, event_type, payload)
VALUES (%(id)s, 1, 'WorkflowStarted', %(input)s::jsonb)

-- name: insert_task
-- A workflow-task job: pending when due by the database clock, scheduled otherwise.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, meta,
     enqueued_at, run_id)
SELECT %(id)s, 'workflow', %(kind)s,
       CASE WHEN r.run_at > now() THEN 'scheduled' ELSE 'pending' END,
       r.run_at, 0, false, '{}'::jsonb, now(), %(workflow_id)s
FROM (SELECT COALESCE(%(run_at)s::timestamptz, now()) AS run_at) r

-- name: get_execution
-- One workflow execution by id.
SELECT id, name, version, state, business_idempotency_key, task_queue, input, result,
       failure_reason, meta, created_at, updated_at, completed_at
FROM azync_workflow_executions
WHERE id = %(id)s

-- name: list_executions
-- A page of workflow executions matching {where}, newest first.
-- {where} holds the filters and the keyset position; LIMIT NULL is no limit.
SELECT id, name, version, state, business_idempotency_key, task_queue, input, result,
       failure_reason, meta, created_at, updated_at, completed_at
FROM azync_workflow_executions
WHERE {where}
ORDER BY created_at DESC, id DESC
LIMIT %(limit)s OFFSET %(offset)s

-- name: count_executions
-- How many workflow executions match {where} (listing.header_where).
SELECT count(*) AS n
FROM azync_workflow_executions
WHERE {where}

-- name: execution_exists
-- Whether a workflow execution exists.
SELECT EXISTS (SELECT 1 FROM azync_workflow_executions WHERE id = %(id)s) AS found

-- name: lock_execution
-- A workflow execution's header row locked, with its name and state.
-- Serialises history sequence numbers of one execution on its header row.
SELECT name, state FROM azync_workflow_executions WHERE id = %(id)s FOR UPDATE

-- name: next_history_seq
-- The next history sequence number of an execution.
SELECT COALESCE(max(event_seq), 0) + 1 AS seq
FROM azync_workflow_history WHERE workflow_id = %(id)s

-- name: insert_history
-- One history event appended unless its operation result was recorded already.
-- The conflict target is azync_workflow_history_exec_key_idx: only an operation result
-- carrying an execution_key can conflict; everything else is a plain insert.
INSERT INTO azync_workflow_history (workflow_id, event_seq, event_type, payload)
VALUES (%(id)s, %(seq)s, %(type)s, %(payload)s::jsonb)
ON CONFLICT (workflow_id, event_type, (payload ->> 'execution_key'))
    WHERE payload ->> 'execution_key' IS NOT NULL
      AND event_type IN ('OperationCompleted', 'OperationFailed')
DO NOTHING

-- name: find_history_by_exec_key
-- The sequence number of the operation result recorded for an execution key.
SELECT event_seq AS seq FROM azync_workflow_history
WHERE workflow_id = %(id)s AND event_type = %(type)s
  AND payload ->> 'execution_key' = %(execution_key)s

-- name: list_history
-- An execution's history, in sequence order.
SELECT workflow_id, event_seq, event_type, payload, created_at
FROM azync_workflow_history
WHERE workflow_id = %(id)s
ORDER BY event_seq

-- name: insert_signal
-- A signal added to an execution's inbox unless its message id was seen.
INSERT INTO azync_workflow_signals (id, workflow_id, name, message_id, payload)
VALUES (%(id)s, %(workflow_id)s, %(name)s, NULLIF(%(message_id)s, ''), %(payload)s::jsonb)
ON CONFLICT (workflow_id, name, message_id) WHERE message_id IS NOT NULL DO NOTHING
RETURNING id

-- name: complete_execution
-- A workflow execution completed as succeeded with its result.
-- No state guard (azync's CompleteWorkflow settles from any state).
UPDATE azync_workflow_executions
SET state = 'succeeded', result = %(result)s::jsonb, completed_at = now(), updated_at = now()
WHERE id = %(id)s
RETURNING id

-- name: fail_execution
-- A workflow execution completed as failed with a reason.
UPDATE azync_workflow_executions
SET state = 'failed', failure_reason = %(reason)s, completed_at = now(), updated_at = now()
WHERE id = %(id)s
RETURNING id

-- name: cancel_execution
-- A non-terminal workflow execution cancelled.
UPDATE azync_workflow_executions
SET state = 'cancelled', completed_at = now(), updated_at = now()
WHERE id = %(id)s AND state NOT IN ('succeeded', 'failed', 'cancelled')
RETURNING id

-- name: suspend_execution
-- A non-terminal workflow execution suspended with a reason.
UPDATE azync_workflow_executions
SET state = 'suspended', failure_reason = %(reason)s, updated_at = now()
WHERE id = %(id)s AND state NOT IN ('succeeded', 'failed', 'cancelled')
RETURNING id

-- name: resume_execution
-- A suspended workflow execution back to running.
UPDATE azync_workflow_executions
SET state = 'running', failure_reason = NULL, updated_at = now()
WHERE id = %(id)s AND state = 'suspended'
RETURNING id

-- name: find_live_operation
-- The live operation job of a workflow holding an execution key.
-- Live means pending, scheduled, active or uncertain (azync_jobs_workflow_exec_key_idx).
SELECT id FROM azync_jobs
WHERE source = 'workflow' AND run_id = %(workflow_id)s
  AND meta ->> 'execution_key' = %(execution_key)s
  AND state IN ('pending', 'scheduled', 'active', 'uncertain')
LIMIT 1

-- name: insert_operation
-- One operation job of a workflow inserted, pending or scheduled by its run_at.
INSERT INTO azync_jobs
    (id, source, kind, state, payload, meta, run_at, max_attempts, max_attempts_explicit,
     enqueued_at, run_id)
SELECT %(id)s, 'workflow', %(kind)s,
       CASE WHEN r.run_at > now() THEN 'scheduled' ELSE 'pending' END,
       %(payload)s::jsonb, %(meta)s::jsonb, r.run_at, %(max_attempts)s, true, now(),
       %(workflow_id)s
FROM (SELECT COALESCE(%(run_at)s::timestamptz, now()) AS run_at) r
RETURNING id

-- name: mark_uncertain
-- A leased operation job marked uncertain and its execution suspended, fenced on its lease.
-- Fenced on the lease (state COLLATE "C": by primary key, as jobs.sql's fenced
-- statements say why); returns a row only when the job moved AND its execution was
-- suspended, which is what azync requires for success.
WITH job AS (
    UPDATE azync_jobs
    SET state = 'uncertain', lease_until = NULL, lease_token = NULL,
        last_error = %(reason)s, failed_at = now(), updated_at = now()
    WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(lease_token)s
      AND source = 'workflow'
    RETURNING id, run_id
)
UPDATE azync_workflow_executions e
SET state = 'suspended', failure_reason = %(reason)s, updated_at = now()
FROM job
WHERE e.id = job.run_id AND e.state IN ('running', 'suspended')
RETURNING job.id

-- name: resolve_complete
-- An uncertain operation job resolved as succeeded with its result.
UPDATE azync_jobs
SET state = 'succeeded', completed_at = now(), updated_at = now(),
    result = %(result)s::jsonb, last_error = NULL
WHERE id = %(id)s AND source = 'workflow' AND state = 'uncertain'
RETURNING run_id, kind, COALESCE(meta ->> 'workflow_name', '') AS workflow_name

-- name: resolve_fail
-- An uncertain operation job resolved as dead.
UPDATE azync_jobs
SET state = 'dead', failed_at = now(), updated_at = now(), last_error = 'uncertain: fail'
WHERE id = %(id)s AND source = 'workflow' AND state = 'uncertain'
RETURNING run_id, kind, COALESCE(meta ->> 'workflow_name', '') AS workflow_name

-- name: resolve_retry
-- An uncertain operation job resolved to run again now.
UPDATE azync_jobs
SET state = 'pending', run_at = now(), updated_at = now(), last_error = NULL,
    failed_at = NULL
WHERE id = %(id)s AND source = 'workflow' AND state = 'uncertain'
RETURNING run_id, kind, COALESCE(meta ->> 'workflow_name', '') AS workflow_name

-- name: resume_after_resolve
-- A suspended workflow execution back to running after a resolution.
UPDATE azync_workflow_executions
SET state = 'running', failure_reason = NULL, updated_at = now()
WHERE id = %(id)s AND state = 'suspended'

-- name: vacuum_executions
-- The terminal workflow executions completed before the cutoff deleted.
-- Foreign keys cascade to history, signals, timers and the run's jobs.
DELETE FROM azync_workflow_executions
WHERE state IN ('succeeded', 'failed', 'cancelled')
  AND completed_at IS NOT NULL
  AND completed_at < now() - make_interval(secs => %(retention)s)

-- name: list_stalled
-- Running executions idle past a cutoff with no live job, oldest first.
-- Inclusive: olderThan 0 finds an execution updated in this very clock tick.
SELECT e.id, e.name FROM azync_workflow_executions e
WHERE e.state = 'running'
  AND e.updated_at <= now() - make_interval(secs => %(older_than)s)
  AND NOT EXISTS (
      SELECT 1 FROM azync_jobs j
      WHERE j.run_id = e.id AND j.source = 'workflow'
        AND j.state IN ('pending', 'scheduled', 'active', 'uncertain'))
ORDER BY e.updated_at
LIMIT %(limit)s
