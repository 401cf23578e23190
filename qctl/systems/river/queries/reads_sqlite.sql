-- qctl's reads of a River database on SQLite (River v0.51.2's riversqlite tables,
-- riverdriver/riversqlite/migration/main/*.up.sql): the statements of reads.sql, each
-- with its effect. A list parameter is a JSON array (SQLite has no arrays), NULL meaning
-- "any"; args, metadata, tags, attempted_by and errors are JSONB, read through json()
-- (riversqlite's own reads wrap each JSON column in it), and looked into only where
-- json_valid (SQLite's JSON functions fail a statement on a value nested past 1000
-- levels, or one changed out of band to text that is not JSON); instants are text in UTC
-- ('YYYY-MM-DD HH:MM:SS.SSS', riversqlite's timeString), compared as text as River
-- compares them. Every listing is newest first with a keyset cursor on the job id (a
-- listing of finalized states: newest finalized first, list_finalized_jobs).

-- name: now
-- River's now on SQLite (datetime('now', 'subsec'), written without the subsec modifier
-- that SQLite gained in 3.42).
SELECT strftime('%Y-%m-%d %H:%M:%f', 'now') AS now;

-- name: migration_has_line
-- Whether river_migration has its line column (005_migration_unique_client.up.sql).
SELECT count(*) AS n FROM pragma_table_info('river_migration') WHERE name = 'line';

-- name: list_jobs
-- A page of jobs, newest first, filtered by states, queues, kinds, priorities, tags
-- (every tag given: River's JobList with JobListParams.TagsAll, riversqlite
-- SQLFragmentColumnContainsAll over json_each), args and metadata: fragments.sql
-- job_rows_sqlite, whose {where} is the job_* conditions below of the filters given,
-- joined by AND (reads.job_filter).
{job_rows_sqlite}
ORDER BY id DESC
LIMIT :limit;

-- name: list_finalized_jobs
-- A page of the jobs of one finalized state, newest finalized first, after the keyset
-- (:after_at, :after_id), as reads.sql list_finalized_jobs: one backward range of
-- river_job_state_and_finalized_at_index (state, finalized_at) WHERE finalized_at IS
-- NOT NULL, whose entries end with the id (the rowid), so nothing is sorted. {where}
-- as list_jobs', the state left out and the cursor job_finalized_after
-- (reads.job_filter, finalized).
{job_rows_sqlite}
  AND state = :state
  AND finalized_at IS NOT NULL
ORDER BY finalized_at DESC, id DESC
LIMIT :limit;

-- name: get_job
-- One job by id, its errors (the attempt history) included (River's JobGetByID).
SELECT id, state, queue, kind, priority, attempt, max_attempts,
       scheduled_at, attempted_at, json(attempted_by) AS attempted_by, created_at,
       finalized_at, json(tags) AS tags, unique_key, unique_states, json(args) AS args,
       json(metadata) AS metadata,
       coalesce(CASE WHEN json_valid(json(errors)) THEN json_array_length(json(errors)) END, 0)
           AS error_count,
       json(errors) AS errors
FROM river_job
WHERE id = :id;

-- The conditions of a job listing's {where} (reads.job_filter), one per filter given:
-- SQLite plans a statement once for any parameters, so a ":x IS NULL OR ..." condition
-- never reaches an index, and a condition that can reach one is taken even where it
-- leads to sorting a range of millions of rows for a page. A page newest first walks the
-- ids down from the cursor, as on PostgreSQL's primary key, and stops at a full page;
-- the unary + keeps a condition off the indexes. Two ranges are read instead: one queue
-- on qctl's (queue, id) index (tune.py), in id order, and live states of given queues on
-- river_job_prioritized_fetching_index (state, queue, ...), the jobs River fetches from,
-- sorted. A finalized listing reads its state's range of
-- river_job_state_and_finalized_at_index, so its queues are job_queues, off the indexes.

-- name: job_every
-- No filter.
1

-- name: job_states
-- Any of the states.
+state IN (SELECT value FROM json_each(:states))

-- name: job_live_states
-- Any of the states, each one River fetches from (with job_queue or job_queues).
state IN (SELECT value FROM json_each(:states))

-- name: job_queue
-- The one queue.
queue = :queue

-- name: job_queues
-- Any of the queues.
+queue IN (SELECT value FROM json_each(:queues))

-- name: job_live_queues
-- Any of the queues, with job_live_states.
queue IN (SELECT value FROM json_each(:queues))

-- name: job_kinds
-- Any of the kinds (river_job_kind would read every job of a kind to sort them).
+kind IN (SELECT value FROM json_each(:kinds))

-- name: job_priorities
-- Any of the priorities.
priority IN (SELECT value FROM json_each(:priorities))

-- name: job_tags
-- Every one of the tags.
NOT EXISTS (
    SELECT 1 FROM json_each(:tags) wanted
    WHERE wanted.value NOT IN (SELECT value FROM json_each(json(river_job.tags)))
)

-- name: job_contains
-- The args containing :args and the metadata containing :metadata (JSON objects, one
-- of them NULL for any): fragments.sql contains on SQLite, which has no @>
-- (riversqlite leaves JobListParams.Metadata out): each top-level key of the object
-- present in the column with an equal value: a number equal as a number, an object or
-- array as its JSON text (key order kept), so a nested value must be whole, not
-- contained. A column that is not valid JSON contains nothing. Each column is decoded
-- (json()) once per row, and only when its object is given.
NOT EXISTS (
    SELECT 1
    FROM (SELECT CASE WHEN :args IS NOT NULL THEN json(river_job.args) END AS doc,
                 :args AS fragment
          UNION ALL
          SELECT CASE WHEN :metadata IS NOT NULL THEN json(river_job.metadata) END,
                 :metadata) w,
         json_each(w.fragment) wanted
    WHERE NOT EXISTS (
        SELECT 1 FROM json_each(CASE WHEN json_valid(w.doc) THEN w.doc END) have
        WHERE have.key = wanted.key
          AND have.value IS wanted.value
          AND (have.type = wanted.type
               OR have.type IN ('integer', 'real') AND wanted.type IN ('integer', 'real'))
    )
)

-- name: job_after
-- Past the keyset cursor, newest first.
id < :after_id

-- name: job_finalized_after
-- Past the keyset cursor (:after_at, :after_id), newest finalized first: finalized_at
-- compared in River's timeString form (milliseconds), as the cursor is written,
-- whatever fraction the row's text holds.
(strftime('%Y-%m-%d %H:%M:%f', finalized_at), id) < (:after_at, :after_id)

-- name: queues
-- Every queue River knows (river_queue, River's QueueList) or that holds jobs not yet
-- finalized, with its jobs per state, as reads.sql queues; the oldest available job's
-- wait in seconds.
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
           (julianday('now') - julianday(min(scheduled_at) FILTER (WHERE state = 'available')))
               * 86400.0 AS oldest_available_age
    FROM river_job
    GROUP BY queue
)
SELECT coalesce(q.name, c.queue) AS queue, q.paused_at, q.created_at, q.updated_at,
       json(q.metadata) AS metadata,
       coalesce(c.available, 0) AS available, coalesce(c.running, 0) AS running,
       coalesce(c.scheduled, 0) AS scheduled, coalesce(c.retryable, 0) AS retryable,
       coalesce(c.pending, 0) AS pending, coalesce(c.completed, 0) AS completed,
       coalesce(c.cancelled, 0) AS cancelled, coalesce(c.discarded, 0) AS discarded,
       c.oldest_available_age
FROM river_queue q
FULL JOIN counts c ON c.queue = q.name
ORDER BY 1;

-- name: live_depths
-- As queues, the live states only, each one range of
-- river_job_prioritized_fetching_index (state, queue, priority, scheduled_at, id).
WITH counts AS (
    SELECT queue,
           count(*) FILTER (WHERE state = 'available') AS available,
           count(*) FILTER (WHERE state = 'running') AS running,
           count(*) FILTER (WHERE state = 'scheduled') AS scheduled,
           count(*) FILTER (WHERE state = 'retryable') AS retryable,
           count(*) FILTER (WHERE state = 'pending') AS pending,
           (julianday('now') - julianday(min(scheduled_at) FILTER (WHERE state = 'available')))
               * 86400.0 AS oldest_available_age
    FROM river_job
    WHERE state IN ('available', 'running', 'scheduled', 'retryable', 'pending')
    GROUP BY queue
)
SELECT coalesce(q.name, c.queue) AS queue, q.paused_at, q.created_at, q.updated_at,
       json(q.metadata) AS metadata,
       coalesce(c.available, 0) AS available, coalesce(c.running, 0) AS running,
       coalesce(c.scheduled, 0) AS scheduled, coalesce(c.retryable, 0) AS retryable,
       coalesce(c.pending, 0) AS pending, NULL AS completed, NULL AS cancelled,
       NULL AS discarded, c.oldest_available_age
FROM river_queue q
FULL JOIN counts c ON c.queue = q.name
ORDER BY 1;

-- name: failures
-- A page of `jobs errors`' read, newest first by id after a keyset cursor: each job's
-- id, kind, the text of its last error and when it failed. riversqlite's completer
-- appends one rivertype.AttemptError per failed attempt to the errors array
-- (river_job.sql JobSetStateIfRunning); the last is the newest. An element that is not
-- an object reads as no text. {where} as list_jobs'.
SELECT id, kind,
       substr(CASE WHEN json_valid(json(errors))
                    AND json_type(json(errors), '$[#-1]') = 'object'
                   THEN json_extract(json(errors), '$[#-1].error') END, 1, 4096) AS error,
       coalesce(finalized_at, attempted_at) AS at
FROM river_job
WHERE {where}
ORDER BY id DESC
LIMIT :limit;

-- name: throughput
-- Per queue and bucket of :width seconds (their index from the Unix epoch): jobs
-- finalized completed, cancelled and discarded, by finalized_at, each state one range of
-- river_job_state_and_finalized_at_index (state, finalized_at) from the window's start.
SELECT state AS measure, queue,
       cast((julianday(finalized_at) - 2440587.5) * 86400.0 / :width AS integer) AS bucket,
       count(*) AS n
FROM river_job
WHERE state IN ('completed', 'cancelled', 'discarded')
  AND finalized_at IS NOT NULL
  AND finalized_at >= :since
  AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
GROUP BY 1, 2, 3;

-- name: finalized_recently
-- Per queue, the jobs finalized completed and discarded since :since (qctl metrics).
SELECT queue,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'discarded') AS discarded
FROM river_job
WHERE state IN ('completed', 'discarded')
  AND finalized_at IS NOT NULL
  AND finalized_at >= :since
GROUP BY queue;

-- name: discarded_bounded
-- Discarded jobs per queue for `qctl metrics`: the newest :cap of them by finalized_at;
-- `read` says how many were read.
SELECT queue, count(*) AS n, count(*) AS read
FROM (SELECT queue FROM river_job
      WHERE state = 'discarded' AND finalized_at IS NOT NULL
      ORDER BY finalized_at DESC
      LIMIT :cap) d
GROUP BY queue;

-- name: leader
-- The elected leader (river_leader.sql LeaderGetElectedLeader), its lease compared with
-- River's now.
SELECT name, leader_id, elected_at, expires_at,
       expires_at < strftime('%Y-%m-%d %H:%M:%f', 'now') AS expired
FROM river_leader
ORDER BY name;

-- name: clients
-- The clients at work, as reads.sql clients: a client is the last element of
-- attempted_by on the jobs it fetched (riversqlite JobGetAvailable appends it with
-- json_insert(..., '$[#]', ...)), the leader river_leader's row.
WITH running AS (
    SELECT json_extract(json(attempted_by), '$[#-1]') AS client, queue,
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
-- One queue (river_queue.sql QueueGet) with its jobs per state and the oldest available
-- job's wait in seconds, each state one range of river_job_prioritized_fetching_index.
SELECT :name AS queue, q.paused_at, q.created_at, q.updated_at, json(q.metadata) AS metadata,
       (SELECT count(*) FROM river_job WHERE state = 'available' AND queue = :name)
           AS available,
       (SELECT count(*) FROM river_job WHERE state = 'running' AND queue = :name) AS running,
       (SELECT count(*) FROM river_job WHERE state = 'scheduled' AND queue = :name)
           AS scheduled,
       (SELECT count(*) FROM river_job WHERE state = 'retryable' AND queue = :name)
           AS retryable,
       (SELECT count(*) FROM river_job WHERE state = 'pending' AND queue = :name) AS pending,
       (SELECT count(*) FROM river_job WHERE state = 'completed' AND queue = :name)
           AS completed,
       (SELECT count(*) FROM river_job WHERE state = 'cancelled' AND queue = :name)
           AS cancelled,
       (SELECT count(*) FROM river_job WHERE state = 'discarded' AND queue = :name)
           AS discarded,
       (julianday('now') - julianday((SELECT min(scheduled_at) FROM river_job
                WHERE state = 'available' AND queue = :name))) * 86400.0
           AS oldest_available_age,
       q.name IS NOT NULL AS registered
FROM (SELECT 1) one
LEFT JOIN river_queue q ON q.name = :name;

-- name: index_present
-- qctl's console index on river_job, when the file has it (tune.py names it).
SELECT name FROM sqlite_master WHERE type = 'index' AND name = :name;

-- name: index_create
-- qctl's console index on river_job (queue, id) (tune.py), a name River's migrations
-- never take (they name everything river_*).
CREATE INDEX IF NOT EXISTS qctl_river_job_queue_id ON river_job (queue, id);

-- name: notification_last_id
-- The newest notice of River's outbox (river_notification.sql NotificationGetLastID):
-- where a listener starts, so that it delivers only what is sent after it.
SELECT coalesce(max(id), 0) AS id FROM river_notification;

-- name: notifications_after
-- The notices on :topics past the last one seen, oldest first, a batch at a time
-- (river_notification.sql NotificationGetAfter, as River's listener polls it).
SELECT id, payload, topic
FROM river_notification
WHERE id > :after AND topic IN (SELECT value FROM json_each(:topics))
ORDER BY id
LIMIT :max;
