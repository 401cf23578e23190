-- qctl: azync schema version 2, declared DAG workflows.
--
-- A DAG is a header row plus its tasks (azync_jobs rows with source 'dag') and the
-- dependency edges between task keys.

CREATE TABLE azync_dags (
    id               uuid        NOT NULL,
    name             text        NOT NULL,
    state            text        NOT NULL DEFAULT 'running',
    on_failure       text        NOT NULL,
    idempotency_key  text,
    failure_reason   text,
    -- Set by a cancel, so a compensation that settles later ends the DAG cancelled.
    cancel_requested boolean     NOT NULL DEFAULT false,
    meta             jsonb       NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    CONSTRAINT azync_dags_state_check CHECK (state IN (
        'running', 'suspended', 'compensating', 'succeeded', 'failed', 'cancelled')),
    CONSTRAINT azync_dags_on_failure_check CHECK (on_failure IN ('cancel', 'suspend')),
    CONSTRAINT azync_dags_pkey PRIMARY KEY (id)
);
CREATE INDEX azync_dags_live_created_idx ON azync_dags (created_at)
    WHERE state IN ('running', 'suspended', 'compensating');
CREATE INDEX azync_dags_name_created_idx ON azync_dags (name, created_at);
-- A key dedupes only against live runs; a finished run frees it.
CREATE UNIQUE INDEX azync_dags_idempotency_idx ON azync_dags (name, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state IN ('running', 'suspended', 'compensating');
CREATE INDEX azync_dags_terminal_completed_idx ON azync_dags (completed_at)
    WHERE state IN ('succeeded', 'failed', 'cancelled');

-- task_key waits for depends_on_key (static edges and the compensation chain).
CREATE TABLE azync_dag_deps (
    dag_id         uuid NOT NULL,
    task_key       text NOT NULL,
    depends_on_key text NOT NULL,
    CONSTRAINT azync_dag_deps_pkey PRIMARY KEY (dag_id, task_key, depends_on_key),
    CONSTRAINT azync_dag_deps_dag_id_fkey FOREIGN KEY (dag_id)
        REFERENCES azync_dags (id) ON DELETE CASCADE
);

-- Task columns on the job table: nullable or defaulted, so existing rows are untouched.
ALTER TABLE azync_jobs
    ADD COLUMN dag_id uuid
        CONSTRAINT azync_jobs_dag_id_fkey REFERENCES azync_dags (id) ON DELETE CASCADE,
    ADD COLUMN task_key text,
    ADD COLUMN result jsonb,
    ADD COLUMN compensation_kind text,
    ADD COLUMN compensation_payload jsonb,
    ADD COLUMN signal_name text,
    ADD COLUMN ignore_dead_deps boolean NOT NULL DEFAULT false;

-- Widen the source and state domains for DAG tasks.
ALTER TABLE azync_jobs
    DROP CONSTRAINT azync_jobs_source_check,
    ADD CONSTRAINT azync_jobs_source_check CHECK (source IN ('queue', 'event', 'dag'));
ALTER TABLE azync_jobs
    DROP CONSTRAINT azync_jobs_state_check,
    ADD CONSTRAINT azync_jobs_state_check CHECK (state IN (
        'pending', 'scheduled', 'active', 'dead', 'paused', 'succeeded',
        'blocked', 'waiting', 'cancelled'));

-- One task per key and DAG; compensations use 'comp:<key>'.
CREATE UNIQUE INDEX azync_jobs_dag_task_idx ON azync_jobs (dag_id, task_key)
    WHERE dag_id IS NOT NULL;
CREATE INDEX azync_jobs_dag_blocked_idx ON azync_jobs (dag_id) WHERE state = 'blocked';
CREATE INDEX azync_jobs_dag_waiting_idx ON azync_jobs (dag_id, signal_name)
    WHERE state = 'waiting';
