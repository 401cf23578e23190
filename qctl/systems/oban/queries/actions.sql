-- qctl's writes to an Oban database, each with the effect of the upstream statement named
-- above it (oban-py 0.7.0's oban/queries/*.sql and oban.py; Elixir Oban's
-- lib/oban/engines/basic.ex), for a batch of ids at once. The state upstream checks is
-- the statement's own predicate, so a producer's fetch or ack between qctl's plan and
-- its write leaves that row alone. Rows another transaction holds locked (a producer's
-- ack, the pruner's delete, the stager) are skipped, not waited for: a batch waiting on
-- one of them while holding others could deadlock with it; actions.py runs each skipped
-- job again alone, after lock_job waits for its lock. %(py)s: the schema is oban-py's.

-- name: lock_job
-- Wait for one job's row lock, holding no other.
SELECT id FROM oban_jobs WHERE id = %(id)s FOR UPDATE;

-- name: cancel_jobs
-- Cancel a batch of jobs (oban-py cancel_many_jobs.sql and Oban.cancel_many_jobs;
-- Elixir basic.ex cancel_all_jobs and Oban.cancel_all_jobs): a job waiting to run
-- (available, scheduled, suspended, retryable) is cancelled now, and on oban-py marked
-- meta.cancel_attempted_at as oban-py marks it. An executing job is signalled on
-- <prefix>.oban_signal with {"action": "pkill", "job_id": id}, the payload both
-- flavours' producers match (oban-py _producer.py _on_signal: the node running it cancels
-- its task and acks it cancelled). On oban-py its row is left to that ack, as oban-py
-- leaves it; Elixir's engine cancels the executing row in the same statement that
-- signals it (its producer kills the process without acking), and so does this one on
-- the Elixir flavour (%(cancel_executing)s).
WITH locked AS (
    SELECT id, state
    FROM oban_jobs
    WHERE id = ANY(%(ids)s::bigint[])
      AND state::text IN ('executing', 'available', 'scheduled', 'retryable', 'suspended')
    FOR UPDATE SKIP LOCKED
), updated AS (
    UPDATE oban_jobs j
    SET state = CASE WHEN l.state = 'executing' AND NOT %(cancel_executing)s
                     THEN j.state ELSE 'cancelled' END,
        cancelled_at = CASE WHEN l.state = 'executing' AND NOT %(cancel_executing)s
                            THEN j.cancelled_at ELSE timezone('UTC', now()) END,
        meta = CASE WHEN l.state <> 'executing' AND %(py)s
                    THEN j.meta || jsonb_build_object('cancel_attempted_at',
                                                      timezone('UTC', now()))
                    ELSE j.meta END
    FROM locked l
    WHERE j.id = l.id
    RETURNING j.id, l.state::text AS original_state
)
SELECT id::text AS id,
       CASE WHEN original_state = 'executing'
            THEN pg_notify(%(channel)s, json_build_object('action', 'pkill', 'job_id', id)::text)
       END AS notified
FROM updated;

-- name: retry_jobs
-- Make a batch of jobs available now (oban-py retry_many_jobs.sql; Elixir basic.ex
-- retry_all_jobs): max_attempts raised to attempt + 1 when they are spent, scheduled_at
-- now, the finished instants cleared; on oban-py the uniqueness bitmap emptied
-- (meta.uniq_bmp = [], as retry_many_jobs.sql does). Never an available or executing
-- job (upstream's predicate), nor a suspended one (qctl's: it waits for what suspended
-- it).
WITH locked AS (
    SELECT id
    FROM oban_jobs
    WHERE id = ANY(%(ids)s::bigint[])
      AND state::text IN ('scheduled', 'retryable', 'completed', 'cancelled', 'discarded')
    FOR UPDATE SKIP LOCKED
)
UPDATE oban_jobs j
SET state = 'available',
    max_attempts = GREATEST(j.max_attempts, j.attempt + 1),
    scheduled_at = timezone('UTC', now()),
    completed_at = NULL,
    cancelled_at = NULL,
    discarded_at = NULL,
    meta = CASE WHEN %(py)s THEN jsonb_set(j.meta, ARRAY['uniq_bmp'], '[]'::jsonb) ELSE j.meta END
