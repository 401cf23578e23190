-- qctl's reads of DBOS executors and its recovery of a dead executor's workflows
-- (qctl.systems.dbos.executors). DBOS keeps no table of executors: an executor is the
-- executor_id its workflow_status rows carry (dbos/_migration.py). Tokens follow
-- qctl_kit/sqlfile.py; {schema}. is the schema on PostgreSQL, nothing on SQLite;
-- {executor_ids} and {ids} are one %s per value, filled per call.

-- name: executors_pending
-- Per executor, application version and name: its PENDING workflows.
-- With the last time one started (or changed, if it has no start time), on DBOS's
-- partial index idx_workflow_status_pending.
SELECT executor_id, application_version, application_name, count(*) AS n,
       max(coalesce(started_at_epoch_ms, updated_at)) AS last
FROM {schema}.workflow_status
WHERE status = 'PENDING' AND executor_id IS NOT NULL
GROUP BY executor_id, application_version, application_name;

-- name: executors_started
-- As executors_pending, the workflows started since %s (epoch ms).
-- On DBOS's idx_workflow_status_started_at.
SELECT executor_id, application_version, application_name, count(*) AS n,
       max(started_at_epoch_ms) AS last
FROM {schema}.workflow_status
WHERE started_at_epoch_ms >= %s AND executor_id IS NOT NULL
GROUP BY executor_id, application_version, application_name;

-- name: executors_completed
-- As executors_pending, the workflows completed since %s (epoch ms).
-- On DBOS's idx_workflow_status_completed_at.
SELECT executor_id, application_version, application_name, count(*) AS n,
       max(completed_at) AS last
FROM {schema}.workflow_status
WHERE completed_at >= %s AND executor_id IS NOT NULL
GROUP BY executor_id, application_version, application_name;

-- name: last_steps
-- Per executor of {executor_ids}, the last step its PENDING workflows recorded.
-- operation_outputs.completed_at_epoch_ms, written as
-- SystemDatabase.record_operation_result of dbos/_sys_db.py records a step.
SELECT ws.executor_id, max(o.completed_at_epoch_ms) AS last
FROM {schema}.workflow_status ws
JOIN {schema}.operation_outputs o ON o.workflow_uuid = ws.workflow_uuid
WHERE ws.status = 'PENDING' AND ws.executor_id IN ({executor_ids})
GROUP BY ws.executor_id;

-- name: recover_targets
-- The workflows a recovery re-enqueues, oldest first, with their version.
-- {where}: reads.filter_sql's conditions, PENDING of the executors.
SELECT ws.workflow_uuid AS workflow_id, ws.application_version
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.created_at, ws.workflow_uuid;

-- name: executor_exists
-- Whether any workflow names executor %s.
-- DBOS has no index on executor_id any more: this reads until a row matches.
SELECT 1 AS x FROM {schema}.workflow_status WHERE executor_id = %s LIMIT 1;

-- name: reenqueue
-- Each of {ids} still PENDING on one of {executor_ids} back to ENQUEUED.
-- With no owner and no start time, on its own queue or DBOS's internal one (%s): what
-- SystemDatabase.reenqueue_for_recovery (dbos/_sys_db.py) writes for _recover_workflow
-- (dbos/_recovery.py).
UPDATE {schema}.workflow_status
SET status = 'ENQUEUED', owner_xid = NULL, started_at_epoch_ms = NULL, updated_at = {now_ms},
    queue_name = coalesce(queue_name, %s)
WHERE workflow_uuid IN ({ids}) AND status = 'PENDING' AND executor_id IN ({executor_ids});
