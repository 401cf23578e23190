-- Workflow-as-code executions (driver.WorkflowStore) on SQLite. Instants are µs since the
-- epoch; :now is the transaction clock (Tx.now); JSON is text.

-- name: insert_execution
-- A workflow execution inserted unless a live one of its name holds the business key.
-- Dedupes against a live (running or suspended) execution holding the same business
-- key; the conflict target is azync_workflow_executions_live_biz_idx.
INSERT INTO azync_workflow_executions
    (id, name, version, business_idempotency_key, task_queue, input, meta,
     created_at, updated_at)
VALUES (:id, :name, :version, NULLIF(:biz_key, ''), :task_queue, :input, :meta, :now, :now)
ON CONFLICT (name, business_idempotency_key)
    WHERE business_idempotency_key IS NOT NULL AND state IN ('running', 'suspended')
DO NOTHING
RETURNING id

-- name: find_live_execution
-- The live execution of a name holding a business key.
SELECT id FROM azync_workflow_executions
WHERE name = :name AND business_idempotency_key = :biz_key
  AND state IN ('running', 'suspended')

-- name: insert_started_history
-- The WorkflowStarted history event of a new execution.
INSERT INTO azync_workflow_history (workflow_id, event_seq, event_type, payload, created_at)
VALUES (:id, 1, 'WorkflowStarted', :input, :now)

-- name: insert_task
-- A workflow-task job: pending when due by the transaction clock, scheduled otherwise.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, meta,
     enqueued_at, created_at, updated_at, run_id)
VALUES (:id, 'workflow', :kind,
        CASE WHEN COALESCE(:run_at, :now) > :now THEN 'scheduled' ELSE 'pending' END,
        COALESCE(:run_at, :now), 0, 0, '{}', :now, :now, :now, :workflow_id)

-- name: get_execution
-- One workflow execution by id.
SELECT id, name, version, state, business_idempotency_key, task_queue, input, result,
       failure_reason, meta, created_at, updated_at, completed_at
FROM azync_workflow_executions
WHERE id = :id

-- name: list_executions
-- A page of workflow executions matching {where}, newest first.
-- {where} holds the filters and the keyset position; LIMIT -1 is no limit.
SELECT id, name, version, state, business_idempotency_key, task_queue, input, result,
       failure_reason, meta, created_at, updated_at, completed_at
FROM azync_workflow_executions
WHERE {where}
ORDER BY created_at DESC, id DESC
LIMIT :limit OFFSET :offset

-- name: count_executions
-- How many workflow executions match {where} (listing.header_where).
SELECT count(*) AS n
FROM azync_workflow_executions
WHERE {where}

-- name: execution_exists
-- Whether a workflow execution exists.
SELECT EXISTS (SELECT 1 FROM azync_workflow_executions WHERE id = :id) AS found

-- name: get_header
-- A workflow execution's name and state.
-- BEGIN IMMEDIATE already serialises writers, so no row lock is needed for the seq.
SELECT name, state FROM azync_workflow_executions WHERE id = :id

-- name: next_history_seq
-- The next history sequence number of an execution.
SELECT COALESCE(max(event_seq), 0) + 1 AS seq
FROM azync_workflow_history WHERE workflow_id = :id

-- name: insert_history
-- One history event appended unless its operation result was recorded already.
-- The conflict target is azync_workflow_history_exec_key_idx: only an operation result
-- carrying an execution_key can conflict; everything else is a plain insert.
INSERT INTO azync_workflow_history (workflow_id, event_seq, event_type, payload, created_at)
VALUES (:id, :seq, :type, :payload, :now)
ON CONFLICT (workflow_id, event_type, json_extract(payload, '$.execution_key'))
    WHERE json_extract(payload, '$.execution_key') IS NOT NULL
      AND event_type IN ('OperationCompleted', 'OperationFailed')
DO NOTHING

-- name: find_history_by_exec_key
-- The sequence number of the operation result recorded for an execution key.
SELECT event_seq AS seq FROM azync_workflow_history
WHERE workflow_id = :id AND event_type = :type
  AND json_extract(payload, '$.execution_key') = :execution_key

-- name: list_history
-- An execution's history, in sequence order.
SELECT workflow_id, event_seq, event_type, payload, created_at
FROM azync_workflow_history
WHERE workflow_id = :id
ORDER BY event_seq

-- name: insert_signal
-- A signal added to an execution's inbox unless its message id was seen.
INSERT INTO azync_workflow_signals (id, workflow_id, name, message_id, payload, created_at)
VALUES (:id, :workflow_id, :name, NULLIF(:message_id, ''), :payload, :now)
ON CONFLICT (workflow_id, name, message_id) WHERE message_id IS NOT NULL DO NOTHING
RETURNING id

