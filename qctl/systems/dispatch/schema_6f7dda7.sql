-- dispatch's PostgreSQL schema at github.com/xraph/dispatch commit
-- 6f7dda7f5e5403720dd658f7b437c1f768ba7648 (main, tag v1.5.3), as its grove migration
-- group "dispatch" (store/postgres/migrations.go) leaves it: versions 20240101120000 to
-- 20240101120006, the same seven as dispatch v0.1.0. Tables, columns, defaults,
-- constraints and index names and definitions are the facts reproduced; the statements
-- are qctl's. Its wake channel (store/postgres/wake.go: EnqueueJob sends
-- pg_notify('dispatch_jobs_wake', '')) is schema-less. grove_migrations and
-- grove_migration_locks are grove's version and lock tables (grove migrate/version.go),
-- one version row per applied version.

CREATE TABLE grove_migrations (
    id          BIGSERIAL PRIMARY KEY,
    version     VARCHAR(14) NOT NULL,
    name        VARCHAR(255) NOT NULL,
    "group"     VARCHAR(255) NOT NULL,
    migrated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    UNIQUE (version, "group")
);

CREATE TABLE grove_migration_locks (
    id        INT PRIMARY KEY DEFAULT 1,
    locked_at TIMESTAMPTZ,
    locked_by VARCHAR(255),
    CONSTRAINT single_lock CHECK (id = 1)
);

-- 20240101120000 create_jobs_table
CREATE TABLE dispatch_jobs (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    queue        TEXT NOT NULL DEFAULT 'default',
    payload      BYTEA NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending',
    priority     INTEGER NOT NULL DEFAULT 0,
    max_retries  INTEGER NOT NULL DEFAULT 3,
    retry_count  INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    scope_app_id TEXT,
    scope_org_id TEXT,
    worker_id    TEXT,
    run_at       TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    started_at   TIMESTAMPTZ,
    completed_at TIMESTAMPTZ,
    heartbeat_at TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_dispatch_jobs_dequeue ON dispatch_jobs (queue, priority DESC, run_at)
    WHERE state IN ('pending', 'retrying');
CREATE INDEX idx_dispatch_jobs_state ON dispatch_jobs (state);
CREATE INDEX idx_dispatch_jobs_scope ON dispatch_jobs (scope_app_id, scope_org_id);
CREATE INDEX idx_dispatch_jobs_heartbeat ON dispatch_jobs (heartbeat_at)
    WHERE state = 'running';

-- 20240101120001 create_workflows_tables
CREATE TABLE dispatch_workflow_runs (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'running',
    input        BYTEA,
    output       BYTEA,
    error        TEXT,
    scope_app_id TEXT,
    scope_org_id TEXT,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    completed_at TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE TABLE dispatch_checkpoints (
    id         TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL REFERENCES dispatch_workflow_runs (id) ON DELETE CASCADE,
    step_name  TEXT NOT NULL,
    data       BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    UNIQUE (run_id, step_name)
);
CREATE INDEX idx_dispatch_workflow_runs_state ON dispatch_workflow_runs (state);
CREATE INDEX idx_dispatch_checkpoints_run ON dispatch_checkpoints (run_id);

-- 20240101120002 create_cron_entries_table
CREATE TABLE dispatch_cron_entries (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    schedule     TEXT NOT NULL,
    job_name     TEXT NOT NULL,
    payload      BYTEA,
    scope_app_id TEXT,
    scope_org_id TEXT,
    last_run_at  TIMESTAMPTZ,
    next_run_at  TIMESTAMPTZ,
    locked_by    TEXT,
    locked_until TIMESTAMPTZ,
    enabled      BOOLEAN NOT NULL DEFAULT TRUE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_dispatch_cron_next ON dispatch_cron_entries (next_run_at)
    WHERE enabled = TRUE;

-- 20240101120003 create_dlq_table
CREATE TABLE dispatch_dlq (
    id           TEXT PRIMARY KEY,
    job_id       TEXT NOT NULL,
    job_name     TEXT NOT NULL,
    queue        TEXT NOT NULL,
    payload      BYTEA NOT NULL,
    error        TEXT NOT NULL,
    retry_count  INTEGER NOT NULL,
    scope_app_id TEXT,
    scope_org_id TEXT,
    failed_at    TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    replayed_at  TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_dispatch_dlq_queue ON dispatch_dlq (queue, failed_at DESC);

-- 20240101120004 create_events_table
CREATE TABLE dispatch_events (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    payload      BYTEA,
    scope_app_id TEXT,
    scope_org_id TEXT,
    acked        BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_dispatch_events_pending ON dispatch_events (name, created_at)
    WHERE acked = FALSE;

-- 20240101120005 create_workers_table
CREATE TABLE dispatch_workers (
    id           TEXT PRIMARY KEY,
    hostname     TEXT NOT NULL,
    queues       TEXT[] DEFAULT '{}',
    concurrency  INTEGER NOT NULL DEFAULT 10,
    state        TEXT NOT NULL DEFAULT 'active',
    is_leader    BOOLEAN NOT NULL DEFAULT FALSE,
    leader_until TIMESTAMPTZ,
    last_seen    TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    metadata     JSONB DEFAULT '{}',
    created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_dispatch_workers_state ON dispatch_workers (state);
CREATE INDEX idx_dispatch_workers_leader ON dispatch_workers (is_leader)
    WHERE is_leader = TRUE;
CREATE INDEX idx_dispatch_workers_stale ON dispatch_workers (last_seen)
    WHERE state = 'active';

-- 20240101120006 schema_additions
ALTER TABLE dispatch_jobs ADD COLUMN timeout BIGINT NOT NULL DEFAULT 0;
ALTER TABLE dispatch_cron_entries ADD COLUMN queue TEXT NOT NULL DEFAULT '';
ALTER TABLE dispatch_dlq ADD COLUMN max_retries INT NOT NULL DEFAULT 3;

INSERT INTO grove_migrations (version, name, "group") VALUES
    ('20240101120000', 'create_jobs_table', 'dispatch'),
    ('20240101120001', 'create_workflows_tables', 'dispatch'),
    ('20240101120002', 'create_cron_entries_table', 'dispatch'),
    ('20240101120003', 'create_dlq_table', 'dispatch'),
    ('20240101120004', 'create_events_table', 'dispatch'),
    ('20240101120005', 'create_workers_table', 'dispatch'),
    ('20240101120006', 'schema_additions', 'dispatch');
