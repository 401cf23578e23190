-- Statement text shared by the package's other query files: each block is filled in
-- where a query names it as {block} (qctl_store/sqlfile.py), when the file is loaded.

-- name: finalize_tail
-- hopper's finalize tail (driver/internal/pgsql flow.go finalizeTailSQL).
-- The CTEs that follow a statement's `finished`: the rows it deleted from hopper_jobs,
-- with hopper's finishedColumns (flow.go): the job's columns, errors as they go to
-- history, output, archive, final_state (text) and notified (the done notice of an
-- awaited job, on %(done)s). Dependents whose edge says cancel are cancelled with a
-- failed job, transitively ("hopper: dependency failed"); the finished and cascaded
-- jobs go to history; their batches are counted down and, once done, enqueue their
-- callbacks (announced on %(insert)s); dependents whose dependencies have all finished
-- are promoted (announced on %(insert)s); the finished jobs' own edges are dropped. One text
-- for actions.sql cancel_waiting and standin.sql finalize, so qctl's cancel settles a
-- workflow exactly as the stand-in's finalize does.
cascade AS (
  SELECT d.job_id FROM hopper_job_deps d JOIN finished f ON d.depends_on = f.id
  WHERE f.final_state IN ('cancelled', 'discarded') AND d.on_failure = 'cancel'
  UNION
  SELECT d.job_id FROM hopper_job_deps d JOIN cascade c ON d.depends_on = c.job_id
  WHERE d.on_failure = 'cancel'
),
cascaded AS (
  DELETE FROM hopper_jobs j USING (SELECT DISTINCT job_id FROM cascade) c
  WHERE j.id = c.job_id AND j.state = 'pending'
  RETURNING j.id, j.seq, j.kind, j.queue, j.priority, j.attempt, j.max_attempts, j.scheduled_at,
    j.attempted_at, j.attempted_by, j.args, j.metadata,
    j.errors || jsonb_build_object('at', now(), 'attempt', j.attempt,
                                   'error', 'hopper: dependency failed') AS errors,
    j.unique_key, j.ordering_key, j.partition_key, j.batch_id, j.expires_at,
    j.cancel_requested_at, j.await, j.created_at, NULL::jsonb AS output, true AS archive,
    'cancelled'::text AS final_state,
    CASE WHEN j.await THEN pg_notify(%(done)s, j.id::text) END AS notified
),
done AS (SELECT * FROM finished UNION ALL SELECT * FROM cascaded),
archived AS (
  INSERT INTO hopper_job_history (
    id, seq, kind, queue, state, priority, attempt, max_attempts, scheduled_at, attempted_at,
    attempted_by, args, metadata, errors, unique_key, ordering_key, partition_key, batch_id,
    expires_at, cancel_requested_at, await, created_at, finalized_at, output)
  SELECT id, seq, kind, queue, final_state::hopper_job_state, priority, attempt, max_attempts,
    scheduled_at, attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
    partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, now(), output
  FROM done WHERE archive
  RETURNING id
),
batches AS (
  UPDATE hopper_batches b
  SET pending = b.pending - c.n, failed = b.failed + c.f,
      completed_at = CASE WHEN b.pending - c.n <= 0 THEN now() ELSE b.completed_at END
  FROM (SELECT batch_id, count(*) AS n,
               count(*) FILTER (WHERE final_state IN ('cancelled', 'discarded')) AS f
        FROM done WHERE batch_id IS NOT NULL GROUP BY batch_id) c
  WHERE b.id = c.batch_id
  RETURNING b.id, b.pending, b.failed, b.on_success, b.on_failure, b.on_complete
),
callbacks AS (
  INSERT INTO hopper_jobs (kind, queue, priority, max_attempts, args, metadata)
  SELECT cb->>'kind', coalesce(cb->>'queue', 'default'), coalesce((cb->>'priority')::smallint, 2),
    coalesce((cb->>'max_attempts')::smallint, 25), coalesce(cb->'args', '{}'),
    coalesce(cb->'metadata', '{}')
      || jsonb_build_object('batch_id', b.id::text, 'batch_failed', b.failed)
  FROM batches b, LATERAL (VALUES (CASE WHEN b.failed = 0 THEN b.on_success ELSE b.on_failure END),
                                  (b.on_complete)) AS v(cb)
  WHERE b.pending <= 0 AND cb IS NOT NULL
  RETURNING pg_notify(%(insert)s, queue)
),
promoted AS (
  UPDATE hopper_jobs j
  SET state = CASE WHEN j.scheduled_at > now() THEN 'scheduled'
                   ELSE 'available' END::hopper_job_state
  WHERE j.state = 'pending'
    AND j.id IN (SELECT d.job_id FROM hopper_job_deps d JOIN done ON d.depends_on = done.id)
    AND j.id NOT IN (SELECT id FROM cascaded)
    AND NOT EXISTS (
      SELECT 1 FROM hopper_job_deps d JOIN hopper_jobs x ON x.id = d.depends_on
      WHERE d.job_id = j.id AND x.id NOT IN (SELECT id FROM done))
  RETURNING pg_notify(%(insert)s, j.queue)
),
edges AS (
  DELETE FROM hopper_job_deps d WHERE d.job_id IN (SELECT id FROM done) RETURNING d.job_id
)