FROM locked
WHERE j.id = locked.id
RETURNING j.id::text AS id;

-- name: delete_jobs
-- Delete a batch of jobs (oban-py delete_many_jobs.sql; Elixir basic.ex
-- delete_all_jobs): never an executing one.
WITH doomed AS (
    SELECT id
    FROM oban_jobs
    WHERE id = ANY(%(ids)s::bigint[]) AND state <> 'executing'
    FOR UPDATE SKIP LOCKED
)
DELETE FROM oban_jobs j
USING doomed
WHERE j.id = doomed.id
RETURNING j.id::text AS id;

-- name: job_targets_page
-- A page of the jobs a bulk verb's filter matches, ids and states only, newest first
-- after a cursor (reads.sql list_jobs without the columns a verb does not check).
-- Ordered by the column, not the text id the select names (a bare ORDER BY id would
-- sort the text: 999 before 3000, so the keyset would skip jobs).
SELECT id::text AS id, state::text AS state, worker
FROM oban_jobs
WHERE state = ANY(ARRAY(SELECT s FROM unnest(enum_range(NULL::oban_job_state)) AS s
                WHERE s::text = ANY(%(states)s::text[])))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(workers)s::text[] IS NULL OR worker = ANY(%(workers)s::text[]))
  AND {contains}
  AND (%(after)s::bigint IS NULL OR id < %(after)s::bigint)
ORDER BY oban_jobs.id DESC
LIMIT %(limit)s;

-- name: job_targets
-- The current state of the given jobs that exist.
SELECT id::text AS id, state::text AS state, worker
FROM oban_jobs
WHERE id = ANY(%(ids)s::bigint[]);

-- name: signal_queues
-- Signal a batch of queues on <prefix>.oban_signal as Oban.pause_queue,
-- Oban.resume_queue and Oban.scale_queue do (oban-py oban.py; Elixir lib/oban.ex):
-- {"action", "queue", "ident"} and for a scale "limit"; ident "any", or
-- "<instance name>.<node>" for one node. The producers act on it (_producer.py
-- _on_signal, oban.py _on_signal) and write their meta themselves.
SELECT q AS id,
       pg_notify(%(channel)s, (jsonb_build_object('action', %(action)s::text, 'queue', q,
                                                  'ident', %(ident)s::text)
                               || coalesce(%(extra)s::jsonb, '{}'::jsonb))::text) AS notified
FROM unnest(%(names)s::text[]) AS q;

-- name: prune_jobs
-- Delete a batch of finished jobs older than the cutoff, in id order after the last
-- deleted (oban-py _pruner.py prune_jobs.sql: completed by completed_at, cancelled by
-- cancelled_at, discarded by discarded_at; Elixir lib/oban/plugins/pruner.ex: the same,
-- but completed by attempted_at). Rows another transaction holds are left for the next
-- pass.
WITH doomed AS (
    SELECT id
    FROM oban_jobs
    WHERE ((state = 'completed' AND %(py)s AND completed_at < %(before)s)
        OR (state = 'completed' AND NOT %(py)s AND attempted_at < %(before)s)
        OR (state = 'cancelled' AND cancelled_at < %(before)s)
        OR (state = 'discarded' AND discarded_at < %(before)s))
      AND (%(after)s::bigint IS NULL OR id > %(after)s::bigint)
    ORDER BY id
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM oban_jobs j
USING doomed
WHERE j.id = doomed.id
RETURNING j.id;

-- name: count_prunable
-- What prune_jobs would delete (vacuum --dry-run).
SELECT count(*) AS n
FROM oban_jobs
WHERE (state = 'completed' AND %(py)s AND completed_at < %(before)s)
   OR (state = 'completed' AND NOT %(py)s AND attempted_at < %(before)s)
   OR (state = 'cancelled' AND cancelled_at < %(before)s)
   OR (state = 'discarded' AND discarded_at < %(before)s);

-- name: clock
-- The database's UTC now, as Oban's timestamps hold it (timezone('UTC', now())).
SELECT timezone('UTC', now()) AS now;
