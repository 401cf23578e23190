-- Statement text the other files of qctl.systems.dbos.queries name as tokens
-- (qctl_kit/sqlfile.py's fragments.sql).

-- name: status_columns
-- A workflow_status row under alias ws by WorkflowStatus's field names.
-- WorkflowStatus of dbos/_sys_db.py; reads.WorkflowRow types it.
ws.workflow_uuid AS workflow_id, ws.status, ws.name, ws.class_name, ws.config_name,
ws.queue_name, ws.executor_id, ws.application_version AS app_version,
ws.application_id AS app_id, ws.recovery_attempts, ws.created_at, ws.updated_at,
ws.started_at_epoch_ms AS dequeued_at, ws.completed_at, ws.workflow_timeout_ms,
ws.workflow_deadline_epoch_ms, ws.delay_until_epoch_ms, ws.deduplication_id,
ws.priority, ws.queue_partition_key, ws.forked_from, ws.was_forked_from,
ws.parent_workflow_id, ws.authenticated_user, ws.assumed_role, ws.authenticated_roles,
ws.attributes, ws.schedule_name, ws.application_name
