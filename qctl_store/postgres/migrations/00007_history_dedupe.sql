-- qctl: no-transaction
-- qctl: azync schema version 7, one result record per workflow operation.
--
-- A crash between recording an operation's result and acking its job could record the
-- result twice. Keep the earliest copy of each duplicate, then forbid new ones with a
-- unique index over the two result event types (OperationScheduled shares the key with
-- its result, so it stays out of the predicate). CONCURRENTLY, hence no transaction;
-- re-runnable like 00006.

DELETE FROM azync_workflow_history AS dup
USING azync_workflow_history AS kept
WHERE dup.workflow_id = kept.workflow_id
  AND dup.event_type = kept.event_type
  AND dup.event_type IN ('OperationCompleted', 'OperationFailed')
  AND dup.payload ->> 'execution_key' IS NOT NULL
  AND dup.payload ->> 'execution_key' = kept.payload ->> 'execution_key'
  AND dup.event_seq > kept.event_seq;

DO $body$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index
               WHERE indexrelid = to_regclass('azync_workflow_history_exec_key_idx')
                 AND NOT indisvalid) THEN
        DROP INDEX azync_workflow_history_exec_key_idx;
    END IF;
END
$body$;

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS azync_workflow_history_exec_key_idx
    ON azync_workflow_history (workflow_id, event_type, (payload ->> 'execution_key'))
    WHERE payload ->> 'execution_key' IS NOT NULL
      AND event_type IN ('OperationCompleted', 'OperationFailed');
