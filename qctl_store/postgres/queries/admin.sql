-- Admin reads and actions over jobs (azync's driver/azyncpgx/store_admin.go),
-- plus the console's extensions (prefix lookup, keyset search, estimated counts).
-- {where} and {order} are filled from the fixed fragments of qctl_store/listing.py;
-- {table} from its fixed entity map.

-- name: list_kinds
-- The kinds of one source that have jobs or daily stats, sorted.
SELECT kind FROM (
    SELECT DISTINCT kind FROM azync_jobs WHERE source = %(source)s
    UNION
    SELECT DISTINCT kind FROM azync_stats_daily WHERE source = %(source)s
) k ORDER BY kind

-- name: depths
-- Per (source, kind, state) job counts matching {where}, with the oldest pending job's age.
-- Per source, kind and state, with the age of the oldest pending job on the backend clock.
-- {where} is the sources' membership (several sources in one round trip) or, for one
-- kind's stats, the source and kind equality.
SELECT source, kind, state, COUNT(*) AS n,
       CASE WHEN state = 'pending'
            THEN EXTRACT(EPOCH FROM (now() - MIN(run_at))) END AS pending_age
FROM azync_jobs WHERE {where}
GROUP BY source, kind, state

-- name: live_depths
-- The live states' per-kind counts of one source on their partial indexes, with estimates.
-- The console's refresh read, in one round trip, never visiting the millions of
-- succeeded rows. The kinds come from loose index scans (one descent per kind) of the
-- pending, scheduled, dead and succeeded indexes, and from the daily stats. Each kind's
-- pending, scheduled and dead jobs are counted on their partial index no further than
-- %(cap)s (a backlog of any size reads a bounded part of each index: the caller takes
-- the statistics' estimate for a count at the cap), with the oldest pending run_at as
-- one descent of the pending index; active jobs are few, grouped by kind; paused jobs
-- on the console's index, where {where} is TRUE (the index exists: with FALSE the
-- planner drops the branch, so no scan of the table is planned). Columns as in depths,
-- plus estimate: after the counts, a row per kind found and per state of pending,
-- scheduled, succeeded, dead, paused and uncertain with the planner's row estimate and
-- no count, computed from pg_stats the way the planner estimates an equality on each of
-- source, kind and state (the most-common-value frequency, else the rest spread evenly
-- over the other distinct values), multiplied as independent: what EXPLAIN of each
-- pair would say, without planning a statement per pair (none before the first ANALYZE).
WITH RECURSIVE pending_k(kind) AS (
    (SELECT kind FROM azync_jobs WHERE source = %(source)s AND state = 'pending'
     ORDER BY kind LIMIT 1)
    UNION ALL
    SELECT (SELECT j.kind FROM azync_jobs j
            WHERE j.source = %(source)s AND j.state = 'pending' AND j.kind > k.kind
            ORDER BY j.kind LIMIT 1)
    FROM pending_k k WHERE k.kind IS NOT NULL
), scheduled_k(kind) AS (
    (SELECT kind FROM azync_jobs WHERE source = %(source)s AND state = 'scheduled'
     ORDER BY kind LIMIT 1)
    UNION ALL
    SELECT (SELECT j.kind FROM azync_jobs j
            WHERE j.source = %(source)s AND j.state = 'scheduled' AND j.kind > k.kind
            ORDER BY j.kind LIMIT 1)
    FROM scheduled_k k WHERE k.kind IS NOT NULL
), dead_k(kind) AS (
    (SELECT kind FROM azync_jobs WHERE source = %(source)s AND state = 'dead'
     ORDER BY kind LIMIT 1)
    UNION ALL
    SELECT (SELECT j.kind FROM azync_jobs j
            WHERE j.source = %(source)s AND j.state = 'dead' AND j.kind > k.kind
            ORDER BY j.kind LIMIT 1)
    FROM dead_k k WHERE k.kind IS NOT NULL
), succeeded_k(kind) AS (
    (SELECT kind FROM azync_jobs WHERE source = %(source)s AND state = 'succeeded'
     ORDER BY kind LIMIT 1)
    UNION ALL
    SELECT (SELECT j.kind FROM azync_jobs j
            WHERE j.source = %(source)s AND j.state = 'succeeded' AND j.kind > k.kind
            ORDER BY j.kind LIMIT 1)
    FROM succeeded_k k WHERE k.kind IS NOT NULL
), kinds AS (
    SELECT kind FROM pending_k WHERE kind IS NOT NULL
    UNION SELECT kind FROM scheduled_k WHERE kind IS NOT NULL
    UNION SELECT kind FROM dead_k WHERE kind IS NOT NULL
    UNION SELECT kind FROM succeeded_k WHERE kind IS NOT NULL
    UNION SELECT DISTINCT kind FROM azync_stats_daily WHERE source = %(source)s
), capped AS (
    SELECT k.kind,
           (SELECT COUNT(*) FROM (SELECT 1 FROM azync_jobs
            WHERE source = %(source)s AND state = 'pending' AND kind = k.kind
            LIMIT %(cap)s) j) AS pending,
           (SELECT MIN(run_at) FROM azync_jobs
            WHERE source = %(source)s AND state = 'pending' AND kind = k.kind) AS oldest,
           (SELECT COUNT(*) FROM (SELECT 1 FROM azync_jobs
            WHERE source = %(source)s AND state = 'scheduled' AND kind = k.kind
            LIMIT %(cap)s) j) AS scheduled,
           (SELECT COUNT(*) FROM (SELECT 1 FROM azync_jobs
            WHERE source = %(source)s AND state = 'dead' AND kind = k.kind
            LIMIT %(cap)s) j) AS dead
    FROM kinds k
), live AS (
SELECT kind, 'pending' AS state, pending AS n,
       EXTRACT(EPOCH FROM (now() - oldest)) AS pending_age
FROM capped
UNION ALL
SELECT kind, 'scheduled', scheduled, NULL FROM capped
UNION ALL
SELECT kind, 'dead', dead, NULL FROM capped
UNION ALL
SELECT kind, 'active', COUNT(*), NULL
FROM azync_jobs WHERE source = %(source)s AND state = 'active' GROUP BY kind
UNION ALL
SELECT kind, 'paused', COUNT(*), NULL
FROM azync_jobs WHERE source = %(source)s AND state = 'paused' AND {where} GROUP BY kind
), rel AS (
    SELECT c.relnamespace, GREATEST(c.reltuples, 0)::float8 AS n
    FROM pg_class c WHERE c.oid = to_regclass('azync_jobs')
), s AS (
    SELECT st.attname, st.null_frac::float8 AS null_frac,
           st.most_common_vals::text::text[] AS vals, st.most_common_freqs::float8[] AS freqs,
           CASE WHEN st.n_distinct < 0 THEN -st.n_distinct * rel.n ELSE st.n_distinct END AS distinct_n
    FROM pg_stats st JOIN pg_namespace n ON n.nspname = st.schemaname
    JOIN rel ON rel.relnamespace = n.oid
    WHERE st.tablename = 'azync_jobs' AND st.attname IN ('source', 'kind', 'state')
), sel AS (
    SELECT s.attname, v.value,
           COALESCE(s.freqs[array_position(s.vals, v.value)],
                    GREATEST(1 - s.null_frac
                             - COALESCE((SELECT SUM(f) FROM unnest(s.freqs) AS f), 0), 0)
                    / GREATEST(s.distinct_n - COALESCE(cardinality(s.vals), 0), 1)) AS p
    FROM s CROSS JOIN LATERAL unnest(CASE s.attname
                                         WHEN 'source' THEN ARRAY[%(source)s::text]
                                         WHEN 'state' THEN ARRAY['pending', 'scheduled', 'succeeded',
                                                                 'dead', 'paused', 'uncertain']
                                         ELSE ARRAY(SELECT DISTINCT kind FROM live) END) AS v(value)
)
SELECT kind, state, n, pending_age, NULL::bigint AS estimate FROM live
UNION ALL
SELECT k.value, st.value, NULL, NULL, round(rel.n * src.p * k.p * st.p)::bigint
FROM rel, sel src, sel k, sel st
WHERE src.attname = 'source' AND k.attname = 'kind' AND st.attname = 'state'

-- name: dag_live_depths
-- Blocked and waiting DAG tasks of one source per kind, each state on its partial index.
SELECT kind, 'blocked' AS state, COUNT(*) AS n, NULL AS pending_age
FROM azync_jobs WHERE source = %(source)s AND state = 'blocked' GROUP BY kind
UNION ALL
SELECT kind, 'waiting', COUNT(*), NULL
FROM azync_jobs WHERE source = %(source)s AND state = 'waiting' GROUP BY kind

-- name: succeeded_depths
-- Exact succeeded counts of the kinds whose estimate is small, on the succeeded index.
SELECT kind, 'succeeded' AS state, COUNT(*) AS n, NULL AS pending_age
FROM azync_jobs
WHERE source = %(source)s AND state = 'succeeded' AND kind = ANY(%(kinds)s)
GROUP BY kind

-- name: daily
-- The daily throughput window of one source (one kind or all), zero-filled, oldest day first.
-- The daily window, zero-filled, oldest first, summed over the stats slots and, with
-- no kind in {where}, over kinds.
SELECT w.day::date AS day,
       COALESCE(SUM(s.enqueued), 0) AS enqueued, COALESCE(SUM(s.processed), 0) AS processed,
       COALESCE(SUM(s.failed), 0) AS failed, COALESCE(SUM(s.reaped), 0) AS reaped
FROM generate_series((CURRENT_DATE - %(days)s::int + 1)::timestamp,
                     CURRENT_DATE::timestamp, interval '1 day') AS w(day)
LEFT JOIN azync_stats_daily s ON s.day = w.day::date AND {where}
GROUP BY w.day ORDER BY w.day

-- name: count_jobs
-- How many jobs match {where}.
SELECT COUNT(*) AS n FROM azync_jobs WHERE {where}

-- name: estimate_jobs
-- The planner's row estimate of the jobs matching {where}, without counting them.
EXPLAIN (FORMAT JSON) SELECT 1 FROM azync_jobs WHERE {where}

-- name: list_jobs
-- A page of the jobs matching {where}, in {order}: {columns} (payload and result or NULLs).
SELECT {columns} FROM azync_jobs WHERE {where}
ORDER BY {order}
LIMIT %(limit)s OFFSET %(offset)s

-- name: across_kinds
-- A page of one state across kinds, merged from each kind's range of the state's index.
-- For the states whose partial index leads with (source, kind) and then holds the page
-- order: the kinds come from a loose index scan (one descent per kind), each kind's
-- first rows from its own index range (a LATERAL top-N that reads only the order
-- columns and the id, index-only where the visibility map allows), and the page is the
-- merge of those, its rows then fetched by primary key ({columns}). {where} (source,
-- state, filters and the keyset) applies inside each kind.
WITH RECURSIVE k(kind) AS (
    (SELECT kind FROM azync_jobs WHERE source = %(source)s AND state = %(state)s
     ORDER BY kind LIMIT 1)
    UNION ALL
    SELECT (SELECT j.kind FROM azync_jobs j
            WHERE j.source = %(source)s AND j.state = %(state)s AND j.kind > k.kind
            ORDER BY j.kind LIMIT 1)
    FROM k WHERE k.kind IS NOT NULL
)
SELECT {columns} FROM azync_jobs WHERE id IN (
    SELECT p.id FROM k CROSS JOIN LATERAL (
        SELECT {jobs} FROM azync_jobs
        WHERE {where} AND azync_jobs.kind = k.kind
        ORDER BY {order} LIMIT %(limit)s
    ) p
    ORDER BY {order}
    LIMIT %(limit)s
)
ORDER BY {order}

-- name: count_capped
-- How many jobs match, counting no further than %(cap)s.
SELECT COUNT(*) AS n FROM (SELECT 1 FROM azync_jobs WHERE {where} LIMIT %(cap)s) AS j

-- name: get_job
-- One job by id within one source.
SELECT {jobs} FROM azync_jobs WHERE id = %(id)s AND source = %(source)s

-- name: find_job
-- One job by id, whatever its source.
SELECT {jobs} FROM azync_jobs WHERE id = %(id)s

-- Set-based forms of the single-job actions above, one statement per batch of ids that
-- a bulk verb runs: the same columns set, the source and state re-checked in the WHERE
-- on the row the UPDATE locks (a job a worker leased since the plan is 'active' then,
-- and left alone), the ids changed returned. The change-hint triggers fire per
-- statement, as for the single-job forms (over 50 rows: one bulk hint per source).

-- name: retry_jobs
-- Dead jobs of the given ids and sources back to pending now, as retry_job.
UPDATE azync_jobs SET
    state = 'pending', run_at = now(), attempt = 0, reap_count = 0,
    last_error = NULL, failed_at = NULL, deadline_at = NULL, started_at = NULL,
    updated_at = now()
WHERE id = ANY(%(ids)s) AND source = ANY(%(sources)s) AND state = 'dead'
RETURNING id, source, kind

-- name: run_now_jobs
-- Scheduled jobs of the given ids and sources made due now, as run_now.
-- Never a DAG's $sleep timer: only a scheduled timer completes, a pending one would
-- strand its DAG.
UPDATE azync_jobs SET state = 'pending', run_at = now(), updated_at = now()
WHERE id = ANY(%(ids)s) AND source = ANY(%(sources)s) AND state = 'scheduled'
  AND NOT (source = 'dag' AND kind = '$sleep')
RETURNING id, source, kind

-- name: pause_jobs
-- Pending or scheduled jobs of the given ids and sources paused, as pause_job.
UPDATE azync_jobs SET state = 'paused', updated_at = now()
WHERE id = ANY(%(ids)s) AND source = ANY(%(sources)s) AND state IN ('pending', 'scheduled')
RETURNING id, source, kind

-- name: resume_jobs
-- Paused jobs of the given ids and sources resumed, as resume_job.
UPDATE azync_jobs SET
    state = CASE WHEN run_at <= now() THEN 'pending' ELSE 'scheduled' END,
    updated_at = now()
WHERE id = ANY(%(ids)s) AND source = ANY(%(sources)s) AND state = 'paused'
RETURNING id, source, kind

-- name: archive_jobs
-- Pending or scheduled jobs of the given ids and sources moved to dead, as archive_job.
UPDATE azync_jobs SET state = 'dead', lease_until = NULL, updated_at = now()
WHERE id = ANY(%(ids)s) AND source = ANY(%(sources)s) AND state IN ('pending', 'scheduled')
RETURNING id, source, kind

-- name: delete_jobs
-- Jobs of the given ids and sources deleted while in one of the given states.
-- As delete_job, the rows locked as picked (SKIP LOCKED, as delete_all): a job a worker
-- is leasing is passed over, one leased since the statement's snapshot fails the state
-- check on its locked version, so the delete never takes a job from under its worker
-- and never waits on another session.
DELETE FROM azync_jobs j USING (
    SELECT id FROM azync_jobs
    WHERE id = ANY(%(ids)s) AND source = ANY(%(sources)s) AND state = ANY(%(states)s)
    FOR UPDATE SKIP LOCKED
) picked
WHERE j.id = picked.id
RETURNING j.id, j.source, j.kind

-- name: job_targets
-- A keyset page of the jobs {where} matches, in id order after the previous page's.
-- Its states are inlined in {where}; ids and the columns a bulk verb checks, nothing
-- decoded.
SELECT id, source, state, kind FROM azync_jobs
WHERE {where}
ORDER BY id
LIMIT %(limit)s

-- name: job_targets_of
-- job_targets' columns of the given ids that exist.
SELECT id, source, state, kind FROM azync_jobs WHERE id = ANY(%(ids)s)

-- name: find_ids_by_prefix
-- Up to limit ids of {table} that start with a uuid prefix, in id order.
-- A range on the uuid primary key, so the lookup is an index range scan.
SELECT id FROM {table} WHERE id BETWEEN %(lo)s::uuid AND %(hi)s::uuid
ORDER BY id LIMIT %(limit)s

-- name: job_attempts
-- The recorded failed attempts of one job of one source, oldest first.
SELECT a.attempt, a.error, a.failed_at
FROM azync_job_attempts a JOIN azync_jobs j ON j.id = a.job_id
WHERE a.job_id = %(id)s AND j.source = %(source)s
ORDER BY a.attempt, a.id

-- name: retry_job
-- A dead job back to pending now, its attempt count and failure fields reset.
UPDATE azync_jobs SET
    state = 'pending', run_at = now(), attempt = 0, reap_count = 0,
    last_error = NULL, failed_at = NULL, deadline_at = NULL, started_at = NULL,
    updated_at = now()
WHERE id = %(id)s AND source = %(source)s AND state = 'dead'

-- name: retry_all_dead
-- One batch of the dead jobs matching {where} back to pending, attempts reset.
-- One batch in the dead index's order (kind, enqueued_at, then id), resuming after the
-- previous batch's last key (the %(after_*)s, NULL for the first): a LIMIT from the
-- index's start would walk again over the entries of every row already revived, which
-- stay in the index until a vacuum and cannot be skipped while an older snapshot is
-- open, so each batch would read more than the last. A job that dies behind the key
-- during the walk is left for the next call. The columns set are azync's RetryAllDead's.
-- The UPDATE checks the state again on the row it locks: a job another retry revived
-- (and a worker may have leased since) after this statement's snapshot is passed over,
-- never reset under its holder. Returns how many rows the batch picked (the caller
-- repeats it until that comes back short), how many it revived, and its last key.
WITH picked AS (
    SELECT id, kind, enqueued_at FROM azync_jobs
    WHERE {where} AND state = 'dead'
      AND (kind, enqueued_at, id) > (COALESCE(%(after_kind)s, ''),
                                     COALESCE(%(after_enqueued_at)s, '-infinity'::timestamptz),
                                     COALESCE(%(after_id)s, '00000000-0000-0000-0000-000000000000'::uuid))
    ORDER BY kind, enqueued_at, id
    LIMIT %(batch)s
), batch AS (
    UPDATE azync_jobs j SET
        state = 'pending', run_at = now(), attempt = 0, reap_count = 0,
        last_error = NULL, failed_at = NULL, deadline_at = NULL, started_at = NULL,
        updated_at = now()
    FROM picked
    WHERE j.id = picked.id AND j.state = 'dead'
    RETURNING j.id
)
SELECT COUNT(*) OVER () AS picked, (SELECT COUNT(*) FROM batch) AS n, kind, enqueued_at, id
FROM picked
ORDER BY kind DESC, enqueued_at DESC, id DESC LIMIT 1

-- name: run_now
-- A scheduled job made due now (pending).
UPDATE azync_jobs SET state = 'pending', run_at = now(), updated_at = now()
WHERE id = %(id)s AND source = %(source)s AND state = 'scheduled'
RETURNING kind

-- name: archive_job
-- A pending or scheduled job moved to dead without running it.
UPDATE azync_jobs SET state = 'dead', lease_until = NULL, updated_at = now()
WHERE id = %(id)s AND source = %(source)s AND state IN ('pending', 'scheduled')

-- name: pause_job
-- A pending or scheduled job paused.
UPDATE azync_jobs SET state = 'paused', updated_at = now()
WHERE id = %(id)s AND source = %(source)s AND state IN ('pending', 'scheduled')

-- name: resume_job
-- A paused job back to pending, or to scheduled while its run_at is in the future.
UPDATE azync_jobs SET
    state = CASE WHEN run_at <= now() THEN 'pending' ELSE 'scheduled' END,
    updated_at = now()
WHERE id = %(id)s AND source = %(source)s AND state = 'paused'

-- name: delete_job
-- One job of one source deleted, only while it is in the given state.
DELETE FROM azync_jobs WHERE id = %(id)s AND source = %(source)s AND state = %(state)s

-- name: delete_all
-- One batch of the jobs matching {where} in one state deleted.
-- One batch; the caller repeats it until a batch comes back short. The rows are locked
-- as picked (SKIP LOCKED, as promote_due): a job a worker is leasing is passed over, and
-- one leased since the statement's snapshot fails the state check on its locked version,
-- so the delete never takes a job from under its worker.
DELETE FROM azync_jobs j USING (
    SELECT id FROM azync_jobs WHERE {where} AND state = %(state)s
    FOR UPDATE SKIP LOCKED
    LIMIT %(batch)s
) picked
WHERE j.id = picked.id
