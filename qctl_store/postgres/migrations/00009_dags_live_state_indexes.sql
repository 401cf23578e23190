-- qctl: no-transaction
-- qctl: azync schema version 9, the live-DAG indexes learn the 'paused' state.
--
-- The idempotency barrier and the live listing index enumerate the live states, so
-- both are rebuilt with 'paused'. The new unique index is built before the old one is
-- dropped, so dedupe never has a gap; an older replica's ON CONFLICT with the 3-state
-- predicate still infers the 4-state index (its predicate implies the new one).
-- CONCURRENTLY, hence no transaction. Re-runnable: an INVALID leftover of an
-- interrupted build is dropped before the rebuild (an invalid unique index enforces
-- nothing).

DO $body$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index
               WHERE indexrelid = to_regclass('azync_dags_idempotency_live_idx')
                 AND NOT indisvalid) THEN
        DROP INDEX azync_dags_idempotency_live_idx;
    END IF;
END
$body$;

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS azync_dags_idempotency_live_idx
    ON azync_dags (name, idempotency_key)
    WHERE idempotency_key IS NOT NULL
      AND state IN ('running', 'suspended', 'compensating', 'paused');

DROP INDEX CONCURRENTLY IF EXISTS azync_dags_idempotency_idx;

DO $body$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index
               WHERE indexrelid = to_regclass('azync_dags_live_state_created_idx')
                 AND NOT indisvalid) THEN
        DROP INDEX azync_dags_live_state_created_idx;
    END IF;
END
$body$;

CREATE INDEX CONCURRENTLY IF NOT EXISTS azync_dags_live_state_created_idx
    ON azync_dags (created_at)
    WHERE state IN ('running', 'suspended', 'compensating', 'paused');

DROP INDEX CONCURRENTLY IF EXISTS azync_dags_live_created_idx;
