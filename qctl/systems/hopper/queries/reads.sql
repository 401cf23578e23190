-- qctl's reads of a hopper database (hopper's tables at schema version 8,
-- hoppermigrate/migrations/001..008), unqualified: the connection's search_path is the
-- hopper schema. A NULL filter parameter means "any". Job listings are newest first
-- by id (hopper's ids are UUIDv7: id order is insertion order), with a keyset cursor
-- on id, never an offset.

-- name: list_jobs
-- A page of jobs, live and finalized together, newest first, filtered by states, kinds
-- and queues. Each part walks its id index backwards (hopper_jobs_pkey, the history
-- partitions' hopper_job_history_id) and the merge stops at the limit, as hopper's own
-- JobList (driver/internal/pgsql/jobs.go) reads both tables in id order. History is
-- read as its two partitions by outcome (hoppermigrate/migrations/001:
-- hopper_job_history_completed, hopper_job_history_failed), each skipped when the
-- states filter excludes it, or, through its (queue, finalized_at) index, when the
-- queue filter's queues have no row there: the merge reads one row of every part, and a
-- part with none would be walked whole. States compare as hopper_job_state.
(SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, NULL::timestamptz AS finalized_at, NULL::jsonb AS output
 FROM hopper_jobs
 WHERE %(live)s
   AND (%(states)s::hopper_job_state[] IS NULL OR state = ANY(%(states)s::hopper_job_state[]))
   AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
   AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
   AND (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
 ORDER BY id DESC
 LIMIT %(limit)s)
UNION ALL
(SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, finalized_at, output
 FROM hopper_job_history_completed
 WHERE %(completed)s
   AND (%(states)s::hopper_job_state[] IS NULL OR state = ANY(%(states)s::hopper_job_state[]))
   AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
   AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
   AND (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
   AND (%(queues)s::text[] IS NULL
        OR EXISTS (SELECT 1 FROM hopper_job_history_completed q WHERE q.queue = ANY(%(queues)s::text[])))
 ORDER BY id DESC
 LIMIT %(limit)s)
UNION ALL
(SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, finalized_at, output
 FROM hopper_job_history_failed
 WHERE %(failed)s
   AND (%(states)s::hopper_job_state[] IS NULL OR state = ANY(%(states)s::hopper_job_state[]))
   AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
   AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
   AND (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
   AND (%(queues)s::text[] IS NULL
        OR EXISTS (SELECT 1 FROM hopper_job_history_failed q WHERE q.queue = ANY(%(queues)s::text[])))
 ORDER BY id DESC
 LIMIT %(limit)s)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: get_job
-- One job by id, live first, else from history (driver/internal/pgsql/jobs.go JobGet).
SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, NULL::timestamptz AS finalized_at, NULL::jsonb AS output
FROM hopper_jobs WHERE id = %(id)s
UNION ALL
SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, finalized_at, output
FROM hopper_job_history WHERE id = %(id)s
LIMIT 1;

-- name: job_ids_in_range
-- At most six job ids, live or finalized, between two UUIDs (a typed prefix padded with
-- 0s and fs: a range of the id indexes, not a scan): one names its job, more are listed.
(SELECT id FROM hopper_jobs WHERE id BETWEEN %(lo)s::uuid AND %(hi)s::uuid ORDER BY id LIMIT 6)
UNION
(SELECT id FROM hopper_job_history WHERE id BETWEEN %(lo)s::uuid AND %(hi)s::uuid ORDER BY id LIMIT 6)
ORDER BY id LIMIT 6;

-- name: job_deps
-- A job's unsatisfied workflow edges, both ways: what it waits on and what waits on it
-- (hopper_job_deps keeps an edge until its dependent finalizes).
SELECT job_id, depends_on, on_failure
FROM hopper_job_deps
WHERE job_id = %(id)s OR depends_on = %(id)s
ORDER BY job_id, depends_on;

-- name: list_queues
-- Every known queue with its pause and cluster-wide limits (driver/internal/pgsql/
-- cluster.go QueueList), and its live jobs by state (the claim and running indexes).
SELECT q.name, q.paused_at, q.updated_at, q.global_limit, q.rate_per_sec, q.rate_burst,
       q.partition_limit, q.aging_seconds, q.metadata
FROM hopper_queues q
ORDER BY q.name;

-- name: get_queue
-- One queue row by name.
SELECT name, paused_at, updated_at, global_limit, rate_per_sec, rate_burst,
       partition_limit, aging_seconds, metadata
FROM hopper_queues
WHERE name = %(name)s;

-- name: queue_depths
-- Live jobs per queue and state, the age of the oldest claimable one (its schedule
-- passed), and completions in the last minute from the history index
-- (driver/internal/pgsql/cluster.go statsSQL). hopper_job_history_completed is the
-- partition of state 'completed' (hoppermigrate/migrations/001): read directly, its
-- (queue, finalized_at) index answers without visiting the rows.
WITH d AS (
    SELECT queue, state::text AS state, count(*) AS n,
           now() - min(scheduled_at) FILTER (
               WHERE state IN ('available', 'scheduled', 'retryable') AND scheduled_at <= now()
           ) AS oldest
    FROM hopper_jobs
    GROUP BY queue, state
),
names AS (SELECT queue FROM d UNION SELECT name FROM hopper_queues)
SELECT names.queue,
       coalesce(sum(d.n) FILTER (WHERE d.state = 'pending'), 0)::bigint AS pending,
       coalesce(sum(d.n) FILTER (WHERE d.state = 'available'), 0)::bigint AS available,
       coalesce(sum(d.n) FILTER (WHERE d.state = 'scheduled'), 0)::bigint AS scheduled,
       coalesce(sum(d.n) FILTER (WHERE d.state = 'retryable'), 0)::bigint AS retryable,
       coalesce(sum(d.n) FILTER (WHERE d.state = 'running'), 0)::bigint AS running,
       max(d.oldest) AS oldest_available,
       (SELECT count(*) FROM hopper_job_history_completed h
        WHERE h.queue = names.queue
          AND h.finalized_at > now() - interval '1 minute') AS completed_last_minute,
       (SELECT q.paused_at IS NOT NULL FROM hopper_queues q WHERE q.name = names.queue)
           AS paused
FROM names LEFT JOIN d ON d.queue = names.queue
GROUP BY names.queue
ORDER BY names.queue;

-- name: queue_depths_indexed
-- queue_depths on qctl's opt-in index (tune.py's qctl_hopper_jobs_queue_state), same rows.
-- Where `qctl db tune` created it: the queues with live jobs by a loose scan of it (one
-- descent per queue), each state's count an index-only range of (queue, state), each
-- waiting state's oldest due job one descent; nothing reads the live table's rows.
WITH RECURSIVE found(queue) AS (
    (SELECT queue FROM hopper_jobs ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue FROM hopper_jobs j WHERE j.queue > f.queue ORDER BY j.queue LIMIT 1)
    FROM found f WHERE f.queue IS NOT NULL
),
names AS (SELECT queue FROM found WHERE queue IS NOT NULL UNION SELECT name FROM hopper_queues)
SELECT n.queue,
       (SELECT count(*) FROM hopper_jobs j WHERE j.queue = n.queue AND j.state = 'pending')
           AS pending,
       (SELECT count(*) FROM hopper_jobs j WHERE j.queue = n.queue AND j.state = 'available')
           AS available,
       (SELECT count(*) FROM hopper_jobs j WHERE j.queue = n.queue AND j.state = 'scheduled')
           AS scheduled,
       (SELECT count(*) FROM hopper_jobs j WHERE j.queue = n.queue AND j.state = 'retryable')
           AS retryable,
       (SELECT count(*) FROM hopper_jobs j WHERE j.queue = n.queue AND j.state = 'running')
           AS running,
       now() - least(
           (SELECT min(j.scheduled_at) FROM hopper_jobs j
            WHERE j.queue = n.queue AND j.state = 'available' AND j.scheduled_at <= now()),
           (SELECT min(j.scheduled_at) FROM hopper_jobs j
            WHERE j.queue = n.queue AND j.state = 'scheduled' AND j.scheduled_at <= now()),
           (SELECT min(j.scheduled_at) FROM hopper_jobs j
            WHERE j.queue = n.queue AND j.state = 'retryable' AND j.scheduled_at <= now())
       ) AS oldest_available,
       (SELECT count(*) FROM hopper_job_history_completed h
        WHERE h.queue = n.queue
          AND h.finalized_at > now() - interval '1 minute') AS completed_last_minute,
       (SELECT q.paused_at IS NOT NULL FROM hopper_queues q WHERE q.name = n.queue) AS paused
FROM names n
ORDER BY n.queue;

-- name: cluster
-- The live clients and the leader (driver/internal/pgsql/cluster.go statsSQL).
SELECT (SELECT count(*) FROM hopper_clients WHERE expires_at > now()) AS live_clients,
       (SELECT client_id FROM hopper_leader WHERE name = 'default' AND expires_at > now())
           AS leader;

-- name: list_clients
-- Every client lease, live or expired (driver/internal/pgsql/cluster.go ClientList),
-- with the jobs each holds running and whether it is the leader.
SELECT c.id, c.hostname, c.started_at, c.expires_at, c.expires_at > now() AS live, c.info,
       (SELECT count(*) FROM hopper_jobs j
        WHERE j.state = 'running' AND j.attempted_by = c.id) AS running,
       EXISTS (SELECT 1 FROM hopper_leader l
               WHERE l.name = 'default' AND l.client_id = c.id AND l.expires_at > now())
           AS leader
FROM hopper_clients c
ORDER BY c.id;

-- name: list_periodic
-- The last slot inserted of each periodic job (driver/internal/pgsql/cluster.go
-- PeriodicLastSlots).
SELECT name, last_slot FROM hopper_periodic ORDER BY name;

-- name: list_subscriptions
-- Every topic subscription (hopper_subscriptions).
SELECT name, pattern, kind, queue, max_attempts, metadata, created_at
FROM hopper_subscriptions
ORDER BY name;

-- name: list_batches
-- A page of batches and workflows, newest first by id (UUIDv7).
SELECT id, name, pending, failed, total, created_at, completed_at, metadata, edges,
       on_success, on_failure, on_complete
FROM hopper_batches
WHERE (%(after)s::uuid IS NULL OR id < %(after)s::uuid)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: get_batch
-- One batch or workflow by id.
SELECT id, name, pending, failed, total, created_at, completed_at, metadata, edges,
       on_success, on_failure, on_complete
FROM hopper_batches
WHERE id = %(id)s;

-- name: batch_ids_in_range
-- At most six batch ids between two UUIDs (a typed prefix, as job_ids_in_range).
SELECT id FROM hopper_batches WHERE id BETWEEN %(lo)s::uuid AND %(hi)s::uuid ORDER BY id LIMIT 6;

-- name: batch_jobs
-- A batch's jobs, live and finalized, in insertion order (driver/internal/pgsql/flow.go
-- WorkflowGet, over the hopper_jobs_batch and hopper_job_history_batch indexes).
SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, finalized_at, output FROM (
    SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, seq, NULL::timestamptz AS finalized_at, NULL::jsonb AS output
    FROM hopper_jobs WHERE batch_id = %(id)s
    UNION ALL
    SELECT id, kind, queue, state, priority, attempt, max_attempts, scheduled_at,
       attempted_at, attempted_by, args, metadata, errors, unique_key, ordering_key,
       partition_key, batch_id, expires_at, cancel_requested_at, await, created_at, seq, finalized_at, output
    FROM hopper_job_history WHERE batch_id = %(id)s
) u
ORDER BY seq;

-- name: list_stream_consumers
-- Every stream consumer with where it has read to (driver/internal/pgsql/stream.go
-- StreamConsumerList): the snapshot it has seen, the delta it is part way through, and
-- the position (xid:seq) of the last event it delivered of that delta.
SELECT name, pattern, kind, queue, max_attempts, seen::text AS seen, reading::text AS reading,
       xid::text AS xid, seq, delivered_at, created_at, metadata
FROM hopper_stream_consumers
ORDER BY name;

-- name: get_stream_consumer
-- One stream consumer by name.
SELECT name, pattern, kind, queue, max_attempts, seen::text AS seen, reading::text AS reading,
       xid::text AS xid, seq, delivered_at, created_at, metadata
FROM hopper_stream_consumers
WHERE name = %(name)s;

-- name: throughput_finalized
-- Jobs completed, discarded (failed) and cancelled in each bucket of a window, per
-- queue: for every queue and bucket, a count of one range of each outcome partition's
-- (queue, finalized_at) index (index-only for completed: its partition holds that state
-- alone), so no row's time is computed and the time partitions outside the bucket are
-- pruned. The queues come from a loose scan of that index (one descent per queue). A
-- job deleted without history (a queue with DeleteCompleted) is not counted, nor one
-- retention has dropped.
WITH RECURSIVE hq AS (
    (SELECT queue FROM hopper_job_history ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT h.queue FROM hopper_job_history h WHERE h.queue > hq.queue
            ORDER BY h.queue LIMIT 1)
    FROM hq WHERE hq.queue IS NOT NULL
)
SELECT b.start, hq.queue,
       (SELECT count(*) FROM hopper_job_history_completed h
        WHERE h.queue = hq.queue AND h.finalized_at >= b.start AND h.finalized_at < b.stop)
           AS completed,
       f.failed, f.cancelled
FROM hq
CROSS JOIN unnest(%(starts)s::timestamptz[], %(stops)s::timestamptz[]) AS b(start, stop)
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE h.state = 'discarded') AS failed,
           count(*) FILTER (WHERE h.state = 'cancelled') AS cancelled
    FROM hopper_job_history_failed h
    WHERE h.queue = hq.queue AND h.finalized_at >= b.start AND h.finalized_at < b.stop
) f
WHERE hq.queue IS NOT NULL
  AND (%(queues)s::text[] IS NULL OR hq.queue = ANY(%(queues)s::text[]));

-- name: throughput_enqueued
-- Jobs inserted in each bucket of a window, live or finalized: per bucket, a count of
-- one range of the id indexes (hopper_jobs_pkey, hopper_job_history_id), index-only,
-- between the first UUIDv7s of the bucket's start and end (hopper's ids are UUIDv7s,
-- made when the job is inserted, carrying that millisecond).
SELECT b.start, NULL::text AS queue,
       (SELECT count(*) FROM hopper_jobs WHERE id >= b.lo AND id < b.hi)
       + (SELECT count(*) FROM hopper_job_history WHERE id >= b.lo AND id < b.hi) AS enqueued
