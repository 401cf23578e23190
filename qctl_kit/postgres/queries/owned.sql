-- A schema a tool creates and marks as its own with a comment, so that it later drops
-- only that one.

-- name: schema_state
-- Whether the schema exists, its comment, whether it holds the table %(table)s, and
-- how many relations of any kind it holds.
SELECT n.oid IS NOT NULL AS present,
       obj_description(n.oid, 'pg_namespace') AS comment,
       EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid
               AND c.relname = %(table)s) AS holds,
       (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid) AS relations
FROM (SELECT %(schema)s::text AS name) s
LEFT JOIN pg_namespace n ON n.nspname = s.name;
