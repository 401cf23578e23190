-- The change log: SQLite's stand-in for PostgreSQL's azync_changes LISTEN/NOTIFY.
--
-- Triggers append one row per changed job, DAG header or ledger event, with the same
-- fields as azync's azync_changes payloads (entity, source, id, dag id, kind, task key,
-- state, time) and never payload, meta or result. A reader thread in every watching
-- process polls the log by position (seq) and turns rows into change hints and wakes;
-- coalescing more than 50 rows of one statement into a bulk hint happens in the reader
-- (SQLite triggers are per row).
--
-- at_us is the statement's clock: SQLite evaluates 'now' once per statement step
-- (millisecond resolution), so all rows written by one statement share it, and the
-- reader uses it as the statement marker for the bulk rule.
--
-- Same firing rules as azync's migration 00011: job inserts, job updates that change
-- the state (lease heartbeats stay silent), DAG inserts, DAG updates that change the
-- state or cancel_requested, and event inserts. No DELETE triggers: a refetch
-- reconciles removals.
--
-- Bounded: every 500th row trims everything older than the last 10000 rows, so the log
-- holds at most 10500 rows. A reader that falls further behind sees the gap (its next
-- row is not its position + 1) and announces it with a reset. AUTOINCREMENT keeps seq
-- strictly increasing and gap-free across trims and rolled-back transactions.

CREATE TABLE qctl_changes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    entity   TEXT NOT NULL CHECK (entity IN ('job', 'dag', 'event')),
    source   TEXT NULL,
    id       TEXT NOT NULL,
    dag_id   TEXT NULL,
    kind     TEXT NULL,
    task_key TEXT NULL,
    state    TEXT NULL,
    at_us    INTEGER NOT NULL
);

CREATE TRIGGER qctl_changes_trim
AFTER INSERT ON qctl_changes
WHEN new.seq % 500 = 0
BEGIN
    DELETE FROM qctl_changes WHERE seq <= new.seq - 10000;
END;

CREATE TRIGGER qctl_changes_jobs_ins
AFTER INSERT ON azync_jobs
BEGIN
    INSERT INTO qctl_changes (entity, source, id, dag_id, kind, task_key, state, at_us)
    VALUES ('job', new.source, new.id, new.dag_id, new.kind, new.task_key, new.state,
            CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000);
END;

CREATE TRIGGER qctl_changes_jobs_upd
AFTER UPDATE OF state ON azync_jobs
WHEN old.state IS NOT new.state
BEGIN
    INSERT INTO qctl_changes (entity, source, id, dag_id, kind, task_key, state, at_us)
    VALUES ('job', new.source, new.id, new.dag_id, new.kind, new.task_key, new.state,
            CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000);
END;

CREATE TRIGGER qctl_changes_dags_ins
AFTER INSERT ON azync_dags
BEGIN
    INSERT INTO qctl_changes (entity, id, kind, state, at_us)
    VALUES ('dag', new.id, new.name, new.state,
            CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000);
END;

CREATE TRIGGER qctl_changes_dags_upd
AFTER UPDATE OF state, cancel_requested ON azync_dags
WHEN old.state IS NOT new.state OR old.cancel_requested IS NOT new.cancel_requested
BEGIN
    INSERT INTO qctl_changes (entity, id, kind, state, at_us)
    VALUES ('dag', new.id, new.name, new.state,
            CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000);
END;

CREATE TRIGGER qctl_changes_events_ins
AFTER INSERT ON azync_events
BEGIN
    INSERT INTO qctl_changes (entity, id, kind, at_us)
    VALUES ('event', new.id, new.type,
            CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000);
END;
