-- The version table (goose's layout, as on PostgreSQL). {table} is the configured
-- version table, filled in as a quoted identifier.

-- name: version_table_exists
-- Whether the version table exists.
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :table

-- name: create_version_table
-- The version table created when missing.
CREATE TABLE IF NOT EXISTS {table} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    version_id INTEGER NOT NULL,
    is_applied INTEGER NOT NULL,
    tstamp TIMESTAMP DEFAULT (datetime('now'))
)

-- name: any_version
-- Whether the version table has a row yet (the version-0 row goes in first).
SELECT 1 FROM {table} LIMIT 1

-- name: insert_version
-- One applied version recorded in the version table.
INSERT INTO {table} (version_id, is_applied) VALUES (:version, 1)

-- name: latest_version
-- The highest applied version (NULL with no applied row).
SELECT MAX(version_id) AS v FROM {table} WHERE is_applied = 1

-- name: change_triggers
-- Whether the change-log triggers exist on azync_jobs.
SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'azync_jobs'
