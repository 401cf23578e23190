-- qctl's reads of a DBOS system database (qctl.systems.dbos.reads), on PostgreSQL and
-- SQLite alike: the tables of dbos/_migration.py, rows by the field names of
-- WorkflowStatus and StepInfo (dbos/_sys_db.py). Tokens follow qctl_kit/sqlfile.py;
-- {schema}. is the schema on PostgreSQL, nothing on SQLite; {ids} is one %s per value.

-- name: workflow_exists
-- Whether workflow %s exists (workflow_status' primary key).
SELECT 1 AS x FROM {schema}.workflow_status WHERE workflow_uuid = %s;

-- name: workflows_by_prefix
-- Up to 6 workflows whose id begins with the LIKE pattern %s, shortest first.
-- A parent's id before its children's, which DBOS names <parent id>-<n>.
SELECT workflow_uuid, parent_workflow_id
FROM {schema}.workflow_status
WHERE workflow_uuid LIKE %s ESCAPE '\'
ORDER BY length(workflow_uuid), workflow_uuid
LIMIT 6;

-- name: prefix_outside
-- Whether a workflow matches the LIKE pattern %s but not the pattern %s.
-- Such a prefix names more than one workflow's tree.
SELECT 1 AS x
FROM {schema}.workflow_status
WHERE workflow_uuid LIKE %s ESCAPE '\' AND workflow_uuid NOT LIKE %s ESCAPE '\'
LIMIT 1;

-- name: get_workflow
-- One workflow by id, without its payloads.
SELECT {status_columns} FROM {schema}.workflow_status ws WHERE ws.workflow_uuid = %s;

-- name: get_workflow_payloads
-- One workflow by id with its input, output and error.
-- DBOS keeps them in workflow_input/workflow_output, older rows in workflow_status
-- itself.
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
-- A stream value of a workflow as stored (streams, DBOS.write_stream).
-- By workflow %s, key %s and offset %s.
SELECT value AS v FROM {schema}.streams WHERE workflow_uuid = %s AND key = %s AND "offset" = %s;

-- name: list_steps
-- A workflow's recorded steps (operation_outputs, StepInfo's names), by function id.
SELECT function_id, function_name, output, error, child_workflow_id,
       started_at_epoch_ms, completed_at_epoch_ms, serialization
FROM {schema}.operation_outputs
WHERE workflow_uuid = %s
ORDER BY function_id;

-- name: steps_of
-- The steps of the workflows {ids} on one timeline, by start, at most %s.
-- No payloads, only whether a step failed.
SELECT workflow_uuid AS workflow_id, function_id, function_name, child_workflow_id,
       started_at_epoch_ms, completed_at_epoch_ms, error IS NOT NULL AS failed
FROM {schema}.operation_outputs
WHERE workflow_uuid IN ({ids})
ORDER BY started_at_epoch_ms, workflow_uuid, function_id
LIMIT %s;

