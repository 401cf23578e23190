-- The console's opt-in indexes (`qctl db tune`), for every system's own table alike.

-- name: present
-- Which of the console's named indexes exist, valid, on one table.
-- The table is resolved through the session's search_path (the system's schema); an
-- index a CONCURRENTLY build left invalid does not count.
SELECT c.relname AS name
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = to_regclass(%(table)s) AND i.indisvalid AND c.relname = ANY(%(names)s);

-- name: invalid
-- The indexes of one schema that are invalid, with their tables.
-- A CREATE INDEX CONCURRENTLY that was cancelled (a lock timeout, an interrupt) leaves
-- its index behind, invalid: never used by the planner, yet kept up by every write, and
-- found by a later `IF NOT EXISTS` build, which leaves it so. An index being built
-- concurrently right now looks the same until its build ends. The schema: the one named,
-- else the session's own.
SELECT c.relname AS name, t.relname AS "table"
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_class t ON t.oid = i.indrelid
WHERE NOT i.indisvalid
  AND c.relnamespace = (SELECT oid FROM pg_namespace
                        WHERE nspname = coalesce(nullif(%(schema)s, ''), current_schema()))
ORDER BY c.relname;
