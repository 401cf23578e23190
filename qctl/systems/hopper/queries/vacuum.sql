-- qctl vacuum on a hopper database (schema version 8): what hopper's leader leaves.
-- Its HistoryMaintain (driver/internal/pgsql/history.go) creates the history time
-- partitions ahead, drops those past CompletedRetention / FailedRetention and prunes the
-- DEFAULT partitions' rows past them; qctl never creates, attaches or drops a partition
-- and takes none of its locks. What no hopper code deletes at this version: finished
-- batches and workflows (hopper_batches), stream events (hopper_stream_events), and
-- history itself when a retention is negative (kept forever) or no leader runs. Each
-- statement deletes one batch in key order after a cursor and checks its predicate again
-- on the rows it deletes.

-- name: count_history
-- Finalized jobs (any outcome) finalized before a cutoff; finalized_at prunes the time
-- partitions after it.
SELECT count(*) AS n FROM hopper_job_history WHERE finalized_at < %(before)s;

-- name: vacuum_history
-- Delete up to a batch of finalized jobs finalized before a cutoff, in id order after a
-- cursor (the id index of every partition); the ids deleted.
DELETE FROM hopper_job_history
WHERE id IN (
    SELECT id FROM hopper_job_history
    WHERE finalized_at < %(before)s AND (%(after)s::uuid IS NULL OR id > %(after)s::uuid)
    ORDER BY id
    LIMIT %(batch)s
)
  AND finalized_at < %(before)s
RETURNING id;

-- name: count_batches
-- Batches and workflows completed before a cutoff with no live job left.
SELECT count(*) AS n FROM hopper_batches b
WHERE b.completed_at < %(before)s
  AND NOT EXISTS (SELECT 1 FROM hopper_jobs j WHERE j.batch_id = b.id);

-- name: vacuum_batches
-- Delete up to a batch of batches and workflows completed before a cutoff (pending
-- reached zero: flow.go's accounting has inserted their callbacks) with no live job left
-- (hopper_jobs_batch), in id order after a cursor. Their finalized jobs stay in history
-- until its retention, with batch_id naming a batch that is gone. A batch that still has
-- a live job is not picked at all: picked and kept, it would make the batch come back
-- short, which ends the walk before the deletable batches after it.
DELETE FROM hopper_batches
WHERE id IN (
    SELECT id FROM hopper_batches b
    WHERE completed_at < %(before)s AND (%(after)s::uuid IS NULL OR id > %(after)s::uuid)
      AND NOT EXISTS (SELECT 1 FROM hopper_jobs j WHERE j.batch_id = b.id)
    ORDER BY id
    LIMIT %(batch)s
)
  AND completed_at < %(before)s
  AND NOT EXISTS (SELECT 1 FROM hopper_jobs j WHERE j.batch_id = hopper_batches.id)
RETURNING id;

-- name: count_stream_events
-- Stream events created before a cutoff that every consumer has delivered: their
-- transaction ended before the oldest snapshot a consumer has seen (stream.go: a
-- consumer delivers what its next snapshot shows and its seen one does not).
SELECT count(*) AS n FROM hopper_stream_events
WHERE created_at < %(before)s
  AND xid < coalesce((SELECT min(pg_snapshot_xmin(seen)) FROM hopper_stream_consumers),
                     pg_snapshot_xmin(pg_current_snapshot()));

-- name: vacuum_stream_events
-- Delete up to a batch of those events in position order after a cursor
-- (hopper_stream_events_position); the positions deleted.
DELETE FROM hopper_stream_events
WHERE (xid, seq) IN (
    SELECT xid, seq FROM hopper_stream_events
    WHERE created_at < %(before)s
      AND xid < coalesce((SELECT min(pg_snapshot_xmin(seen)) FROM hopper_stream_consumers),
                         pg_snapshot_xmin(pg_current_snapshot()))
      AND (xid, seq) > (%(after_xid)s::text::xid8, %(after_seq)s::bigint)
    ORDER BY xid, seq
    LIMIT %(batch)s
)
  AND created_at < %(before)s
RETURNING xid::text AS xid, seq;