-- name: complete_execution
-- A workflow execution completed as succeeded with its result.
-- No state guard (azync's CompleteWorkflow settles from any state).
UPDATE azync_workflow_executions
SET state = 'succeeded', result = :result, completed_at = :now, updated_at = :now
WHERE id = :id

-- name: fail_execution
-- A workflow execution completed as failed with a reason.
UPDATE azync_workflow_executions
SET state = 'failed', failure_reason = :reason, completed_at = :now, updated_at = :now
WHERE id = :id

-- name: cancel_execution
-- A non-terminal workflow execution cancelled.
UPDATE azync_workflow_executions
SET state = 'cancelled', completed_at = :now, updated_at = :now
WHERE id = :id AND state NOT IN ('succeeded', 'failed', 'cancelled')

-- name: suspend_execution
-- A non-terminal workflow execution suspended with a reason.
UPDATE azync_workflow_executions
SET state = 'suspended', failure_reason = :reason, updated_at = :now
WHERE id = :id AND state NOT IN ('succeeded', 'failed', 'cancelled')

-- name: resume_execution
-- A suspended workflow execution back to running.
UPDATE azync_workflow_executions
SET state = 'running', failure_reason = NULL, updated_at = :now
WHERE id = :id AND state = 'suspended'

-- name: find_live_operation
-- The live operation job of a workflow holding an execution key.
-- Live means pending, scheduled, active or uncertain (azync_jobs_workflow_exec_key_idx).
SELECT id FROM azync_jobs
WHERE source = 'workflow' AND run_id = :workflow_id
  AND json_extract(meta, '$.execution_key') = :execution_key
  AND state IN ('pending', 'scheduled', 'active', 'uncertain')
LIMIT 1

-- name: insert_operation
-- One operation job of a workflow inserted, pending or scheduled by its run_at.
INSERT INTO azync_jobs
    (id, source, kind, state, payload, meta, run_at, max_attempts, max_attempts_explicit,
     enqueued_at, created_at, updated_at, run_id)
VALUES (:id, 'workflow', :kind,
        CASE WHEN COALESCE(:run_at, :now) > :now THEN 'scheduled' ELSE 'pending' END,
        :payload, :meta, COALESCE(:run_at, :now), :max_attempts, 1, :now, :now, :now,
        :workflow_id)

-- name: mark_job_uncertain
-- A leased operation job marked uncertain, fenced on its lease token.
UPDATE azync_jobs
SET state = 'uncertain', lease_until = NULL, lease_token = NULL,
    last_error = :reason, failed_at = :now, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :lease_token AND source = 'workflow'
RETURNING run_id

-- name: suspend_for_uncertain
-- The execution of an uncertain operation suspended.
UPDATE azync_workflow_executions
SET state = 'suspended', failure_reason = :reason, updated_at = :now
WHERE id = :run_id AND state IN ('running', 'suspended')

-- name: resolve_complete
-- An uncertain operation job resolved as succeeded with its result.
UPDATE azync_jobs
SET state = 'succeeded', completed_at = :now, updated_at = :now, result = :result,
    last_error = NULL
WHERE id = :id AND source = 'workflow' AND state = 'uncertain'
RETURNING run_id, kind, COALESCE(json_extract(meta, '$.workflow_name'), '') AS workflow_name

-- name: resolve_fail
-- An uncertain operation job resolved as dead.
UPDATE azync_jobs
SET state = 'dead', failed_at = :now, updated_at = :now, last_error = 'uncertain: fail'
WHERE id = :id AND source = 'workflow' AND state = 'uncertain'
RETURNING run_id, kind, COALESCE(json_extract(meta, '$.workflow_name'), '') AS workflow_name

-- name: resolve_retry
-- An uncertain operation job resolved to run again now.
UPDATE azync_jobs
SET state = 'pending', run_at = :now, updated_at = :now, last_error = NULL, failed_at = NULL
WHERE id = :id AND source = 'workflow' AND state = 'uncertain'
RETURNING run_id, kind, COALESCE(json_extract(meta, '$.workflow_name'), '') AS workflow_name

-- name: resume_after_resolve
-- A suspended workflow execution back to running after a resolution.
UPDATE azync_workflow_executions
SET state = 'running', failure_reason = NULL, updated_at = :now
WHERE id = :id AND state = 'suspended'

-- name: vacuum_executions
-- The terminal workflow executions completed before the cutoff deleted.
-- Foreign keys cascade to history, signals, timers and the run's jobs.
DELETE FROM azync_workflow_executions
WHERE state IN ('succeeded', 'failed', 'cancelled')
  AND completed_at IS NOT NULL
  AND completed_at < :now - :retention

-- name: list_stalled
-- Running executions idle past a cutoff with no live job, oldest first.
-- Inclusive: olderThan 0 finds an execution updated in this very clock tick.
SELECT e.id, e.name FROM azync_workflow_executions e
WHERE e.state = 'running'
  AND e.updated_at <= :now - :older_than
  AND NOT EXISTS (
      SELECT 1 FROM azync_jobs j
      WHERE j.run_id = e.id AND j.source = 'workflow'
        AND j.state IN ('pending', 'scheduled', 'active', 'uncertain'))
ORDER BY e.updated_at
LIMIT :limit
