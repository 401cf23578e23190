-- qctl's reads of a DBOS system database's own state (DBOS 3.0 to 3.4). Tokens follow
-- qctl_kit/sqlfile.py; {schema}. is the schema on PostgreSQL, nothing on SQLite.

-- name: version
-- The migration version DBOS wrote (dbos/_migration.py keeps one row in dbos_migrations).
SELECT max(version) AS version FROM {schema}.dbos_migrations;

-- name: foreign_keys_sqlite
-- SQLite: enforce foreign keys on this connection, as DBOS's engine does.
-- DBOS's SQLite engine (dbos/_sys_db_sqlite.py) turns them on: its event, message and
-- stream tables declare ON DELETE CASCADE to workflow_status (dbos/_migration.py),
-- which SQLite enforces only then.
PRAGMA foreign_keys = ON;
