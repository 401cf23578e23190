-- The conditions qctl composes into a statement's {where} (joined by AND, in
-- qctl.systems.dbos.reads.filter_sql and actions' vacuum walk): one text per kind of
-- condition, each filter of DBOSClient.list_workflows (SystemDatabase.list_workflows of
-- dbos/_sys_db.py) one of them on its column. Tokens follow qctl_kit/sqlfile.py, filled
-- per call: {column} is a column from the caller's fixed set, {values} one %s per value.

-- name: every
-- No condition: the {where} of an empty filter.
TRUE

-- name: in_list
-- {column} is one of {values} (a list filter's .in_, dbos/_sys_db.py).
{column} IN ({values})

-- name: in_list_or_unclaimed
-- {column} is one of {values} or NULL (application_name).
-- SystemDatabase._name_filter (dbos/_sys_db.py) counts rows no application claims as
-- every application's.
({column} IN ({values}) OR {column} IS NULL)

-- name: is_null
-- {column} is NULL (has_parent, is_fork false; vacuum's rows without completed_at).
{column} IS NULL

-- name: is_not_null
-- {column} is set (has_parent, is_fork true).
{column} IS NOT NULL

-- name: equals
-- {column} is %s (was_forked_from).
{column} = %s

-- name: at_least
-- {column} at or after %s (start_time, completed_after, dequeued_after).
{column} >= %s

-- name: before
-- {column} before %s (end_time, completed_before, dequeued_before; vacuum's cutoff).
{column} < %s

-- name: prefix
-- {column} begins with the LIKE pattern %s (workflow_id_prefix, schedule_name_prefix).
{column} LIKE %s ESCAPE '\'

-- name: attribute_postgres
-- The attributes hold the JSON object %s.
-- Containment, which DBOS's GIN index idx_workflow_status_attributes answers
-- (_attributes_contains_clause of dbos/_sys_db_postgres.py).
ws.attributes @> %s::jsonb

-- name: attribute_sqlite
-- The attribute at JSON path %s equals the JSON value %s.
-- qctl's own: _attributes_contains_clause of dbos/_sys_db_sqlite.py refuses the filter
-- on SQLite.
json_extract(ws.attributes, %s) = json_extract(%s, '$')

-- name: newest_first_after
-- Rows before a newest-first page's cursor (created_at %s, %s; id %s).
-- Before it in created_at then id order; the created_at <= %s first, so the walk starts
-- at the cursor on DBOS's workflow_status_created_at_index.
ws.created_at <= %s AND (ws.created_at < %s OR ws.workflow_uuid < %s)

-- name: id_after
-- An id-order keyset page's cursor: ids after %s.
ws.workflow_uuid > %s

-- name: oldest_first_after
-- Rows after an oldest-first walk's position on {column} (%s, %s; id %s).
-- After it in {column} then id order (vacuum's walks); the {column} >= %s first, so the
-- walk starts at the position on DBOS's index on the column.
{column} >= %s AND ({column} > %s OR workflow_uuid > %s)
