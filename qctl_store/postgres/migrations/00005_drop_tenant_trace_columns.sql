-- qctl: azync schema version 5, tenant and trace data live in meta.
--
-- azync's first releases created tenant/trace columns that later moved into meta.
-- Databases from those releases still have them; this drops whatever is left, and
-- is a no-op everywhere else (qctl's version 1 never creates them). Re-runnable.

DROP INDEX IF EXISTS azync_events_tenant_occurred_idx;

ALTER TABLE azync_events
    DROP COLUMN IF EXISTS tenant_id,
    DROP COLUMN IF EXISTS trace_id,
    DROP COLUMN IF EXISTS span_id,
    DROP COLUMN IF EXISTS trace_flags;
ALTER TABLE azync_jobs
    DROP COLUMN IF EXISTS trace_id,
    DROP COLUMN IF EXISTS span_id,
    DROP COLUMN IF EXISTS trace_flags;
ALTER TABLE azync_job_attempts
    DROP COLUMN IF EXISTS trace;
ALTER TABLE azync_dags
    DROP COLUMN IF EXISTS trace_id,
    DROP COLUMN IF EXISTS span_id,
    DROP COLUMN IF EXISTS trace_flags;
