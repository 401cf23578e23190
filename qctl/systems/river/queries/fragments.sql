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
-- valid JSON contains nothing. Needs river_job in FROM.
(:args IS NULL AND :metadata IS NULL OR NOT EXISTS (
    SELECT 1
    FROM (SELECT river_job.args AS doc, :args AS fragment
          UNION ALL SELECT river_job.metadata, :metadata) w,
         json_each(w.fragment) wanted
    WHERE NOT EXISTS (
        SELECT 1 FROM json_each(CASE WHEN json_valid(json(w.doc)) THEN json(w.doc) END) have
        WHERE have.key = wanted.key
          AND have.value IS wanted.value
          AND (have.type = wanted.type
               OR have.type IN ('integer', 'real') AND wanted.type IN ('integer', 'real'))
    )
))
