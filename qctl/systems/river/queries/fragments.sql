-- Statement text shared by the package's other query files: each block is filled in
-- where a query names it as {block} (qctl_kit/sqlfile.py), when the file is loaded.

-- name: contains
-- The jobs whose args contain %(args)s and whose metadata contain %(metadata)s (each a
-- JSON object, NULL: any): PostgreSQL's @>, as River's JobListParams.Metadata filters
-- (job_list_params.go), served by River's GIN indexes river_job_args_index and
-- river_job_metadata_index (002_initial_schema.up.sql). Needs river_job in FROM.
(%(args)s::jsonb IS NULL OR river_job.args @> %(args)s::jsonb)
  AND (%(metadata)s::jsonb IS NULL OR river_job.metadata @> %(metadata)s::jsonb)

-- name: job_rows
-- The columns of a job listing (reads.sql list_jobs, list_finalized_jobs), filtered by
-- states, queues, kinds, priorities, tags (every tag given: River's JobList with
-- JobListParams.TagsAll, riverpgxv5 internal/dbsqlc/river_job.sql). unique_states is
-- read as its bit string (text) so that no bit type reaches the driver. A WHERE that
-- the query continues with AND (contains, then its keyset).
SELECT id, state::text AS state, queue, kind, priority, attempt, max_attempts,
       scheduled_at, attempted_at, attempted_by, created_at, finalized_at, tags,
       unique_key, unique_states::text AS unique_states, args, metadata,
       coalesce(array_length(errors, 1), 0) AS error_count
FROM river_job
WHERE (%(states)s::text[] IS NULL OR state::text = ANY(%(states)s::text[]))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
  AND (%(priorities)s::int[] IS NULL OR priority = ANY(%(priorities)s::int[]))
  AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::varchar(255)[])

-- name: job_rows_sqlite
-- job_rows on SQLite (reads_sqlite.sql list_jobs, list_finalized_jobs): {where} is the
-- job_* conditions of reads_sqlite.sql of the filters given (reads.job_filter). A WHERE
-- that the query may continue with AND.
SELECT id, state, queue, kind, priority, attempt, max_attempts,
       scheduled_at, attempted_at, json(attempted_by) AS attempted_by, created_at,
       finalized_at, json(tags) AS tags, unique_key, unique_states, json(args) AS args,
       json(metadata) AS metadata,
       coalesce(CASE WHEN json_valid(json(errors)) THEN json_array_length(json(errors)) END, 0)
           AS error_count
FROM river_job
WHERE {where}
