-- qctl's writes to a River database on SQLite, each with the effect of the River v0.51.2
-- query named above it (riverdriver/riversqlite/internal/dbsqlc/*.sql), for a batch of
-- ids at once (a JSON array: SQLite has no arrays), in one BEGIN IMMEDIATE transaction:
-- SQLite has one writer, so nothing changes a row between a statement's predicate and
-- its write. Instants are written as riversqlite writes them (UTC text with
-- milliseconds, its timeString and datetime('now', 'subsec')). A statement of a verb that
-- notifies River returns each row's notice (its payload) beside its id: actions.py adds
-- them to River's outbox (notify) in the same transaction.

-- name: notify
-- River's notifications on SQLite (river_notification.sql NotificationInsertMany: one
-- row per payload, the topic as River's client names it), which each River client's
-- listener polls for ids past the last it saw (river_sqlite_listener.go). created_at is
-- written here: its default, datetime('now', 'subsec'), needs SQLite 3.42.
INSERT INTO river_notification (created_at, payload, topic)
SELECT strftime('%Y-%m-%d %H:%M:%f', 'now'), value, :topic
FROM json_each(:payloads);

-- name: cancel_jobs
-- Cancel a batch of jobs (river_job.sql JobCancel): a job not yet finalized that is not
-- running is finalized cancelled at once; a running one keeps its state (its client's
-- producer cancels its work on the control notice, River's completer then finalizes it).
-- Every one gets metadata.cancel_attempted_at (Go's time.Time JSON, UTC, as riversqlite
-- passes it), which tells the rescuer not to rescue the job and the completer to cancel,
-- not retry, a running job that then fails or snoozes (JobSetStateIfRunning); metadata
-- that is text and not JSON is left in place, as River's newer queries leave it. Each
-- job's notice is JobCancel's (NotificationInsertJobCancel).
UPDATE river_job
SET state = CASE WHEN state = 'running' THEN state ELSE 'cancelled' END,
    finalized_at = CASE WHEN state = 'running' THEN finalized_at
                        ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END,
    metadata = CASE WHEN typeof(metadata) = 'text' AND NOT json_valid(metadata) THEN metadata
                    ELSE jsonb_set(metadata, '$.cancel_attempted_at',
                                   strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) END
WHERE id IN (SELECT value FROM json_each(:ids))
  AND state NOT IN ('cancelled', 'completed', 'discarded')
  AND finalized_at IS NULL
RETURNING cast(id AS text) AS id,
          json_object('action', 'cancel', 'job_id', id, 'queue', queue) AS notice;

-- name: retry_jobs_held
-- The jobs of a retry batch whose unique key another job holds: riversqlite's JobRetry
-- fails on river_job_unique_idx (006_bulk_unique.up.sql: a unique key is held by a job
-- whose state's bit, available bit 0 to scheduled bit 7, is set in its unique_states)
-- when the retried job, once available, would hold it too; here such a job is left as it
-- is and counted as held, as is the second of two jobs of the batch with one key.
SELECT cast(l.id AS text) AS id
FROM river_job l
WHERE l.id IN (SELECT value FROM json_each(:ids))
  AND l.unique_key IS NOT NULL AND l.unique_states IS NOT NULL
  AND l.unique_states & 1
  AND (
      EXISTS (
          SELECT 1 FROM river_job o
          WHERE o.unique_key = l.unique_key AND o.id <> l.id AND o.unique_states IS NOT NULL
            AND o.unique_states & (1 << CASE o.state
                WHEN 'available' THEN 0 WHEN 'cancelled' THEN 1 WHEN 'completed' THEN 2
                WHEN 'discarded' THEN 3 WHEN 'pending' THEN 4 WHEN 'retryable' THEN 5
                WHEN 'running' THEN 6 WHEN 'scheduled' THEN 7 END)
      )
      OR EXISTS (
          SELECT 1 FROM river_job e
          WHERE e.id IN (SELECT value FROM json_each(:ids))
            AND e.unique_key = l.unique_key AND e.id < l.id
      )
  );

-- name: retry_jobs
-- Make a batch of jobs available now (river_job.sql JobRetry): attempt kept,
-- max_attempts raised by one when the job spent them all, finalized_at cleared, a cancel
-- asked of an earlier attempt forgotten (jsonb_remove of cancel_attempted_at; metadata
-- that is text and not JSON left in place). Never a running job; an available or pending
-- one is passed over by qctl's predicate, and the held ones (retry_jobs_held).
UPDATE river_job
SET state = 'available',
    max_attempts = CASE WHEN attempt = max_attempts THEN max_attempts + 1 ELSE max_attempts END,
    finalized_at = NULL,
    metadata = CASE WHEN typeof(metadata) = 'text' AND NOT json_valid(metadata) THEN metadata
                    ELSE jsonb_remove(metadata, '$.cancel_attempted_at') END,
    scheduled_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
WHERE id IN (SELECT value FROM json_each(:ids))
  AND id NOT IN (SELECT value FROM json_each(:held))
  AND state IN ('scheduled', 'retryable', 'cancelled', 'completed', 'discarded')
RETURNING cast(id AS text) AS id;

-- name: delete_jobs
-- Delete a batch of jobs (river_job.sql JobDeleteMany and JobDelete): never a running
-- job.
DELETE FROM river_job
WHERE id IN (SELECT value FROM json_each(:ids)) AND state <> 'running'
RETURNING cast(id AS text) AS id;

-- name: job_targets_page
-- A page of the jobs a bulk verb's filter matches, ids and states only, newest first
-- after a cursor (reads_sqlite.sql list_jobs without the columns a verb does not check).
SELECT cast(id AS text) AS id, state, kind
FROM river_job
WHERE state IN (SELECT value FROM json_each(:states))
  AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
  AND (:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)))
  AND (:priorities IS NULL OR priority IN (SELECT value FROM json_each(:priorities)))
  AND (:tags IS NULL OR NOT EXISTS (
      SELECT 1 FROM json_each(:tags) wanted
      WHERE wanted.value NOT IN (SELECT value FROM json_each(json(river_job.tags)))
  ))
  AND {contains_sqlite}
  AND (:after IS NULL OR id < :after)
ORDER BY river_job.id DESC
LIMIT :limit;

-- name: job_targets
-- The current state of the given jobs that exist.
SELECT cast(id AS text) AS id, state, kind
FROM river_job
WHERE id IN (SELECT value FROM json_each(:ids));

-- name: pause_queues
-- Pause a batch of queues (river_queue.sql QueuePause; then client.go
-- notifyQueuePauseOrResume's notice {"action":"pause","queue":...}): each producer of
-- the queue stops fetching (producer.go handleControlNotification); its running jobs
-- finish. A queue already paused keeps its paused_at.
UPDATE river_queue
SET paused_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
WHERE name IN (SELECT value FROM json_each(:names)) AND paused_at IS NULL
RETURNING name AS id, json_object('action', 'pause', 'queue', name) AS notice;

-- name: resume_queues
-- Resume a batch of paused queues (river_queue.sql QueueResume; then the notice
-- {"action":"resume","queue":...}): their producers fetch again.
UPDATE river_queue
SET paused_at = NULL, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
WHERE name IN (SELECT value FROM json_each(:names)) AND paused_at IS NOT NULL
RETURNING name AS id, json_object('action', 'resume', 'queue', name) AS notice;

-- name: queue_targets_page
-- A page of the queues a bulk verb's filter matches (river_queue rows), by name after a
-- cursor; :match as QueueNameList's: a part of the name, any case (taken literally).
SELECT name AS id, CASE WHEN paused_at IS NULL THEN 'active' ELSE 'paused' END AS state,
       '' AS kind
FROM river_queue
WHERE CASE WHEN paused_at IS NULL THEN 'active' ELSE 'paused' END
        IN (SELECT value FROM json_each(:states))
  AND (:match IS NULL OR instr(lower(name), lower(:match)) > 0)
  AND (:after IS NULL OR name > :after)
ORDER BY name
LIMIT :limit;

-- name: queue_targets
-- The given queues that have a river_queue row, each active or paused.
SELECT name AS id, CASE WHEN paused_at IS NULL THEN 'active' ELSE 'paused' END AS state,
       '' AS kind
FROM river_queue
WHERE name IN (SELECT value FROM json_each(:names));

-- name: count_cleanable
-- What a vacuum would delete, per final state: the jobs River's JobCleaner deletes
-- (river_job.sql JobDeleteBefore), finalized in :states before :before.
SELECT state, count(*) AS n
FROM river_job
WHERE state IN (SELECT value FROM json_each(:states))
  AND finalized_at IS NOT NULL
  AND finalized_at < :before
GROUP BY 1;

-- name: clean_jobs
-- Delete a batch of the jobs River's JobCleaner deletes (river_job.sql JobDeleteBefore:
-- finalized before their horizon, lowest ids first, at most a batch per statement).
DELETE FROM river_job
WHERE id IN (
    SELECT id FROM river_job
    WHERE state IN (SELECT value FROM json_each(:states))
      AND finalized_at IS NOT NULL
      AND finalized_at < :before
    ORDER BY id
    LIMIT :batch
);
