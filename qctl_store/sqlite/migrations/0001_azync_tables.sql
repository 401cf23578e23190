-- The SQLite form of azync's final PostgreSQL schema (azyncpgx migrations 1-11), plus qctl's
-- leader-lease table. Same table, column, constraint and index names as PostgreSQL; types
-- follow the embedded conventions: instants are INTEGER microseconds since the Unix epoch
-- (UTC), ids are canonical lower-case uuid TEXT, JSON is TEXT, booleans are INTEGER 0/1,
-- snooze_budget is REAL seconds and the stats day is the UTC date as 'YYYY-MM-DD' text.
-- Columns PostgreSQL defaults to now() have no default here: every insert sets them from
-- the transaction clock so that all instants of one transaction agree.

CREATE TABLE azync_events (
    id             TEXT PRIMARY KEY,
    type           TEXT NOT NULL,
    aggregate_type TEXT NOT NULL DEFAULT '',
    aggregate_id   TEXT NOT NULL DEFAULT '',
    version        INTEGER NOT NULL DEFAULT 0,
    occurred_at    INTEGER NOT NULL,
    payload        TEXT NOT NULL,
    meta           TEXT NOT NULL DEFAULT '{}',
    created_at     INTEGER NOT NULL
);
CREATE INDEX azync_events_type_occurred_idx ON azync_events (type, occurred_at, id);
CREATE INDEX azync_events_occurred_idx ON azync_events (occurred_at, id);

CREATE TABLE azync_subscribers (
    name         TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    max_attempts INTEGER NOT NULL CHECK (max_attempts > 0),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (name, event_type)
);

CREATE TABLE azync_dags (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    state            TEXT NOT NULL DEFAULT 'running'
        CONSTRAINT azync_dags_state_check CHECK (state IN (
            'running', 'suspended', 'compensating', 'paused',
            'succeeded', 'failed', 'cancelled')),
    on_failure       TEXT NOT NULL
        CONSTRAINT azync_dags_on_failure_check CHECK (on_failure IN ('cancel', 'suspend')),
    idempotency_key  TEXT NULL,
    failure_reason   TEXT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    meta             TEXT NOT NULL DEFAULT '{}',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    completed_at     INTEGER NULL
);
CREATE INDEX azync_dags_name_created_idx ON azync_dags (name, created_at);
CREATE INDEX azync_dags_terminal_completed_idx ON azync_dags (completed_at)
    WHERE state IN ('succeeded', 'failed', 'cancelled');
CREATE UNIQUE INDEX azync_dags_idempotency_live_idx ON azync_dags (name, idempotency_key)
    WHERE idempotency_key IS NOT NULL
      AND state IN ('running', 'suspended', 'compensating', 'paused');
CREATE INDEX azync_dags_live_state_created_idx ON azync_dags (created_at)
    WHERE state IN ('running', 'suspended', 'compensating', 'paused');
CREATE INDEX azync_dags_name_state_idx ON azync_dags (name, state);

CREATE TABLE azync_dag_deps (
    dag_id         TEXT NOT NULL REFERENCES azync_dags (id) ON DELETE CASCADE,
    task_key       TEXT NOT NULL,
    depends_on_key TEXT NOT NULL,
    PRIMARY KEY (dag_id, task_key, depends_on_key)
);

