-- Queue producer, lease and settlement statements (PostgreSQL).
-- Tokens ({jobs}, {schema}, ...) follow the convention of qctl_store/sqlfile.py.
--
-- Statements fenced on a lease find their row by primary key: they compare
-- state COLLATE "C" (byte equality, as the default collation's for text), which
-- azync_jobs_active_idx's predicate cannot imply. Otherwise, once a vacuum has seen
-- no job leased, that index reads as empty, the planner scans it for the id, and
-- every ack walks one dead entry per job settled since the last vacuum.

-- name: enqueue
-- Enqueue and enqueue_many: a batch of jobs in one statement.
-- input ({input}: enqueue_input_document, or enqueue_input_one for a batch that sends
-- one job) is the batch as rows, one column per job field.
-- Tables are written {schema}.-qualified (PgBase.qualified) because the statement
-- also runs on a caller's connection (enqueue_tx), under the caller's search_path.
-- claim ({claim}: enqueue_claim or enqueue_no_claim below): the TTL dedupe window, for
-- jobs with a key and a TTL; the caller passes at most one of them per (kind, key), since
-- a later one in the batch always finds the earlier claim unexpired. ins: run_at and
-- pending/scheduled resolve on the backend clock; the ON CONFLICT predicate matches
-- azync_jobs_idempotency_idx (live-key dedupe), and rows go in input order, so a later
-- duplicate within the batch is the one skipped. bump/wake: one stats upsert and one
-- NOTIFY per inserted kind. It returns the input's ids that were not inserted, usually
-- none: returning the inserted ones sent back (and decoded) a row per job, a tenth of a
-- 500-job batch's time.
WITH input AS (
    {input}
), claim AS (
    {claim}
), ins AS (
    INSERT INTO {schema}.azync_jobs
        (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, payload, meta,
         idempotency_key, enqueued_at)
    SELECT i.id, 'queue', i.kind,
           CASE WHEN t.run_at > now() THEN 'scheduled' ELSE 'pending' END,
           t.run_at, i.max_attempts, i.explicit, i.payload, i.meta, i.key, now()
    FROM input i
    CROSS JOIN LATERAL (SELECT COALESCE(i.run_at, now() + make_interval(secs => i.delay))
                        AS run_at) t
    WHERE i.key IS NULL OR i.ttl <= 0
       OR EXISTS (SELECT 1 FROM claim c WHERE c.kind = i.kind AND c.key = i.key)
    ORDER BY i.ord
    ON CONFLICT (source, kind, idempotency_key)
        WHERE idempotency_key IS NOT NULL AND state <> ALL (ARRAY['dead'::text, 'succeeded'::text])
    DO NOTHING
    RETURNING id, kind
), bump AS (
    INSERT INTO {schema}.azync_stats_daily AS sd (source, kind, day, slot, enqueued)
    SELECT 'queue', c.kind, CURRENT_DATE, %(slot)s, c.n
    FROM (SELECT kind, count(*) AS n FROM ins GROUP BY kind) c
    CROSS JOIN LATERAL pg_notify(%(channel)s, 'queue:' || c.kind) AS wake
    ON CONFLICT (source, kind, day, slot) DO UPDATE SET enqueued = sd.enqueued + EXCLUDED.enqueued
)
SELECT i.id FROM input i WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = i.id)

-- name: enqueue_input_document
-- Q.enqueue's input for a batch that sends several jobs: one jsonb document of columns.
-- The document ({"id": [...], "kind": [...], ...}, each array in input order) is zipped
-- back into rows by ROWS FROM. One text parameter, not an array per column: psycopg
-- dumps a list element by element in Python, which took two thirds of a 500-job batch's
-- client time. Columns, not an object per job: a 500-job document is then half the size,
-- half the encoding in Python, and read faster here (1.4 against 2.1 ms for
-- json_to_recordset of the objects; bench/whatif_roundtrips.py sizes what is left).
-- Payload and meta are JSON values inside the document, not text encoded twice; the
-- _text elements of JSON null (no key, no run_at) are SQL NULL.
SELECT c.id::uuid AS id, c.kind, c.payload, c.meta, c.run_at::timestamptz AS run_at,
       c.delay::float8 AS delay, c.max_attempts::int AS max_attempts,
       c.explicit::bool AS explicit, c.key, c.ttl::float8 AS ttl, c.ord
