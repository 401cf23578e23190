-- The console lists dead jobs in the order they failed, (failed_at, id) per kind, while
-- azync's azync_jobs_dead_idx holds (source, kind, enqueued_at): this index lets a dead
-- page of one kind walk its failure order instead of sorting every dead job of the kind.
-- PostgreSQL gets the same index from `qctl db tune` (CREATE INDEX CONCURRENTLY there;
-- an embedded SQLite file is small enough to build it in the migration).

CREATE INDEX qctl_jobs_dead_idx ON azync_jobs (source, kind, failed_at, id)
    WHERE state = 'dead';
