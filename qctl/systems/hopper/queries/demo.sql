-- The hopper demo's own reads: what it made.

-- name: job_counts
-- The demo's jobs (its mark in their metadata) per state, live and finalized.
SELECT state::text AS state, count(*) AS n FROM (
    SELECT state FROM hopper_jobs WHERE metadata @> %(mark)s::jsonb
    UNION ALL
    SELECT state FROM hopper_job_history WHERE metadata @> %(mark)s::jsonb
) j
GROUP BY state
ORDER BY state;
