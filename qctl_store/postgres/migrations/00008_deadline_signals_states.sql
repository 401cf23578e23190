-- qctl: azync schema version 8, snooze deadlines, the DAG signal inbox, the 'skipped'
-- job state and the 'paused' DAG state. Re-runnable.

-- The snooze budget (seconds) declared per task, and the deadline the first snooze
-- stamps from it. Nullable without default: a catalog-only change on a hot table.
ALTER TABLE azync_jobs ADD COLUMN IF NOT EXISTS snooze_budget double precision;
ALTER TABLE azync_jobs ADD COLUMN IF NOT EXISTS deadline_at timestamptz;

-- Signals that arrive before their waiting task is deliverable wait here.
CREATE TABLE IF NOT EXISTS azync_dag_signals (
    id         uuid        NOT NULL,
    dag_id     uuid        NOT NULL,
    name       text        NOT NULL,
    message_id text,
    payload    jsonb,
    consumed   boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_dag_signals_pkey PRIMARY KEY (id),
    CONSTRAINT azync_dag_signals_dag_id_fkey FOREIGN KEY (dag_id)
        REFERENCES azync_dags (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS azync_dag_signals_dedupe_idx
    ON azync_dag_signals (dag_id, name, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS azync_dag_signals_inbox_idx
    ON azync_dag_signals (dag_id, name, created_at) WHERE NOT consumed;

-- New states. Added NOT VALID (catalog only) and validated separately, which scans
-- without blocking writers.
ALTER TABLE azync_jobs DROP CONSTRAINT IF EXISTS azync_jobs_state_check;
ALTER TABLE azync_jobs ADD CONSTRAINT azync_jobs_state_check CHECK (state IN (
    'pending', 'scheduled', 'active', 'dead', 'paused', 'succeeded',
    'blocked', 'waiting', 'cancelled', 'uncertain', 'skipped')) NOT VALID;
ALTER TABLE azync_jobs VALIDATE CONSTRAINT azync_jobs_state_check;

ALTER TABLE azync_dags DROP CONSTRAINT IF EXISTS azync_dags_state_check;
ALTER TABLE azync_dags ADD CONSTRAINT azync_dags_state_check CHECK (state IN (
    'running', 'suspended', 'compensating', 'paused',
    'succeeded', 'failed', 'cancelled')) NOT VALID;
ALTER TABLE azync_dags VALIDATE CONSTRAINT azync_dags_state_check;
