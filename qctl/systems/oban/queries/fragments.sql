-- Statement text shared by the package's other query files: each block is filled in
-- where a query names it as {block} (qctl_kit/sqlfile.py), when the file is loaded.

-- name: contains
-- The jobs whose args contain %(args)s and whose meta contain %(meta)s (each a JSON
-- object, NULL: any): PostgreSQL's @>, as Oban Web's args and meta search filters,
-- served by Elixir Oban's GIN indexes oban_jobs_args_index and oban_jobs_meta_index
-- (lib/oban/migrations/postgres/v10.ex); oban-py's install.sql makes neither, so there
-- the other filters' index or a scan serves it. Needs oban_jobs in FROM.
(%(args)s::jsonb IS NULL OR oban_jobs.args @> %(args)s::jsonb)
  AND (%(meta)s::jsonb IS NULL OR oban_jobs.meta @> %(meta)s::jsonb)
