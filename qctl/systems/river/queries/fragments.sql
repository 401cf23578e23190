-- Statement text shared by the package's other query files: each block is filled in
-- where a query names it as {block} (qctl_kit/sqlfile.py), when the file is loaded.

-- name: contains
-- The jobs whose args contain %(args)s and whose metadata contain %(metadata)s (each a
-- JSON object, NULL: any): PostgreSQL's @>, as River's JobListParams.Metadata filters
-- (job_list_params.go), served by River's GIN indexes river_job_args_index and
-- river_job_metadata_index (002_initial_schema.up.sql). Needs river_job in FROM.
(%(args)s::jsonb IS NULL OR river_job.args @> %(args)s::jsonb)
  AND (%(metadata)s::jsonb IS NULL OR river_job.metadata @> %(metadata)s::jsonb)

-- name: contains_sqlite
-- contains on SQLite, which has no @> (riversqlite leaves JobListParams.Metadata out):
-- each top-level key of :args (:metadata) present in the job's args (metadata) with an
-- equal value: a number equal as a number, an object or array as its JSON text (key
-- order kept), so a nested value must be whole, not contained. A column that is not
-- valid JSON contains nothing. Each column is decoded (json()) once per row, and only
-- when its object is given. Needs river_job in FROM.
(:args IS NULL AND :metadata IS NULL OR NOT EXISTS (
    SELECT 1
    FROM (SELECT CASE WHEN :args IS NOT NULL THEN json(river_job.args) END AS doc,
                 :args AS fragment
          UNION ALL
          SELECT CASE WHEN :metadata IS NOT NULL THEN json(river_job.metadata) END,
                 :metadata) w,
         json_each(w.fragment) wanted
    WHERE NOT EXISTS (
        SELECT 1 FROM json_each(CASE WHEN json_valid(w.doc) THEN w.doc END) have
        WHERE have.key = wanted.key
          AND have.value IS wanted.value
          AND (have.type = wanted.type
               OR have.type IN ('integer', 'real') AND wanted.type IN ('integer', 'real'))
    )
))

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
-- job_rows on SQLite (reads_sqlite.sql): every tag given through json_each, as
-- riversqlite's SQLFragmentColumnContainsAll.
SELECT id, state, queue, kind, priority, attempt, max_attempts,
       scheduled_at, attempted_at, json(attempted_by) AS attempted_by, created_at,
       finalized_at, json(tags) AS tags, unique_key, unique_states, json(args) AS args,
       json(metadata) AS metadata,
       coalesce(CASE WHEN json_valid(json(errors)) THEN json_array_length(json(errors)) END, 0)
           AS error_count
FROM river_job
WHERE (:states IS NULL OR state IN (SELECT value FROM json_each(:states)))
  AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
  AND (:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)))
  AND (:priorities IS NULL OR priority IN (SELECT value FROM json_each(:priorities)))
  AND (:tags IS NULL OR NOT EXISTS (
      SELECT 1 FROM json_each(:tags) wanted
      WHERE wanted.value NOT IN (SELECT value FROM json_each(json(river_job.tags)))
  ))
