-- qctl's statements around the actions of qctl.systems.dbos.actions, on PostgreSQL and
-- SQLite alike: the workflow verbs go through DBOSClient (dbos/_client.py); vacuum is
-- qctl's own (DBOS has no garbage collection), deleting the rows
-- SystemDatabase._delete_workflows (dbos/_sys_db.py) deletes. Tokens follow
-- qctl_kit/sqlfile.py; {schema}. is the schema on PostgreSQL, nothing on SQLite; {ids}
-- and {statuses} are one %s per value, filled per call.

-- name: writable
-- A statement that reads nothing, run as a write.
-- Run before DBOSClient is opened, so a read-only session refuses the action before the
-- dbos package is imported.
SELECT 1;

-- name: vacuum_candidates
-- The next %s old finished workflows of a vacuum's walk over {column}.
-- {column} is completed_at, or created_at for rows finished without completed_at; the
-- order is {column} then id, over DBOS's index on the column. {where}: conditions.sql's
-- status (reads.FINISHED, the WorkflowStatusString values of dbos/_sys_db.py no
-- executor moves on its own), cutoff and walk position. {lock}: skip_locked or nothing.
SELECT workflow_uuid, {column} AS at
FROM {schema}.workflow_status
WHERE {where}
ORDER BY {column}, workflow_uuid
LIMIT %s {lock};

-- name: skip_locked
-- vacuum_candidates' {lock} on PostgreSQL, but for a dry run.
-- Its rows are locked as selected, so a resume racing the batch waits for it (and then
-- finds nothing), and a row being changed right now is left for a later run.
FOR UPDATE SKIP LOCKED;

-- name: unfinished_ancestor
-- Those of {ids} with an unfinished (PENDING, ENQUEUED, DELAYED) ancestor.
-- Up the parent_workflow_id chain (by the key): a parent may still wait for a child's
-- result (SystemDatabase.await_workflow_result of dbos/_sys_db.py) or read its events.
WITH RECURSIVE up(id, anc) AS (
  SELECT workflow_uuid, parent_workflow_id
  FROM {schema}.workflow_status
  WHERE workflow_uuid IN ({ids}) AND parent_workflow_id IS NOT NULL
  UNION
  SELECT up.id, p.parent_workflow_id
  FROM up
  JOIN {schema}.workflow_status p ON p.workflow_uuid = up.anc
  WHERE p.parent_workflow_id IS NOT NULL
)
SELECT DISTINCT up.id
FROM up
JOIN {schema}.workflow_status a ON a.workflow_uuid = up.anc
WHERE a.status IN ('PENDING', 'ENQUEUED', 'DELAYED');

-- name: unfinished_descendant
-- Those of {ids} with an unfinished (PENDING, ENQUEUED, DELAYED) descendant.
-- Down DBOS's index on parent_workflow_id, as SystemDatabase.get_workflow_children
-- (dbos/_sys_db.py) walks: a descendant may still read their events or messages.
WITH RECURSIVE down(id, d) AS (
  SELECT parent_workflow_id, workflow_uuid
  FROM {schema}.workflow_status
  WHERE parent_workflow_id IN ({ids})
  UNION
  SELECT down.id, c.workflow_uuid
  FROM down
  JOIN {schema}.workflow_status c ON c.parent_workflow_id = down.d
)
SELECT DISTINCT down.id
FROM down
JOIN {schema}.workflow_status x ON x.workflow_uuid = down.d
WHERE x.status IN ('PENDING', 'ENQUEUED', 'DELAYED');

-- name: newest_of_each_name
-- The %s newest workflows of each name among {statuses}: what --keep-last keeps.
-- Newest by completion, then creation (DBOS on SQLite may record completions to the
-- second), over workflow_status' columns (dbos/_migration.py).
SELECT workflow_uuid
FROM (
  SELECT workflow_uuid,
         row_number() OVER (PARTITION BY name
                            ORDER BY coalesce(completed_at, created_at) DESC, created_at DESC,
                                     workflow_uuid DESC) AS rn
  FROM {schema}.workflow_status
  WHERE status IN ({statuses})
) newest
WHERE rn <= %s;

-- name: rows_of
-- How many rows of {table} have a {column} of {ids}.
-- {table} is one of actions.WORKFLOW_TABLES (the tables of dbos/_migration.py) and
-- {column} the column naming the workflow: what deleting those workflows removes.
SELECT count(*) AS n FROM {schema}.{table} WHERE {column} IN ({ids});

-- name: delete_rows
-- Delete the rows of {table} of the workflows {ids}.
-- As SystemDatabase._delete_workflows (dbos/_sys_db.py): run on the payload tables (no
-- foreign key), then on workflow_status, whose delete cascades to the rest.
DELETE FROM {schema}.{table} WHERE workflow_uuid IN ({ids});

-- name: analyze_postgres
-- PostgreSQL: refresh workflow_status' statistics.
-- Its reltuples is the SUCCESS estimate of reads.sql's workflow_total_postgres.
ANALYZE {schema}.workflow_status;
