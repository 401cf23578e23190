-- qctl: azync schema version 11, change hints on the 'azync_changes' channel.
--
-- Statement-level AFTER triggers announce job and DAG inserts and state changes, and
-- event appends, so consoles can refetch instead of polling. Rules the wire format
-- depends on:
--   * The channel is fixed and shared by every schema; each payload names its schema
--     (TG_TABLE_SCHEMA) and listeners filter on it.
--   * Payloads carry only schema, entity, source, id, dagId, kind, taskKey, state,
--     atMs, bulk and count: never payload, result or meta (they may hold PII).
--   * More than 50 qualifying rows in one statement collapse into one
--     {bulk: true, count: N} hint (per source for jobs), sparing the shared NOTIFY
--     queue during batch maintenance.
--   * Updates only count rows whose state changed (and, for DAGs, cancel_requested),
--     so lease heartbeats emit nothing.
--   * atMs is the transaction's now() in epoch milliseconds, independent of TimeZone.
-- No DELETE triggers: removals are picked up by the next refetch. Re-runnable
-- (CREATE OR REPLACE FUNCTION; DROP TRIGGER IF EXISTS, then CREATE TRIGGER, which
-- works on PostgreSQL 13).

CREATE OR REPLACE FUNCTION azync_changes_jobs_ins_fn() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    n      bigint;
    now_ms bigint := round(extract(epoch FROM now()) * 1000)::bigint;
BEGIN
    SELECT count(*) INTO n FROM new_rows;
    IF n > 50 THEN
        PERFORM pg_notify('azync_changes', jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'job', 'source', g.source,
                    'bulk', true, 'count', g.hits, 'atMs', now_ms)::text)
        FROM (SELECT source, count(*) AS hits FROM new_rows GROUP BY source) AS g;
    ELSIF n > 0 THEN
        PERFORM pg_notify('azync_changes', jsonb_strip_nulls(jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'job', 'source', j.source,
                    'id', j.id, 'dagId', j.dag_id, 'kind', j.kind,
                    'taskKey', j.task_key, 'state', j.state, 'atMs', now_ms))::text)
        FROM new_rows AS j;
    END IF;
    RETURN NULL;
END
$fn$;

DROP TRIGGER IF EXISTS azync_changes_jobs_ins ON azync_jobs;
CREATE TRIGGER azync_changes_jobs_ins
    AFTER INSERT ON azync_jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_jobs_ins_fn();

CREATE OR REPLACE FUNCTION azync_changes_jobs_upd_fn() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    n      bigint;
    now_ms bigint := round(extract(epoch FROM now()) * 1000)::bigint;
BEGIN
    SELECT count(*) INTO n
    FROM new_rows AS j JOIN old_rows AS o ON o.id = j.id
    WHERE o.state IS DISTINCT FROM j.state;
    IF n > 50 THEN
        PERFORM pg_notify('azync_changes', jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'job', 'source', g.source,
                    'bulk', true, 'count', g.hits, 'atMs', now_ms)::text)
        FROM (SELECT j.source, count(*) AS hits
              FROM new_rows AS j JOIN old_rows AS o ON o.id = j.id
              WHERE o.state IS DISTINCT FROM j.state
              GROUP BY j.source) AS g;
    ELSIF n > 0 THEN
        PERFORM pg_notify('azync_changes', jsonb_strip_nulls(jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'job', 'source', j.source,
                    'id', j.id, 'dagId', j.dag_id, 'kind', j.kind,
                    'taskKey', j.task_key, 'state', j.state, 'atMs', now_ms))::text)
        FROM new_rows AS j JOIN old_rows AS o ON o.id = j.id
        WHERE o.state IS DISTINCT FROM j.state;
    END IF;
    RETURN NULL;
END
$fn$;

DROP TRIGGER IF EXISTS azync_changes_jobs_upd ON azync_jobs;
CREATE TRIGGER azync_changes_jobs_upd
    AFTER UPDATE ON azync_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_jobs_upd_fn();

