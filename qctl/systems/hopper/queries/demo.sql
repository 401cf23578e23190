-- The hopper demo's own reads: whose schema it is, and what it made.

-- name: schema_state
-- Whether the schema exists, the demo's mark on it (its comment), whether it holds
-- hopper's tables, and how many other relations it holds.
SELECT n.oid IS NOT NULL AS present,
       obj_description(n.oid, 'pg_namespace') AS comment,
       EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid
               AND c.relname = 'hopper_jobs') AS hopper,
       (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid
        AND c.relkind IN ('r', 'p', 'v', 'm')) AS relations
FROM (SELECT %(schema)s::text AS name) s
LEFT JOIN pg_namespace n ON n.nspname = s.name;

-- name: job_counts
-- The demo's jobs (its mark in their metadata) per state, live and finalized.
SELECT state::text AS state, count(*) AS n FROM (
    SELECT state FROM hopper_jobs WHERE metadata @> %(mark)s::jsonb
    UNION ALL
    SELECT state FROM hopper_job_history WHERE metadata @> %(mark)s::jsonb
) j
GROUP BY state
ORDER BY state;
