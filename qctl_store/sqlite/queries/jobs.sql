-- Queue jobs: enqueue, lease and the fenced settlements (SQLite). Instants are µs
-- integers bound from the transaction clock (:now); durations are µs integers.

-- name: claim_idempotency_key
-- The TTL window: claim the key, or take it over once expired; no row = deduplicated.
INSERT INTO azync_idempotency_keys (source, kind, key, expires_at)
VALUES ('queue', :kind, :key, :expires_at)
ON CONFLICT (source, kind, key) DO UPDATE SET expires_at = excluded.expires_at
WHERE azync_idempotency_keys.expires_at < :now
RETURNING kind

-- name: insert_job
-- One queue job inserted unless a live job holds its idempotency key.
-- Run with executemany over a batch, rows in input order. The live key: a non-terminal
-- job holding the same key, an earlier one of the batch included, deduplicates (the
-- row is skipped; present_jobs tells which keyed rows went in).
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, payload, meta,
     idempotency_key, enqueued_at, created_at, updated_at)
VALUES (:id, 'queue', :kind, CASE WHEN :run_at > :now THEN 'scheduled' ELSE 'pending' END,
        :run_at, :max_attempts, :explicit, :payload, :meta, :key, :now, :now, :now)
ON CONFLICT (source, kind, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state NOT IN ('dead', 'succeeded')
DO NOTHING

-- name: present_jobs
-- Which of the given ids (a JSON array) exist as jobs.
-- Which of the ids (a JSON array) exist: after insert_job, the keyed ones it inserted
-- (an id already taken fails the insert on the primary key instead of being skipped).
SELECT id FROM azync_jobs WHERE id IN (SELECT value FROM json_each(:ids))

-- name: pick_due
-- The ids of up to limit due pending jobs of one (source, kind), oldest first.
SELECT id FROM azync_jobs
WHERE source = :source AND kind = :kind AND state = 'pending' AND run_at <= :now
ORDER BY run_at, id
LIMIT :limit

-- name: lease_job
-- One picked job leased with a fresh token, its attempt counted.
-- The first lease pins the attempt budget (max_attempts_explicit = 1 afterwards).
UPDATE azync_jobs SET
    state = 'active',
    lease_until = :now + :lease,
    lease_token = :token,
    max_attempts = CASE WHEN max_attempts_explicit OR NOT :override THEN max_attempts
                        ELSE :default_max END,
    max_attempts_explicit = 1,
    attempt = attempt + 1,
    started_at = :now,
    updated_at = :now
WHERE id = :id

-- name: leased_jobs
-- The given jobs (a JSON array of ids) with their events' ledger columns, in claim order.
SELECT {jobs_j}, {event_e}
FROM azync_jobs j LEFT JOIN azync_events e ON e.id = j.event_id
WHERE j.id IN (SELECT value FROM json_each(:ids))
ORDER BY j.run_at, j.id

-- Settlements: each fenced on (id, state 'active', lease token) and RETURNING the daily
-- counter it moves (:counter, NULL for none), so jobs.py bumps exactly what the
-- transition did, and records an attempt row for every 'failed'.

-- name: ack
-- A leased job settled as succeeded, fenced on its lease token.
UPDATE azync_jobs SET
    state = 'succeeded', lease_until = NULL, lease_token = NULL,
    completed_at = :now, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING id, source, kind, attempt, last_error, 'processed' AS counter

-- name: ack_many
-- Ack of a batch of [id, token] pairs (a JSON array), each fenced on its own token.
UPDATE azync_jobs SET
    state = 'succeeded', lease_until = NULL, lease_token = NULL,
    completed_at = :now, updated_at = :now
WHERE (id, lease_token) IN (SELECT value ->> 0, value ->> 1 FROM json_each(:pairs))
  AND state = 'active'
RETURNING id, source, kind

-- name: fail
-- Reschedule (:delay µs later, scheduled) and Dead (:delay NULL keeps run_at).
UPDATE azync_jobs SET
    state = :state, run_at = COALESCE(:now + :delay, run_at),
    lease_until = NULL, lease_token = NULL,
    last_error = :error, failed_at = :now, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING id, source, kind, attempt, last_error, 'failed' AS counter

-- name: skip
-- A leased job settled as skipped with the reason as its last error, fenced on its lease token.
UPDATE azync_jobs SET
    state = 'skipped', lease_until = NULL, lease_token = NULL,
    last_error = :error, completed_at = :now, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING id, source, kind, attempt, last_error, 'processed' AS counter

-- name: release
-- A held lease given up.
UPDATE azync_jobs SET
    state = 'pending', attempt = max(attempt - 1, 0),
    lease_until = NULL, lease_token = NULL, run_at = :now, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING id, source, kind, attempt, last_error, NULL AS counter

-- name: snooze
-- A leased job put back to scheduled without spending the attempt, or dead past its deadline.
-- Past its deadline the job dead-letters (a failure); otherwise it waits without
-- spending the attempt. SET expressions read the old row, so the snooze that stamps
-- the deadline (from the budget) never escalates.
UPDATE azync_jobs SET
    state = CASE WHEN deadline_at IS NOT NULL AND :now >= deadline_at
                 THEN 'dead' ELSE 'scheduled' END,
    run_at = CASE WHEN deadline_at IS NOT NULL AND :now >= deadline_at
                  THEN run_at ELSE :now + :delay END,
    attempt = CASE WHEN deadline_at IS NOT NULL AND :now >= deadline_at
                   THEN attempt ELSE max(attempt - 1, 0) END,
    last_error = CASE WHEN deadline_at IS NOT NULL AND :now >= deadline_at
                      THEN :error ELSE last_error END,
    failed_at = CASE WHEN deadline_at IS NOT NULL AND :now >= deadline_at
                     THEN :now ELSE failed_at END,
    deadline_at = COALESCE(deadline_at, CASE WHEN snooze_budget IS NOT NULL
                  THEN :now + CAST(round(snooze_budget * 1000000) AS INTEGER) END),
    lease_until = NULL, lease_token = NULL, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING id, source, kind, attempt, last_error,
          CASE WHEN state = 'dead' THEN 'failed' END AS counter

-- name: extend_lease
-- A leased job's lease pushed out, fenced on its lease token.
UPDATE azync_jobs SET lease_until = :now + :lease, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING id, source, kind, attempt, last_error, NULL AS counter

-- name: insert_attempt
-- One failed attempt of a job recorded.
INSERT INTO azync_job_attempts (job_id, attempt, error, failed_at)
VALUES (:id, :attempt, :error, :now)
