-- qctl: azync schema version 3, workflow-as-code.
--
-- Execution headers, their append-only history, signal inbox and timers; the work
-- itself runs as azync_jobs rows with source 'workflow' linked through run_id.

CREATE TABLE azync_workflow_executions (
    id                       uuid        NOT NULL,
    name                     text        NOT NULL,
    version                  text        NOT NULL,
    state                    text        NOT NULL DEFAULT 'running',
    business_idempotency_key text,
    task_queue               text        NOT NULL DEFAULT 'default',
    input                    jsonb,
    result                   jsonb,
    failure_reason           text,
    meta                     jsonb       NOT NULL DEFAULT '{}',
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    completed_at             timestamptz,
    CONSTRAINT azync_workflow_executions_state_check
        CHECK (state IN ('running', 'suspended', 'succeeded', 'failed', 'cancelled')),
    CONSTRAINT azync_workflow_executions_pkey PRIMARY KEY (id)
);
-- A business key is unique among live executions only.
CREATE UNIQUE INDEX azync_workflow_executions_live_biz_idx
    ON azync_workflow_executions (name, business_idempotency_key)
    WHERE business_idempotency_key IS NOT NULL AND state IN ('running', 'suspended');
CREATE INDEX azync_workflow_executions_name_created_idx
    ON azync_workflow_executions (name, created_at);

CREATE TABLE azync_workflow_history (
    workflow_id uuid        NOT NULL,
    event_seq   bigint      NOT NULL,
    event_type  text        NOT NULL,
    payload     jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_workflow_history_pkey PRIMARY KEY (workflow_id, event_seq),
    CONSTRAINT azync_workflow_history_workflow_id_fkey FOREIGN KEY (workflow_id)
        REFERENCES azync_workflow_executions (id) ON DELETE CASCADE
);

CREATE TABLE azync_workflow_signals (
    id          uuid        NOT NULL,
    workflow_id uuid        NOT NULL,
    name        text        NOT NULL,
    message_id  text,
    payload     jsonb,
    consumed    boolean     NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_workflow_signals_pkey PRIMARY KEY (id),
    CONSTRAINT azync_workflow_signals_workflow_id_fkey FOREIGN KEY (workflow_id)
        REFERENCES azync_workflow_executions (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX azync_workflow_signals_dedupe_idx
    ON azync_workflow_signals (workflow_id, name, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX azync_workflow_signals_inbox_idx
    ON azync_workflow_signals (workflow_id, name, created_at) WHERE NOT consumed;

-- Kept for schema compatibility; no driver code reads or writes it.
CREATE TABLE azync_workflow_timers (
    id          uuid        NOT NULL,
    workflow_id uuid        NOT NULL,
    fire_at     timestamptz NOT NULL,
    fired       boolean     NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_workflow_timers_pkey PRIMARY KEY (id),
    CONSTRAINT azync_workflow_timers_workflow_id_fkey FOREIGN KEY (workflow_id)
        REFERENCES azync_workflow_executions (id) ON DELETE CASCADE
);
CREATE INDEX azync_workflow_timers_due_idx ON azync_workflow_timers (fire_at) WHERE NOT fired;

ALTER TABLE azync_jobs
    ADD COLUMN run_id uuid CONSTRAINT azync_jobs_run_id_fkey
        REFERENCES azync_workflow_executions (id) ON DELETE CASCADE;
ALTER TABLE azync_jobs
    DROP CONSTRAINT azync_jobs_source_check,
    ADD CONSTRAINT azync_jobs_source_check
        CHECK (source IN ('queue', 'event', 'dag', 'workflow'));
CREATE INDEX azync_jobs_run_idx ON azync_jobs (run_id) WHERE run_id IS NOT NULL;
