-- qctl's reads of a DBOS system database (qctl.systems.dbos.reads), on PostgreSQL and
-- SQLite alike: the tables of dbos/_migration.py, rows by the field names of
-- WorkflowStatus and StepInfo (dbos/_sys_db.py). Tokens follow qctl_kit/sqlfile.py;
-- {schema}. is the schema on PostgreSQL, nothing on SQLite; {ids} is one %s per value.

-- name: workflow_exists
-- Whether workflow %s exists (workflow_status' primary key).
SELECT 1 AS x FROM {schema}.workflow_status WHERE workflow_uuid = %s;

-- name: workflows_by_prefix
-- Up to 6 workflows whose id begins with the LIKE pattern %s, shortest id first (a
-- parent's before its children, which DBOS names <parent id>-<n>).
SELECT workflow_uuid, parent_workflow_id
FROM {schema}.workflow_status
WHERE workflow_uuid LIKE %s ESCAPE '\'
ORDER BY length(workflow_uuid), workflow_uuid
LIMIT 6;

-- name: prefix_outside
-- Whether a workflow matches the LIKE pattern %s but not the pattern %s (a prefix that
-- names more than one workflow's tree).
SELECT 1 AS x
FROM {schema}.workflow_status
WHERE workflow_uuid LIKE %s ESCAPE '\' AND workflow_uuid NOT LIKE %s ESCAPE '\'
LIMIT 1;

-- name: get_workflow
-- One workflow by id, without its payloads.
SELECT {status_columns} FROM {schema}.workflow_status ws WHERE ws.workflow_uuid = %s;

-- name: get_workflow_payloads
-- One workflow by id with its input, output and error: DBOS keeps them in
-- workflow_input/workflow_output, older rows in workflow_status itself.
SELECT {status_columns},
       coalesce(wi.inputs, ws.inputs) AS input, coalesce(wo.output, ws.output) AS output,
       coalesce(wo.error, ws.error) AS error, ws.serialization
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_input wi ON wi.workflow_uuid = ws.workflow_uuid
LEFT JOIN {schema}.workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid
WHERE ws.workflow_uuid = %s;

-- name: raw_input
-- Workflow %s's input as stored (workflow_input, or workflow_status for older rows).
SELECT coalesce(x.inputs, ws.inputs) AS v
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_input x ON x.workflow_uuid = ws.workflow_uuid
WHERE ws.workflow_uuid = %s;

-- name: raw_output
-- Workflow %s's output as stored (workflow_output, or workflow_status for older rows).
SELECT coalesce(x.output, ws.output) AS v
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_output x ON x.workflow_uuid = ws.workflow_uuid
WHERE ws.workflow_uuid = %s;

-- name: raw_error
-- Workflow %s's error as stored (workflow_output, or workflow_status for older rows).
SELECT coalesce(x.error, ws.error) AS v
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_output x ON x.workflow_uuid = ws.workflow_uuid
WHERE ws.workflow_uuid = %s;

-- name: raw_step_output
-- The output of step %s of workflow %s as stored (operation_outputs).
SELECT output AS v FROM {schema}.operation_outputs WHERE workflow_uuid = %s AND function_id = %s;

-- name: raw_step_error
-- The error of step %s of workflow %s as stored (operation_outputs).
SELECT error AS v FROM {schema}.operation_outputs WHERE workflow_uuid = %s AND function_id = %s;

-- name: raw_event
-- Event %s of workflow %s as stored (workflow_events, DBOS.set_event).
SELECT value AS v FROM {schema}.workflow_events WHERE workflow_uuid = %s AND key = %s;

-- name: raw_message
-- Message %s sent to workflow %s as stored (notifications, DBOS.send).
SELECT message AS v
FROM {schema}.notifications
WHERE destination_uuid = %s AND message_uuid = %s;

-- name: raw_stream
-- The value at an offset of a stream of a workflow as stored (streams,
-- DBOS.write_stream).
SELECT value AS v FROM {schema}.streams WHERE workflow_uuid = %s AND key = %s AND "offset" = %s;

-- name: list_steps
-- A workflow's recorded steps (operation_outputs, StepInfo's names), by function id.
SELECT function_id, function_name, output, error, child_workflow_id,
       started_at_epoch_ms, completed_at_epoch_ms, serialization
FROM {schema}.operation_outputs
WHERE workflow_uuid = %s
ORDER BY function_id;

-- name: steps_of
-- The steps of the workflows {ids} on one timeline, by start, at most %s: no payloads,
-- only whether a step failed.
SELECT workflow_uuid AS workflow_id, function_id, function_name, child_workflow_id,
       started_at_epoch_ms, completed_at_epoch_ms, error IS NOT NULL AS failed
FROM {schema}.operation_outputs
WHERE workflow_uuid IN ({ids})
ORDER BY started_at_epoch_ms, workflow_uuid, function_id
LIMIT %s;

-- name: children
-- The child workflows of any of {ids}, oldest first, at most %s (over DBOS's index on
-- parent_workflow_id).
SELECT workflow_uuid AS workflow_id, name, status, created_at, parent_workflow_id
FROM {schema}.workflow_status
WHERE parent_workflow_id IN ({ids})
ORDER BY created_at, workflow_uuid
LIMIT %s;

-- name: related_parent_workflow_id
-- The children of workflow %s, oldest first (DBOS's index on parent_workflow_id).
SELECT workflow_uuid AS workflow_id, name, status, created_at
FROM {schema}.workflow_status
WHERE parent_workflow_id = %s
ORDER BY created_at, workflow_uuid;

-- name: related_forked_from
-- The forks of workflow %s, oldest first (DBOS's index on forked_from).
SELECT workflow_uuid AS workflow_id, name, status, created_at
FROM {schema}.workflow_status
WHERE forked_from = %s
ORDER BY created_at, workflow_uuid;

-- name: list_events
-- A workflow's events (workflow_events, DBOS.set_event), by key.
SELECT key, value, serialization FROM {schema}.workflow_events WHERE workflow_uuid = %s ORDER BY key;

-- name: list_streams
-- The values a workflow wrote to its streams (streams, DBOS.write_stream), by key and
-- offset (the table's primary key).
SELECT key, "offset", function_id, value, serialization
FROM {schema}.streams
WHERE workflow_uuid = %s
ORDER BY key, "offset";

-- name: list_messages
-- Messages sent to a workflow (notifications, DBOS.send), oldest first.
SELECT message_uuid, topic, message, created_at_epoch_ms, consumed, serialization
FROM {schema}.notifications
WHERE destination_uuid = %s
ORDER BY created_at_epoch_ms, message_uuid;

-- name: queue_limits
-- Every registered queue's limits (queues, DBOSClient.register_queue).
SELECT name, concurrency, worker_concurrency, rate_limit_max, rate_limit_period_sec,
       partition_concurrency, polling_interval_sec, application_name
FROM {schema}.queues;

-- name: queue_in_flight
-- Per queue, its ENQUEUED and PENDING workflows and the oldest one's created_at. The
-- WHERE repeats the predicate of DBOS's partial index idx_workflow_status_in_flight_v2
-- word for word, so both backends answer from the index (index-only on PostgreSQL).
SELECT queue_name, status, count(*) AS n, min(created_at) AS oldest
FROM {schema}.workflow_status
WHERE status IN ('ENQUEUED', 'PENDING')
GROUP BY queue_name, status;

-- name: queue_delayed
-- As queue_in_flight, the DELAYED workflows, on DBOS's partial index
-- idx_workflow_status_delayed.
SELECT queue_name, status, count(*) AS n, min(created_at) AS oldest
FROM {schema}.workflow_status
WHERE status = 'DELAYED'
GROUP BY queue_name, status;

-- name: list_workflows
-- A page of workflows, newest first ({where}: reads.filter_sql's conditions and the
-- keyset cursor, whose created_at <= %s walks DBOS's workflow_status_created_at_index
-- backwards from the cursor), at most %s.
SELECT {status_columns}
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.created_at DESC, ws.workflow_uuid DESC
LIMIT %s;

-- name: list_workflows_payloads
-- As list_workflows, with each workflow's output and error read from their first
-- {list_payload} characters, their whole lengths and serialization.
SELECT {status_columns},
       substr(coalesce(wo.output, ws.output), 1, {list_payload}) AS output,
       length(coalesce(wo.output, ws.output)) AS output_length,
       substr(coalesce(wo.error, ws.error), 1, {list_payload}) AS error,
       length(coalesce(wo.error, ws.error)) AS error_length,
       ws.serialization
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid
WHERE {where}
ORDER BY ws.created_at DESC, ws.workflow_uuid DESC
LIMIT %s;

-- name: queue_workflows
-- A queue's running (PENDING) workflows, then its ENQUEUED ones in the order DBOS
-- dequeues them (priority, then oldest first: SystemDatabase.start_queued_workflows of
-- dbos/_sys_db.py), at most %s.
SELECT {status_columns}
FROM {schema}.workflow_status ws
WHERE ws.status IN ('ENQUEUED', 'PENDING') AND ws.queue_name = %s
ORDER BY CASE WHEN ws.status = 'PENDING' THEN 0 ELSE 1 END, ws.priority, ws.created_at,
         ws.workflow_uuid
LIMIT %s;

-- name: matching_ids
-- Id, name and status of the workflows {where} matches (reads.filter_sql's conditions),
-- newest first, at most %s: the targets of a bulk action.
SELECT ws.workflow_uuid AS workflow_id, ws.name, ws.status
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.created_at DESC, ws.workflow_uuid DESC
LIMIT %s;

-- name: target_page
-- A keyset page in id order of the workflows {where} matches (reads.filter_sql's
-- conditions and, after the first page, ws.workflow_uuid > the last id), at most %s:
-- id, status and name only (a verb's selection).
SELECT ws.workflow_uuid, ws.status, ws.name
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.workflow_uuid
LIMIT %s;

-- name: target_states
-- Id, status, name, updated_at and delay_until_epoch_ms of those of {ids} that exist (a
-- verb's re-check around its write).
SELECT workflow_uuid, status, name, updated_at, delay_until_epoch_ms
FROM {schema}.workflow_status
WHERE workflow_uuid IN ({ids});
