-- qctl's reads of an Oban database (oban-py 0.7.0's oban/queries/install.sql; Elixir
-- Oban's lib/oban/migrations/postgres/v01.ex to v15.ex): the columns are Oban's own. The
-- instants are Oban's UTC timestamps without time zone, as stored (reads.py marks them
-- UTC). errors is jsonb in oban-py's schema and jsonb[] in Elixir's: to_jsonb reads both
-- as one JSON array. A --state filter compares Oban's enum itself, its labels picked by
-- name from enum_range (a label an older Elixir enum lacks matches nothing instead of
-- failing), so that the state-queue index can serve it.

-- name: list_jobs
-- A page of jobs, newest first after a cursor (oban-py's all_jobs.sql orders by id too),
-- without the attempt history: how many failed attempts it holds instead; filtered by
-- states, queues, workers, args and meta (fragments.sql contains).
SELECT id, state::text AS state, queue, worker, priority, attempt, max_attempts,
       args, meta, tags, attempted_by, inserted_at, scheduled_at, attempted_at,
       completed_at, cancelled_at, discarded_at,
       CASE jsonb_typeof(to_jsonb(errors)) WHEN 'array'
            THEN jsonb_array_length(to_jsonb(errors)) ELSE 0 END AS error_count
FROM oban_jobs
WHERE (%(states)s::text[] IS NULL
       OR state = ANY(ARRAY(SELECT s FROM unnest(enum_range(NULL::oban_job_state)) AS s
                  WHERE s::text = ANY(%(states)s::text[]))))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(workers)s::text[] IS NULL OR worker = ANY(%(workers)s::text[]))
  AND {contains}
  AND (%(after_id)s::bigint IS NULL OR id < %(after_id)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: get_job
-- One job with its attempt history (oban-py's get_job.sql): errors, oldest first, one
-- entry per failed attempt as oban-py's _executor.py and Elixir's Oban.Job write them
-- ({"at", "attempt", "error"}).
SELECT id, state::text AS state, queue, worker, priority, attempt, max_attempts,
       args, meta, tags, attempted_by, inserted_at, scheduled_at, attempted_at,
       completed_at, cancelled_at, discarded_at, to_jsonb(errors) AS errors,
       CASE jsonb_typeof(to_jsonb(errors)) WHEN 'array'
            THEN jsonb_array_length(to_jsonb(errors)) ELSE 0 END AS error_count
FROM oban_jobs
WHERE id = %(id)s;

-- name: failed_jobs
-- The jobs that hold failed attempts, newest first after a cursor, with their history
-- (jobs errors): retryable, discarded and any other state an error was recorded in.
SELECT id, state::text AS state, queue, worker, attempt, max_attempts,
       to_jsonb(errors) AS errors
FROM oban_jobs
WHERE errors IS NOT NULL AND to_jsonb(errors) NOT IN ('[]'::jsonb, 'null'::jsonb)
  AND (%(states)s::text[] IS NULL
       OR state = ANY(ARRAY(SELECT s FROM unnest(enum_range(NULL::oban_job_state)) AS s
                  WHERE s::text = ANY(%(states)s::text[]))))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(workers)s::text[] IS NULL OR worker = ANY(%(workers)s::text[]))
  AND (%(after_id)s::bigint IS NULL OR id < %(after_id)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: depths
-- Jobs per queue and state (oban-py's count_jobs.sql), every state, by reading every job
-- (queues list).
SELECT queue, state::text AS state, count(*) AS n,
       min(scheduled_at) FILTER (WHERE state = 'available') AS oldest_available
FROM oban_jobs
GROUP BY queue, state;

-- name: live_depths
-- Unfinished jobs per queue and state on the state-queue index both flavours make
-- (oban_jobs_state_queue_priority_scheduled_at_id_index), for the dashboard's refresh:
-- the (state, queue) pairs found one index probe each (a loose index scan, state by
-- state), each pair
-- counted up to %(cap)s (NULL: all), and an available queue's oldest job as Oban's fetch
-- orders them (fetch_jobs.sql: priority, scheduled_at, id), its next to run.
-- %(states)s: the unfinished states this schema's enum holds (no suspended before
-- Elixir's v14), compared as the enum so that the index serves it.
WITH RECURSIVE pairs AS (
    SELECT s.state,
           (SELECT queue FROM oban_jobs WHERE state = s.state ORDER BY queue LIMIT 1) AS queue
    FROM unnest(%(states)s::text[]::oban_job_state[]) AS s(state)
    UNION ALL
    SELECT p.state,
           (SELECT queue FROM oban_jobs WHERE state = p.state AND queue > p.queue
            ORDER BY queue LIMIT 1)
    FROM pairs p
    WHERE p.queue IS NOT NULL
)
SELECT p.queue, p.state::text AS state,
       (SELECT count(*) FROM (SELECT 1 FROM oban_jobs j
                              WHERE j.state = p.state AND j.queue = p.queue
                              LIMIT %(cap)s) capped) AS n,
       CASE WHEN p.state = 'available' THEN
           (SELECT j.scheduled_at FROM oban_jobs j
            WHERE j.state = p.state AND j.queue = p.queue
            ORDER BY j.priority, j.scheduled_at, j.id LIMIT 1)
       END AS oldest_available
FROM pairs p
WHERE p.queue IS NOT NULL;

-- name: producers
-- oban-py's producers (install.sql oban_producers, written by _producer.py and kept
-- fresh by _refresher.py): one per queue per node, its meta saying local_limit and paused
-- as the producer last wrote them (pause, resume and scale update it).
SELECT uuid::text AS uuid, name, node, queue, meta, started_at, updated_at
FROM oban_producers
ORDER BY queue, node, uuid;

-- name: leader
-- oban-py's leader (install.sql oban_leaders, _leader.py elect_leader.sql).
SELECT name, node, elected_at AS started_at, expires_at FROM oban_leaders ORDER BY name;

-- name: peers
-- Elixir Oban's peers (v11.ex oban_peers, lib/oban/peers/database.ex): the one row per
-- Oban instance name is its leader.
SELECT name, node, started_at, expires_at FROM oban_peers ORDER BY name;

-- name: throughput
-- Jobs finished per state in the last %(seconds)s seconds, per queue (each finished
-- state's own instant: completed_at, cancelled_at, discarded_at), one branch per state
-- so that each can use the index on its instant (oban-py's oban_jobs_completed_at_index
-- and its siblings; Elixir's v13 state-instant indexes).
SELECT queue,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE state = 'discarded') AS discarded
FROM (
    SELECT queue, 'completed' AS state FROM oban_jobs
    WHERE state = 'completed'
      AND completed_at >= timezone('UTC', now()) - make_interval(secs => %(seconds)s)
    UNION ALL
    SELECT queue, 'cancelled' FROM oban_jobs
    WHERE state = 'cancelled'
      AND cancelled_at >= timezone('UTC', now()) - make_interval(secs => %(seconds)s)
    UNION ALL
    SELECT queue, 'discarded' FROM oban_jobs
    WHERE state = 'discarded'
      AND discarded_at >= timezone('UTC', now()) - make_interval(secs => %(seconds)s)
) finished
GROUP BY queue
ORDER BY queue;

-- name: discarded
-- Discarded jobs per queue (out of attempts, or discarded by their worker), counted on
-- the state-queue index until the pruner deletes them.
SELECT queue, count(*) AS n FROM oban_jobs WHERE state = 'discarded' GROUP BY queue ORDER BY queue;

-- name: job_ids_by_prefix
-- Job ids for shell completion (oban_jobs.id, a bigserial in oban-py's install.sql and
-- Elixir's v01.ex): the ids whose digits start with what was typed are the ranges
-- reads.id_ranges gives, each read newest first on the primary key, the shortest ids
-- first.
SELECT j.id
FROM unnest(%(lows)s::bigint[], %(highs)s::bigint[]) WITH ORDINALITY AS r(low, high, n)
CROSS JOIN LATERAL (
    SELECT id FROM oban_jobs WHERE id BETWEEN r.low AND r.high ORDER BY id DESC
    LIMIT %(limit)s
) j
ORDER BY r.n, j.id DESC
LIMIT %(limit)s;