-- name: children
-- The child workflows of any of {ids}, oldest first, at most %s.
-- Over DBOS's index on parent_workflow_id.
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
-- The values a workflow wrote to its streams (streams, DBOS.write_stream).
-- By key and offset (the table's primary key).
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
-- Per queue, its ENQUEUED and PENDING workflows and the oldest one's created_at.
-- The WHERE repeats the predicate of DBOS's partial index
-- idx_workflow_status_in_flight_v2 word for word, so both backends answer from the
-- index (index-only on PostgreSQL).
SELECT queue_name, status, count(*) AS n, min(created_at) AS oldest
FROM {schema}.workflow_status
WHERE status IN ('ENQUEUED', 'PENDING')
GROUP BY queue_name, status;

-- name: queue_delayed
-- As queue_in_flight, the DELAYED workflows.
-- On DBOS's partial index idx_workflow_status_delayed.
SELECT queue_name, status, count(*) AS n, min(created_at) AS oldest
FROM {schema}.workflow_status
WHERE status = 'DELAYED'
GROUP BY queue_name, status;

-- name: list_workflows
-- A page of workflows {where} matches, newest first, at most %s.
-- {where}: reads.filter_sql's conditions and the keyset cursor, whose created_at <= %s
-- walks DBOS's workflow_status_created_at_index backwards from the cursor.
SELECT {status_columns}
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.created_at DESC, ws.workflow_uuid DESC
LIMIT %s;

-- name: list_workflows_payloads
-- As list_workflows, with each workflow's output and error.
-- Read from their first {list_payload} characters, with their whole lengths and
-- serialization.
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
-- A queue's PENDING workflows, then its ENQUEUED ones as DBOS dequeues them.
-- Priority, then oldest first (SystemDatabase.start_queued_workflows of
-- dbos/_sys_db.py), at most %s.
SELECT {status_columns}
FROM {schema}.workflow_status ws
WHERE ws.status IN ('ENQUEUED', 'PENDING') AND ws.queue_name = %s
ORDER BY CASE WHEN ws.status = 'PENDING' THEN 0 ELSE 1 END, ws.priority, ws.created_at,
         ws.workflow_uuid
LIMIT %s;

-- name: matching_ids
-- Id, name and status of the workflows {where} matches, newest first.
-- {where}: reads.filter_sql's conditions; at most %s: the targets of a bulk action.
SELECT ws.workflow_uuid AS workflow_id, ws.name, ws.status
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.created_at DESC, ws.workflow_uuid DESC
LIMIT %s;

-- name: target_page
-- A keyset page in id order of the workflows {where} matches, at most %s.
-- {where}: reads.filter_sql's conditions and, after the first page, conditions.sql's
-- id_after; id, status and name only (a verb's selection).
SELECT ws.workflow_uuid, ws.status, ws.name
FROM {schema}.workflow_status ws
WHERE {where}
ORDER BY ws.workflow_uuid
LIMIT %s;

-- name: target_states
-- The status and times of those of {ids} that exist.
-- Id, status, name, updated_at and delay_until_epoch_ms: a verb's re-check around its
-- write.
SELECT workflow_uuid, status, name, updated_at, delay_until_epoch_ms
FROM {schema}.workflow_status
WHERE workflow_uuid IN ({ids});

-- name: error_groups
-- The failed workflows {where} matches, grouped by error, name and status.
-- Failed: reads.FAILED; {where}: reads.filter_sql's conditions. Grouped by the error's
-- first {list_payload} characters and serialization too; per group its count, whole
-- length, first and last created_at; the %s groups with the latest workflows (DBOS's
-- idx_workflow_status_failed). The error is workflow_output's, as
-- SystemDatabase.update_workflow_outcome (dbos/_sys_db.py) writes it, or
-- workflow_status' for older rows.
SELECT substr(coalesce(wo.error, ws.error), 1, {list_payload}) AS error, ws.serialization,
       count(*) AS count, max(length(coalesce(wo.error, ws.error))) AS length, ws.name,
       ws.status, min(ws.created_at) AS first_created_at, max(ws.created_at) AS last_created_at
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid
WHERE {where} AND ws.status IN ('ERROR', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED')
GROUP BY substr(coalesce(wo.error, ws.error), 1, {list_payload}), ws.serialization, ws.name,
         ws.status
ORDER BY max(ws.created_at) DESC
LIMIT %s;

-- name: error_group_newest
-- The id of an error group's newest workflow.
-- Among the failed ones {where} matches, created at %s with an error beginning as %s
-- (NULL matches NULL), the greatest id; over idx_workflow_status_failed's (status,
-- created_at).
SELECT ws.workflow_uuid
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid
WHERE {where} AND ws.status IN ('ERROR', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED')
  AND ws.created_at = %s
  AND substr(coalesce(wo.error, ws.error), 1, {list_payload}) IS NOT DISTINCT FROM %s
ORDER BY ws.workflow_uuid DESC
LIMIT 1;

-- name: list_schedules
-- The schedules {where} matches, by name.
-- {where}: conditions.sql's status, workflow_name and schedule_name prefix; the columns
-- SystemDatabase._list_schedules (dbos/_sys_db.py) reads from workflow_schedules.
SELECT schedule_id, schedule_name, workflow_name, workflow_class_name, schedule, status,
       context, last_fired_at, automatic_backfill, cron_timezone, queue_name,
       application_name
FROM {schema}.workflow_schedules
WHERE {where}
ORDER BY schedule_name;

-- name: existing_ids
-- Those of {ids} that name a workflow (workflow_status' primary key).
SELECT workflow_uuid FROM {schema}.workflow_status WHERE workflow_uuid IN ({ids});

-- name: fork_facts
-- Per workflow of {ids}: its queue_partition_key and highest function id.
-- What a fork or rewind from a step (SystemDatabase.fork_workflow of dbos/_sys_db.py)
-- is checked against.
SELECT ws.workflow_uuid, ws.queue_partition_key,
       (SELECT max(o.function_id)
        FROM {schema}.operation_outputs o
        WHERE o.workflow_uuid = ws.workflow_uuid) AS last
FROM {schema}.workflow_status ws
WHERE ws.workflow_uuid IN ({ids});

-- name: queue_partitioned
-- A registered queue's partition limits, by name %s.
-- The queues table, as SystemDatabase.get_queue (dbos/_sys_db.py) reads it; no row:
-- unregistered.
SELECT partition_concurrency, partition_worker_concurrency, partition_rate_limit_max
FROM {schema}.queues
WHERE name = %s;

-- name: list_application_versions
-- Every application version, newest first.
-- As SystemDatabase.list_application_versions (dbos/_sys_db.py) orders them, without
-- its application filter.
SELECT version_id, version_name, version_timestamp, created_at, application_name
FROM {schema}.application_versions
ORDER BY version_timestamp DESC;

-- name: status_in_flight
-- ENQUEUED and PENDING workflows per status.
-- On DBOS's partial index idx_workflow_status_in_flight_v2 (its predicate word for
-- word, as queue_in_flight).
SELECT status, count(*) AS n
FROM {schema}.workflow_status
WHERE status IN ('ENQUEUED', 'PENDING')
GROUP BY status;

-- name: status_delayed
-- DELAYED workflows, on DBOS's partial index idx_workflow_status_delayed.
SELECT status, count(*) AS n FROM {schema}.workflow_status WHERE status = 'DELAYED' GROUP BY status;

-- name: status_failed
-- ERROR, CANCELLED and MAX_RECOVERY_ATTEMPTS_EXCEEDED workflows per status.
-- On DBOS's partial index idx_workflow_status_failed (its predicate word for word).
SELECT status, count(*) AS n
FROM {schema}.workflow_status
WHERE status IN ('ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED')
GROUP BY status;

-- name: workflow_total_postgres
-- The planner's row count of workflow_status in schema %s, not a count.
-- reltuples, or while it is -1 (the table never analyzed, a young database) the
-- statistics collector's live rows, an estimate as cheap.
SELECT greatest(CASE WHEN c.reltuples < 0 THEN s.n_live_tup ELSE c.reltuples END, 0)::bigint AS n
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
WHERE n.nspname = %s AND c.relname = 'workflow_status';

-- name: workflow_total_sqlite
-- Every workflow, counted: SQLite reads its smallest index.
SELECT count(*) AS n FROM {schema}.workflow_status;

-- name: finished_buckets
-- Workflows completed since %s per name, queue, status and bucket.
-- Buckets of {bucket_ms} ms (bucket: epoch ms where it starts), over DBOS's
-- idx_workflow_status_completed_at: the overview's throughput. completed_at is what
-- SystemDatabase.update_workflow_outcome (dbos/_sys_db.py) writes.
SELECT name, queue_name, status, completed_at / {bucket_ms} * {bucket_ms} AS bucket,
       count(*) AS n
FROM {schema}.workflow_status
WHERE completed_at >= %s
GROUP BY 1, 2, 3, 4;

-- name: overview_in_flight
-- ENQUEUED and PENDING workflows per name, queue and status.
-- On DBOS's partial index idx_workflow_status_in_flight_v2 (its predicate word for
-- word).
SELECT name, queue_name, status, count(*) AS n
FROM {schema}.workflow_status
WHERE status IN ('ENQUEUED', 'PENDING')
GROUP BY name, queue_name, status;

-- name: overview_delayed
-- DELAYED workflows per name, queue and status.
-- On DBOS's partial index idx_workflow_status_delayed.
SELECT name, queue_name, status, count(*) AS n
FROM {schema}.workflow_status
WHERE status = 'DELAYED'
GROUP BY name, queue_name, status;

-- name: latest_errors
-- The 10 newest ERROR workflows with their error.
-- The error is workflow_output's, or workflow_status' for older rows; over DBOS's
-- idx_workflow_status_failed (status, created_at).
SELECT ws.workflow_uuid AS workflow_id, ws.name, ws.created_at,
       coalesce(wo.error, ws.error) AS error, ws.serialization
FROM {schema}.workflow_status ws
LEFT JOIN {schema}.workflow_output wo ON wo.workflow_uuid = ws.workflow_uuid
WHERE ws.status = 'ERROR'
ORDER BY ws.created_at DESC
LIMIT 10;

-- name: watch_latest
-- The latest {column}: where a watch starts.
-- {column} is one of reads.WATCH_EVENTS' columns, each indexed by DBOS. DBOS keeps no
-- change log, so a watch polls these columns.
SELECT max({column}) AS m FROM {schema}.workflow_status;

-- name: watch_at
-- The workflows whose {column} is %s: those a watch starting there has seen.
SELECT workflow_uuid FROM {schema}.workflow_status WHERE {column} = %s;

-- name: watch_since
-- Workflows whose {column} is at or after %s, oldest first, at most %s.
-- What a watch reports next.
SELECT workflow_uuid AS workflow_id, name, status, queue_name, {column} AS at
FROM {schema}.workflow_status
WHERE {column} >= %s
ORDER BY {column}
LIMIT %s;