FROM unnest(%(starts)s::timestamptz[], %(los)s::uuid[], %(his)s::uuid[]) AS b(start, lo, hi);

-- name: throughput_enqueued_queues
-- throughput_enqueued per queue, or for some queues: the same id ranges, each row
-- visited for its queue (no index holds a job's queue with its id).
SELECT b.start, j.queue, count(*) AS enqueued
FROM unnest(%(starts)s::timestamptz[], %(los)s::uuid[], %(his)s::uuid[]) AS b(start, lo, hi)
CROSS JOIN LATERAL (
    SELECT queue FROM hopper_jobs WHERE id >= b.lo AND id < b.hi
    UNION ALL
    SELECT queue FROM hopper_job_history WHERE id >= b.lo AND id < b.hi
) j
WHERE %(queues)s::text[] IS NULL OR j.queue = ANY(%(queues)s::text[])
GROUP BY b.start, j.queue;

-- name: clock
-- The database's clock, which the throughput grid is laid on.
SELECT now() AS now;

-- name: failures_of
-- The head of `jobs errors`' read: reads.error_groups follows it with list_jobs as a
-- subquery (the same parts, walked and skipped the same way) and takes of each job only
-- its id, kind, the last element of errors (its first 4096 characters; hopper appends
-- one per failed attempt) and when it failed: finalized_at in history, else when its
-- last attempt started.
SELECT id, kind,
       left(CASE WHEN jsonb_typeof(errors) = 'array' THEN errors -> -1 ->> 'error' END, 4096)
           AS error,
       coalesce(finalized_at, attempted_at) AS at
FROM

-- name: discarded_bounded
-- Discarded jobs per queue for `qctl metrics`. No index holds a history row's state (the
-- failed partition holds cancelled and discarded jobs alike), so at most %(cap)s of its
-- rows are read, in no order: `read` says how many (fewer than the cap: all of them).
SELECT queue, count(*) FILTER (WHERE state = 'discarded') AS n, count(*) AS read
FROM (SELECT queue, state FROM hopper_job_history_failed LIMIT %(cap)s) h
GROUP BY queue;
