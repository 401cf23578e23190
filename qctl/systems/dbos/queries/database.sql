-- qctl's reads of a DBOS system database's own state (DBOS 3.0 to 3.4). Tokens follow
-- qctl_kit/sqlfile.py; {schema}. is the schema on PostgreSQL, nothing on SQLite.

-- name: version
-- The migration version DBOS wrote (dbos/_migration.py keeps one row in dbos_migrations).
SELECT max(version) AS version FROM {schema}.dbos_migrations;