FROM (SELECT %(jobs)s::jsonb AS d) doc, ROWS FROM (
    jsonb_array_elements_text(doc.d -> 'id'), jsonb_array_elements_text(doc.d -> 'kind'),
    jsonb_array_elements(doc.d -> 'payload'), jsonb_array_elements(doc.d -> 'meta'),
    jsonb_array_elements_text(doc.d -> 'run_at'), jsonb_array_elements_text(doc.d -> 'delay'),
    jsonb_array_elements_text(doc.d -> 'max_attempts'),
    jsonb_array_elements_text(doc.d -> 'explicit'), jsonb_array_elements_text(doc.d -> 'key'),
    jsonb_array_elements_text(doc.d -> 'ttl')
) WITH ORDINALITY
  AS c (id, kind, payload, meta, run_at, delay, max_attempts, explicit, key, ttl, ord)

-- name: enqueue_input_one
-- Q.enqueue's input for a batch that sends one job (enqueue): a row of scalar parameters.
-- A one-job document cost a single enqueue about 45 us (its encoding, its parse and ten
-- set-returning functions: 320 against 276 us a call on a bare connection with commits
-- not flushed), nearly what the insert itself takes; payload and meta come as JSON text.
SELECT %(id)s::uuid AS id, %(kind)s::text AS kind, %(payload)s::jsonb AS payload,
       %(meta)s::jsonb AS meta, %(run_at)s::timestamptz AS run_at, %(delay)s::float8 AS delay,
       %(max_attempts)s::int AS max_attempts, %(explicit)s::bool AS explicit,
       %(key)s::text AS key, %(ttl)s::float8 AS ttl, 1 AS ord

-- name: enqueue_claim
-- Q.enqueue's claim of the TTL dedupe windows, for a batch with a job that has a key and a TTL.
INSERT INTO {schema}.azync_idempotency_keys AS k (source, kind, key, expires_at)
SELECT 'queue', kind, key, now() + make_interval(secs => ttl) FROM input
WHERE key IS NOT NULL AND ttl > 0
ON CONFLICT (source, kind, key) DO UPDATE SET expires_at = EXCLUDED.expires_at
WHERE k.expires_at < now()
RETURNING kind, key

-- name: enqueue_no_claim
-- Q.enqueue's claim for a batch without a job that has a key and a TTL: no row.
-- Not the insert with no row to insert: its node would still open the key table and its
-- index, about 19 of a single enqueue's 320 us of statement time (with commits not
-- flushed, on a bare connection).
SELECT NULL::text AS kind, NULL::text AS key WHERE false

-- name: dequeue
-- Up to limit due jobs of one (source, kind) leased, oldest first, skipping locked rows.
-- The first lease pins the retry budget (max_attempts_explicit = true). The ledger
-- join rehydrates an event delivery's event in the same claim; other sources have no
-- event_id, so their ev_ columns come back NULL. The limit is written into the text
-- ({limit}, a validated int), not bound: with LIMIT a parameter PostgreSQL costs the
-- prepared statement's generic plan without knowing how few rows it stops at, finds it
-- dearer than a custom plan on a table of many pending jobs, and so plans every lease
-- anew (0.3 ms of server time a lease); with the literal it keeps the generic plan.
UPDATE azync_jobs j SET
    state = 'active',
    lease_until = now() + make_interval(secs => %(lease)s),
    lease_token = gen_random_uuid(),
    max_attempts = CASE WHEN j.max_attempts_explicit OR NOT %(override)s
                        THEN j.max_attempts ELSE %(default_max)s END,
    max_attempts_explicit = true,
    attempt = j.attempt + 1,
    started_at = now(),
    updated_at = now()
FROM (
    SELECT id, event_id FROM azync_jobs
    WHERE source = %(source)s AND kind = %(kind)s AND state = 'pending' AND run_at <= now()
    ORDER BY run_at, id
    FOR UPDATE SKIP LOCKED
    LIMIT {limit}
) picked
LEFT JOIN azync_events e ON e.id = picked.event_id
WHERE j.id = picked.id
RETURNING {jobs_j}, {event_e}

-- name: finish
-- A leased job settled as succeeded or skipped, fenced on its lease token.
-- Ack (error NULL keeps last_error) and Skip (the reason goes in last_error): terminal,
-- counted as processed, no attempt row. Fused: the stats bump only runs for a row the
-- fenced update produced.
WITH upd AS (
    UPDATE azync_jobs SET
        state = %(state)s, lease_until = NULL, lease_token = NULL,
        last_error = COALESCE(%(error)s, last_error), completed_at = now(), updated_at = now()
    WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(token)s
    RETURNING source, kind
), bump AS (
    INSERT INTO azync_stats_daily (source, kind, day, slot, processed)
    SELECT source, kind, CURRENT_DATE, %(slot)s, 1 FROM upd
    ON CONFLICT (source, kind, day, slot)
    DO UPDATE SET processed = azync_stats_daily.processed + 1
)
SELECT source, kind FROM upd

