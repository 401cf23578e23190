-- qctl: no-transaction
-- qctl: azync schema version 6, an index for the succeeded-job vacuum.
--
-- The vacuum of completed standalone jobs filters on (source, completed_at) with no
-- kind, which the per-kind succeeded index cannot serve. Built CONCURRENTLY, so this
-- file runs outside a transaction, one statement at a time. Re-runnable: a leftover
-- INVALID index from an interrupted build is dropped first, then rebuilt.

DO $body$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index
               WHERE indexrelid = to_regclass('azync_jobs_succeeded_vacuum_idx')
                 AND NOT indisvalid) THEN
        DROP INDEX azync_jobs_succeeded_vacuum_idx;
    END IF;
END
$body$;

CREATE INDEX CONCURRENTLY IF NOT EXISTS azync_jobs_succeeded_vacuum_idx
    ON azync_jobs (source, completed_at)
    WHERE state = 'succeeded' AND dag_id IS NULL AND run_id IS NULL;