CREATE TABLE azync_dag_signals (
    id         TEXT PRIMARY KEY,
    dag_id     TEXT NOT NULL REFERENCES azync_dags (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    message_id TEXT NULL,
    payload    TEXT NULL,
    consumed   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX azync_dag_signals_dedupe_idx ON azync_dag_signals (dag_id, name, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX azync_dag_signals_inbox_idx ON azync_dag_signals (dag_id, name, created_at)
    WHERE NOT consumed;

CREATE TABLE azync_workflow_executions (
    id                       TEXT PRIMARY KEY,
    name                     TEXT NOT NULL,
    version                  TEXT NOT NULL,
    state                    TEXT NOT NULL DEFAULT 'running'
        CONSTRAINT azync_workflow_executions_state_check CHECK (state IN (
            'running', 'suspended', 'succeeded', 'failed', 'cancelled')),
    business_idempotency_key TEXT NULL,
    task_queue               TEXT NOT NULL DEFAULT 'default',
    input                    TEXT NULL,
    result                   TEXT NULL,
    failure_reason           TEXT NULL,
    meta                     TEXT NOT NULL DEFAULT '{}',
    created_at               INTEGER NOT NULL,
    updated_at               INTEGER NOT NULL,
    completed_at             INTEGER NULL
);
CREATE UNIQUE INDEX azync_workflow_executions_live_biz_idx
    ON azync_workflow_executions (name, business_idempotency_key)
    WHERE business_idempotency_key IS NOT NULL AND state IN ('running', 'suspended');
CREATE INDEX azync_workflow_executions_name_created_idx
    ON azync_workflow_executions (name, created_at);

CREATE TABLE azync_workflow_history (
    workflow_id TEXT NOT NULL REFERENCES azync_workflow_executions (id) ON DELETE CASCADE,
    event_seq   INTEGER NOT NULL,
    event_type  TEXT NOT NULL,
    payload     TEXT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (workflow_id, event_seq)
);
CREATE UNIQUE INDEX azync_workflow_history_exec_key_idx
    ON azync_workflow_history (workflow_id, event_type, json_extract(payload, '$.execution_key'))
    WHERE json_extract(payload, '$.execution_key') IS NOT NULL
      AND event_type IN ('OperationCompleted', 'OperationFailed');

CREATE TABLE azync_workflow_signals (
    id          TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL REFERENCES azync_workflow_executions (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    message_id  TEXT NULL,
    payload     TEXT NULL,
    consumed    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX azync_workflow_signals_dedupe_idx
    ON azync_workflow_signals (workflow_id, name, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX azync_workflow_signals_inbox_idx
    ON azync_workflow_signals (workflow_id, name, created_at)
    WHERE NOT consumed;

-- Created by azync but unused by its driver; kept for schema parity.
CREATE TABLE azync_workflow_timers (
    id          TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL REFERENCES azync_workflow_executions (id) ON DELETE CASCADE,
    fire_at     INTEGER NOT NULL,
    fired       INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);
CREATE INDEX azync_workflow_timers_due_idx ON azync_workflow_timers (fire_at) WHERE NOT fired;

CREATE TABLE azync_jobs (
    id                    TEXT PRIMARY KEY,
    source                TEXT NOT NULL
        CONSTRAINT azync_jobs_source_check CHECK (source IN ('queue', 'event', 'dag', 'workflow')),
    kind                  TEXT NOT NULL,
    state                 TEXT NOT NULL
        CONSTRAINT azync_jobs_state_check CHECK (state IN (
            'pending', 'scheduled', 'active', 'dead', 'paused', 'succeeded',
            'blocked', 'waiting', 'cancelled', 'uncertain', 'skipped')),
    run_at                INTEGER NOT NULL,
    lease_until           INTEGER NULL,
    lease_token           TEXT NULL,
    attempt               INTEGER NOT NULL DEFAULT 0,
    max_attempts          INTEGER NOT NULL,
    max_attempts_explicit INTEGER NOT NULL DEFAULT 0,
    reap_count            INTEGER NOT NULL DEFAULT 0,
    payload               TEXT NULL,
    meta                  TEXT NOT NULL DEFAULT '{}',
    idempotency_key       TEXT NULL,
    event_id              TEXT NULL REFERENCES azync_events (id) ON DELETE CASCADE,
    replay                INTEGER NOT NULL DEFAULT 0,
    last_error            TEXT NULL,
    enqueued_at           INTEGER NOT NULL,
    failed_at             INTEGER NULL,
    completed_at          INTEGER NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    dag_id                TEXT NULL REFERENCES azync_dags (id) ON DELETE CASCADE,
    task_key              TEXT NULL,
    result                TEXT NULL,
    compensation_kind     TEXT NULL,
    compensation_payload  TEXT NULL,
    signal_name           TEXT NULL,
    ignore_dead_deps      INTEGER NOT NULL DEFAULT 0,
    run_id                TEXT NULL REFERENCES azync_workflow_executions (id) ON DELETE CASCADE,
    snooze_budget         REAL NULL,
    deadline_at           INTEGER NULL,
    started_at            INTEGER NULL,
    CONSTRAINT azync_jobs_payload_check CHECK (source <> 'queue' OR payload IS NOT NULL),
    CONSTRAINT azync_jobs_event_id_check CHECK ((source = 'event') = (event_id IS NOT NULL))
);
CREATE INDEX azync_jobs_pending_idx ON azync_jobs (source, kind, run_at, id)
    WHERE state = 'pending';
CREATE INDEX azync_jobs_scheduled_idx ON azync_jobs (source, kind, run_at, id)
    WHERE state = 'scheduled';
CREATE INDEX azync_jobs_active_idx ON azync_jobs (source, kind, lease_until, id)
    WHERE state = 'active';
CREATE INDEX azync_jobs_dead_idx ON azync_jobs (source, kind, enqueued_at)
    WHERE state = 'dead';
CREATE INDEX azync_jobs_succeeded_idx ON azync_jobs (source, kind, completed_at)
    WHERE state = 'succeeded';
CREATE UNIQUE INDEX azync_jobs_idempotency_idx ON azync_jobs (source, kind, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state NOT IN ('dead', 'succeeded');
CREATE INDEX azync_jobs_event_idx ON azync_jobs (event_id) WHERE event_id IS NOT NULL;
CREATE UNIQUE INDEX azync_jobs_dag_task_idx ON azync_jobs (dag_id, task_key)
    WHERE dag_id IS NOT NULL;
CREATE INDEX azync_jobs_dag_blocked_idx ON azync_jobs (dag_id) WHERE state = 'blocked';
CREATE INDEX azync_jobs_dag_waiting_idx ON azync_jobs (dag_id, signal_name)
    WHERE state = 'waiting';
CREATE INDEX azync_jobs_run_idx ON azync_jobs (run_id) WHERE run_id IS NOT NULL;
CREATE UNIQUE INDEX azync_jobs_workflow_exec_key_idx
    ON azync_jobs (json_extract(meta, '$.execution_key'))
    WHERE source = 'workflow'
      AND json_extract(meta, '$.execution_key') IS NOT NULL
      AND state IN ('pending', 'scheduled', 'active', 'uncertain');
CREATE INDEX azync_jobs_succeeded_vacuum_idx ON azync_jobs (source, completed_at)
    WHERE state = 'succeeded' AND dag_id IS NULL AND run_id IS NULL;

CREATE TABLE azync_job_attempts (
    id        INTEGER PRIMARY KEY,
    job_id    TEXT NOT NULL REFERENCES azync_jobs (id) ON DELETE CASCADE,
    attempt   INTEGER NOT NULL,
    error     TEXT NOT NULL,
    failed_at INTEGER NOT NULL
);
CREATE INDEX azync_job_attempts_job_idx ON azync_job_attempts (job_id, attempt);

CREATE TABLE azync_idempotency_keys (
    source     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (source, kind, key)
);
CREATE INDEX azync_idempotency_expires_idx ON azync_idempotency_keys (expires_at);

CREATE TABLE azync_stats_daily (
    source    TEXT NOT NULL,
    kind      TEXT NOT NULL,
    day       TEXT NOT NULL,
    slot      INTEGER NOT NULL DEFAULT 0,
    enqueued  INTEGER NOT NULL DEFAULT 0,
    processed INTEGER NOT NULL DEFAULT 0,
    failed    INTEGER NOT NULL DEFAULT 0,
    reaped    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source, kind, day, slot)
);

-- qctl's leader election (SQLite has no advisory locks): one lease row per name.
CREATE TABLE qctl_leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