-- name: fail
-- A leased job rescheduled or dead-lettered with an attempt row, fenced on its lease token.
-- Reschedule (scheduled, run_at = now() + delay) and Dead (delay NULL keeps run_at):
-- an attempt row and a failed bump, fused so a fencing miss writes nothing.
WITH upd AS (
    UPDATE azync_jobs SET
        state = %(state)s,
        run_at = COALESCE(now() + make_interval(secs => %(delay)s::float8), run_at),
        lease_until = NULL, lease_token = NULL,
        last_error = %(error)s, failed_at = now(), updated_at = now()
    WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(token)s
    RETURNING id, source, kind, attempt
), attempt_row AS (
    INSERT INTO azync_job_attempts (job_id, attempt, error)
    SELECT id, attempt, %(error)s FROM upd
), bump AS (
    INSERT INTO azync_stats_daily (source, kind, day, slot, failed)
    SELECT source, kind, CURRENT_DATE, %(slot)s, 1 FROM upd
    ON CONFLICT (source, kind, day, slot)
    DO UPDATE SET failed = azync_stats_daily.failed + 1
)
SELECT source, kind FROM upd

-- name: ack_many
-- A batch of leased jobs acknowledged, each fenced on its own lease token.
-- The processed bump is fused per (source, kind); only settled jobs come back. The id
-- and token arrays go in binary (%b): psycopg's text dump of a list of uuids took 6.8 us
-- a job in Python, the binary one 2.0.
WITH upd AS (
    UPDATE azync_jobs j SET
        state = 'succeeded', lease_until = NULL, lease_token = NULL,
        completed_at = now(), updated_at = now()
    FROM unnest(%(ids)b::uuid[], %(tokens)b::uuid[]) AS p (id, token)
    WHERE j.id = p.id AND j.state COLLATE "C" = 'active' AND j.lease_token = p.token
    RETURNING j.id, j.source, j.kind
), bump AS (
    INSERT INTO azync_stats_daily AS sd (source, kind, day, slot, processed)
    SELECT source, kind, CURRENT_DATE, %(slot)s, count(*) FROM upd GROUP BY source, kind
    ON CONFLICT (source, kind, day, slot)
    DO UPDATE SET processed = sd.processed + EXCLUDED.processed
)
SELECT id FROM upd

-- name: release
-- A leased job handed back to pending without spending the attempt.
UPDATE azync_jobs SET
    state = 'pending', attempt = GREATEST(attempt - 1, 0),
    lease_until = NULL, lease_token = NULL, run_at = now(), updated_at = now()
WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(token)s

-- name: snooze
-- A leased job put back to scheduled without spending the attempt, or dead past its deadline.
-- SET clauses read the pre-update row, so the snooze that stamps deadline_at
-- never escalates; past a stamped deadline the job dead-letters (fused).
WITH upd AS (
    UPDATE azync_jobs SET
        state = CASE WHEN deadline_at IS NOT NULL AND now() >= deadline_at
                     THEN 'dead' ELSE 'scheduled' END,
        run_at = CASE WHEN deadline_at IS NOT NULL AND now() >= deadline_at
                      THEN run_at ELSE now() + make_interval(secs => %(delay)s) END,
        attempt = CASE WHEN deadline_at IS NOT NULL AND now() >= deadline_at
                       THEN attempt ELSE GREATEST(attempt - 1, 0) END,
        last_error = CASE WHEN deadline_at IS NOT NULL AND now() >= deadline_at
                          THEN %(error)s ELSE last_error END,
        failed_at = CASE WHEN deadline_at IS NOT NULL AND now() >= deadline_at
                         THEN now() ELSE failed_at END,
        deadline_at = COALESCE(deadline_at, now() + make_interval(secs => snooze_budget)),
        lease_until = NULL, lease_token = NULL, updated_at = now()
    WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(token)s
    RETURNING id, source, kind, attempt, state = 'dead' AS deadlined
), attempt_row AS (
    INSERT INTO azync_job_attempts (job_id, attempt, error)
    SELECT id, attempt, %(error)s FROM upd WHERE deadlined
), bump AS (
    INSERT INTO azync_stats_daily (source, kind, day, slot, failed)
    SELECT source, kind, CURRENT_DATE, %(slot)s, 1 FROM upd WHERE deadlined
    ON CONFLICT (source, kind, day, slot)
    DO UPDATE SET failed = azync_stats_daily.failed + 1
)
SELECT deadlined FROM upd

-- name: extend_lease
-- A leased job's lease pushed out, fenced on its lease token.
UPDATE azync_jobs SET lease_until = now() + make_interval(secs => %(lease)s), updated_at = now()
WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(token)s
