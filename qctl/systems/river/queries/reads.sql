-- qctl's reads of a River database (River v0.51.2's tables,
-- riverdriver/riverpgxv5/migration/main/*.up.sql). A NULL filter parameter means "any";
-- every listing is newest first with a keyset cursor on the job id (river_job's
-- bigserial primary key, so ids sort by insertion), never an offset.

-- name: list_jobs
-- A page of jobs, newest first (River's JobList ordered by id descending), filtered as
-- fragments.sql job_rows and contains say.
{job_rows}
  AND {contains}
  AND (%(after_id)s::bigint IS NULL OR id < %(after_id)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: list_finalized_jobs
-- A page of the jobs of one finalized state, newest finalized first (River UI's lists of
-- completed, cancelled and discarded jobs: JobListOrderByTime orders these by
-- finalized_at, then id, and JobList filters one state by equality so that the index
-- serves the order, job_list_params.go), after the keyset (%(after_at)s, %(after_id)s),
-- filtered as job_rows and contains say: one backward range of
-- river_job_state_and_finalized_at_index (state, finalized_at) WHERE finalized_at IS
-- NOT NULL. reads.py merges the pages of several states.
{job_rows}
  AND {contains}
  AND state = %(state)s::river_job_state
  AND finalized_at IS NOT NULL
  AND (%(after_id)s::bigint IS NULL
       OR (finalized_at, id) < (%(after_at)s::timestamptz, %(after_id)s::bigint))
ORDER BY finalized_at DESC, id DESC
LIMIT %(limit)s;

-- name: get_job
-- One job by id, its errors (the attempt history) included (River's JobGetByID).
SELECT id, state::text AS state, queue, kind, priority, attempt, max_attempts,
       scheduled_at, attempted_at, attempted_by, created_at, finalized_at, tags,
       unique_key, unique_states::text AS unique_states, args, metadata,
       coalesce(array_length(errors, 1), 0) AS error_count, errors
FROM river_job
WHERE id = %(id)s;

-- name: queues
-- Every queue River knows (river_queue: a row per queue a client has worked, River's
-- QueueList, internal/dbsqlc/river_queue.sql) or that holds jobs not yet finalized, with
-- its jobs per state. The states that are not finalized are counted on
-- river_job_prioritized_fetching_index (state, queue, ...); the finalized ones are counted
-- too, by reading every job (`qctl top` reads only the live ones: live_depths).
WITH counts AS (
    SELECT queue,
           count(*) FILTER (WHERE state = 'available') AS available,
           count(*) FILTER (WHERE state = 'running') AS running,
           count(*) FILTER (WHERE state = 'scheduled') AS scheduled,
           count(*) FILTER (WHERE state = 'retryable') AS retryable,
           count(*) FILTER (WHERE state = 'pending') AS pending,
           count(*) FILTER (WHERE state = 'completed') AS completed,
           count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
           count(*) FILTER (WHERE state = 'discarded') AS discarded,
           now() - min(scheduled_at) FILTER (WHERE state = 'available') AS oldest_available_age
    FROM river_job
    GROUP BY queue
)
SELECT coalesce(q.name, c.queue) AS queue, q.paused_at, q.created_at, q.updated_at, q.metadata,
       coalesce(c.available, 0) AS available, coalesce(c.running, 0) AS running,
       coalesce(c.scheduled, 0) AS scheduled, coalesce(c.retryable, 0) AS retryable,
       coalesce(c.pending, 0) AS pending, coalesce(c.completed, 0) AS completed,
       coalesce(c.cancelled, 0) AS cancelled, coalesce(c.discarded, 0) AS discarded,
       c.oldest_available_age
FROM river_queue q
FULL JOIN counts c ON c.queue = q.name
ORDER BY 1;

-- name: live_depths
-- As queues, the live states only: each state one range of
-- river_job_prioritized_fetching_index (state, queue, priority, scheduled_at, id), never
-- the finalized jobs (the bulk of a busy table); the dashboard's Queues tab.
WITH counts AS (
    SELECT queue,
           count(*) FILTER (WHERE state = 'available') AS available,
           count(*) FILTER (WHERE state = 'running') AS running,
           count(*) FILTER (WHERE state = 'scheduled') AS scheduled,
           count(*) FILTER (WHERE state = 'retryable') AS retryable,
           count(*) FILTER (WHERE state = 'pending') AS pending,
           now() - min(scheduled_at) FILTER (WHERE state = 'available') AS oldest_available_age
    FROM river_job
    WHERE state IN ('available', 'running', 'scheduled', 'retryable', 'pending')
    GROUP BY queue
)
SELECT coalesce(q.name, c.queue) AS queue, q.paused_at, q.created_at, q.updated_at, q.metadata,
       coalesce(c.available, 0) AS available, coalesce(c.running, 0) AS running,
       coalesce(c.scheduled, 0) AS scheduled, coalesce(c.retryable, 0) AS retryable,
       coalesce(c.pending, 0) AS pending, NULL::bigint AS completed,
       NULL::bigint AS cancelled, NULL::bigint AS discarded,
       c.oldest_available_age
FROM river_queue q
FULL JOIN counts c ON c.queue = q.name
ORDER BY 1;

-- name: failures
-- A page of `jobs errors`' read (reads.error_groups), newest first by id after a keyset
-- cursor: of each job of the states only its id, kind, the text of its last error and
-- when it failed. River's completer appends one rivertype.AttemptError (at, attempt,
-- error, trace) to river_job.errors (jsonb[]) per failed attempt
-- (river_job.sql JobSetStateIfRunningMany appends it); the last is the newest.
-- An element that is not an object reads as no text.
SELECT id, kind,
       left(errors[array_upper(errors, 1)] ->> 'error', 4096) AS error,
       coalesce(finalized_at, attempted_at) AS at
FROM river_job
WHERE state::text = ANY(%(states)s::text[])
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
  AND (%(priorities)s::int[] IS NULL OR priority = ANY(%(priorities)s::int[]))
  AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::varchar(255)[])
  AND (%(after_id)s::bigint IS NULL OR id < %(after_id)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s;

-- name: throughput
-- Per queue and bucket of %(width)s seconds (their index from the Unix epoch): jobs
-- finalized completed, cancelled and discarded, by finalized_at (River's completer sets
-- it with the final state: river_job.sql JobSetStateIfRunningMany). Each state is one
-- range of river_job_state_and_finalized_at_index (state, finalized_at), from the
-- window's start: never the rest of the table.
SELECT state::text AS measure, queue,
       floor(date_part('epoch', finalized_at) / %(width)s)::bigint AS bucket, count(*) AS n
FROM river_job
WHERE state IN ('completed', 'cancelled', 'discarded')
  AND finalized_at IS NOT NULL
  AND finalized_at >= %(since)s
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
GROUP BY 1, 2, 3;

-- name: finalized_recently
-- Per queue, the jobs finalized completed and discarded since %(since)s (qctl metrics):
-- each state one range of river_job_state_and_finalized_at_index, as throughput reads
-- them.
SELECT queue,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'discarded') AS discarded
FROM river_job
WHERE state IN ('completed', 'discarded')
  AND finalized_at IS NOT NULL
  AND finalized_at >= %(since)s
GROUP BY queue;

-- name: discarded_bounded
-- Discarded jobs per queue for `qctl metrics`: the newest %(cap)s of them by finalized_at,
-- one range of river_job_state_and_finalized_at_index (the queue is read from each
-- row, so a count of millions is capped); `read` says how many were read (fewer than the
-- cap: all of them).
SELECT queue, count(*) AS n, count(*) AS read
FROM (SELECT queue FROM river_job
      WHERE state = 'discarded' AND finalized_at IS NOT NULL
      ORDER BY finalized_at DESC
      LIMIT %(cap)s) d
GROUP BY queue;

-- name: leader
-- The elected leader (river_leader.sql LeaderGetElectedLeader; one row, named 'default'),
-- which runs River's maintenance (cleaner, rescuer, scheduler, ...): its client id, when
-- it was elected and when its lease expires unless it renews it (LeaderAttemptReelect).
SELECT name, leader_id, elected_at, expires_at, expires_at < now() AS expired
FROM river_leader
ORDER BY name;

-- name: clients
-- The clients River's schema shows at work: River v0.51.2 keeps no client table
-- (007_notification_outbox_sqlite_jsonb_and_sql_cleanup dropped river_client and
-- river_client_queue, which no River version wrote), so a client is known by the id its
-- producers write as the last element of attempted_by on the jobs they fetch
-- (river_job.sql JobGetAvailable: array_append(attempted_by, @attempted_by)), and the
-- leader by river_leader's row. Per client and queue, from the running jobs
-- (river_job_prioritized_fetching_index's running range): its jobs running now and
-- since when its oldest one runs; the leader's election and lease on its rows, and a
-- row of its own when it runs no job.
WITH running AS (
    SELECT attempted_by[array_upper(attempted_by, 1)] AS client, queue,
           count(*) AS running, min(attempted_at) AS oldest_attempted_at
    FROM river_job
    WHERE state = 'running'
    GROUP BY 1, 2
)
SELECT coalesce(r.client, l.leader_id) AS client, r.queue, coalesce(r.running, 0) AS running,
       r.oldest_attempted_at, l.leader_id IS NOT NULL AS leader, l.elected_at, l.expires_at
FROM running r
FULL JOIN river_leader l ON l.leader_id = r.client
ORDER BY 1, 2;

-- name: queue
-- One queue (river_queue.sql QueueGet, its metadata included; no row when no River
-- client has worked it) with its jobs per state and the oldest available job's wait,
-- each state one range of river_job_prioritized_fetching_index (state, queue, ...) for
-- this queue alone. NULL queue columns and zero jobs: no such queue anywhere.
SELECT %(name)s::text AS queue, q.paused_at, q.created_at, q.updated_at, q.metadata,
       (SELECT count(*) FROM river_job WHERE state = 'available' AND queue = %(name)s)
           AS available,
       (SELECT count(*) FROM river_job WHERE state = 'running' AND queue = %(name)s) AS running,
       (SELECT count(*) FROM river_job WHERE state = 'scheduled' AND queue = %(name)s)
           AS scheduled,
       (SELECT count(*) FROM river_job WHERE state = 'retryable' AND queue = %(name)s)
           AS retryable,
       (SELECT count(*) FROM river_job WHERE state = 'pending' AND queue = %(name)s) AS pending,
       (SELECT count(*) FROM river_job WHERE state = 'completed' AND queue = %(name)s)
           AS completed,
       (SELECT count(*) FROM river_job WHERE state = 'cancelled' AND queue = %(name)s)
           AS cancelled,
       (SELECT count(*) FROM river_job WHERE state = 'discarded' AND queue = %(name)s)
           AS discarded,
       now() - (SELECT min(scheduled_at) FROM river_job
                WHERE state = 'available' AND queue = %(name)s) AS oldest_available_age,
       q.name IS NOT NULL AS registered
FROM (SELECT 1) one
LEFT JOIN river_queue q ON q.name = %(name)s;

-- name: now
-- The database's now, which River's statements compare instants with.
SELECT now() AS now;

-- name: migration_has_line
-- Whether river_migration has its line column (005_migration_unique_client.up.sql).
SELECT count(*) AS n FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'river_migration'
  AND column_name = 'line';
