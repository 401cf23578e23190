-- The change-log reader (see migrations/0002_change_log.sql).

-- name: log_exists
-- Whether the change log table exists.
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'qctl_changes'

-- name: log_head
-- The last seq ever assigned (survives trims), 0 for an empty log.
SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'qctl_changes'), 0) AS seq

-- name: read_after
-- Up to limit change-log rows after a sequence number, in order.
SELECT seq, entity, source, id, dag_id, kind, task_key, state, at_us
FROM qctl_changes
WHERE seq > :after
ORDER BY seq
LIMIT :limit
