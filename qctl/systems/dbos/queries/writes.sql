-- qctl's reads before a write DBOSClient makes (qctl.systems.dbos.writes). Tokens follow
-- qctl_kit/sqlfile.py; {schema}. is the schema on PostgreSQL, nothing on SQLite.

-- name: queue_limits
-- A registered queue's limits and owning application, by name %s.
-- The queues table of dbos/_migration.py, which DBOSClient.register_queue writes; no
-- row: unregistered.
SELECT concurrency, worker_concurrency, rate_limit_max, rate_limit_period_sec,
       partition_concurrency, partition_worker_concurrency, partition_rate_limit_max,
       partition_rate_limit_period_sec, polling_interval_sec, application_name
FROM {schema}.queues
WHERE name = %s;