CREATE OR REPLACE FUNCTION azync_changes_dags_ins_fn() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    n      bigint;
    now_ms bigint := round(extract(epoch FROM now()) * 1000)::bigint;
BEGIN
    SELECT count(*) INTO n FROM new_rows;
    IF n > 50 THEN
        PERFORM pg_notify('azync_changes', jsonb_build_object(
            'schema', TG_TABLE_SCHEMA, 'entity', 'dag',
            'bulk', true, 'count', n, 'atMs', now_ms)::text);
    ELSIF n > 0 THEN
        PERFORM pg_notify('azync_changes', jsonb_strip_nulls(jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'dag', 'id', d.id,
                    'kind', d.name, 'state', d.state, 'atMs', now_ms))::text)
        FROM new_rows AS d;
    END IF;
    RETURN NULL;
END
$fn$;

DROP TRIGGER IF EXISTS azync_changes_dags_ins ON azync_dags;
CREATE TRIGGER azync_changes_dags_ins
    AFTER INSERT ON azync_dags
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_dags_ins_fn();

-- A cancel of a DAG that is already compensating changes no state, but an operator
-- watching the run needs to see the request, hence cancel_requested in the filter.
CREATE OR REPLACE FUNCTION azync_changes_dags_upd_fn() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    n      bigint;
    now_ms bigint := round(extract(epoch FROM now()) * 1000)::bigint;
BEGIN
    SELECT count(*) INTO n
    FROM new_rows AS d JOIN old_rows AS o ON o.id = d.id
    WHERE o.state IS DISTINCT FROM d.state
       OR o.cancel_requested IS DISTINCT FROM d.cancel_requested;
    IF n > 50 THEN
        PERFORM pg_notify('azync_changes', jsonb_build_object(
            'schema', TG_TABLE_SCHEMA, 'entity', 'dag',
            'bulk', true, 'count', n, 'atMs', now_ms)::text);
    ELSIF n > 0 THEN
        PERFORM pg_notify('azync_changes', jsonb_strip_nulls(jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'dag', 'id', d.id,
                    'kind', d.name, 'state', d.state, 'atMs', now_ms))::text)
        FROM new_rows AS d JOIN old_rows AS o ON o.id = d.id
        WHERE o.state IS DISTINCT FROM d.state
           OR o.cancel_requested IS DISTINCT FROM d.cancel_requested;
    END IF;
    RETURN NULL;
END
$fn$;

DROP TRIGGER IF EXISTS azync_changes_dags_upd ON azync_dags;
CREATE TRIGGER azync_changes_dags_upd
    AFTER UPDATE ON azync_dags
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_dags_upd_fn();

-- The ledger is append-only (apart from retention deletes), so inserts are all.
CREATE OR REPLACE FUNCTION azync_changes_events_ins_fn() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    n      bigint;
    now_ms bigint := round(extract(epoch FROM now()) * 1000)::bigint;
BEGIN
    SELECT count(*) INTO n FROM new_rows;
    IF n > 50 THEN
        PERFORM pg_notify('azync_changes', jsonb_build_object(
            'schema', TG_TABLE_SCHEMA, 'entity', 'event',
            'bulk', true, 'count', n, 'atMs', now_ms)::text);
    ELSIF n > 0 THEN
        PERFORM pg_notify('azync_changes', jsonb_strip_nulls(jsonb_build_object(
                    'schema', TG_TABLE_SCHEMA, 'entity', 'event', 'id', e.id,
                    'kind', e.type, 'atMs', now_ms))::text)
        FROM new_rows AS e;
    END IF;
    RETURN NULL;
END
$fn$;

DROP TRIGGER IF EXISTS azync_changes_events_ins ON azync_events;
CREATE TRIGGER azync_changes_events_ins
    AFTER INSERT ON azync_events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_events_ins_fn();
