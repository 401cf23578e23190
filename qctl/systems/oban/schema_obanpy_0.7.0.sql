-- oban-py 0.7.0's schema (oban/queries/install.sql, what oban.schema.install makes), as
-- qctl's demo creates it in a schema of its own when oban-py is not on the machine: the
-- tables, the job state type and the indexes qctl's reads and the demo's stand-in nodes
-- use. Written for qctl from that file; oban-py's own install is the reference.
CREATE TYPE oban_job_state AS ENUM ('available', 'scheduled', 'suspended', 'executing', 'retryable', 'completed', 'discarded', 'cancelled');
CREATE TABLE oban_jobs (
    id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    state oban_job_state NOT NULL DEFAULT 'available',
    queue text NOT NULL DEFAULT 'default',
    worker text NOT NULL,
    attempt smallint NOT NULL DEFAULT 0,
    max_attempts smallint NOT NULL DEFAULT 20,
    priority smallint NOT NULL DEFAULT 0,
    args jsonb NOT NULL DEFAULT '{}',
    meta jsonb NOT NULL DEFAULT '{}',
    tags text[] NOT NULL DEFAULT ARRAY[]::text[],
    errors jsonb NOT NULL DEFAULT '[]',
    attempted_by text[] NOT NULL DEFAULT ARRAY[]::text[],
    inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    attempted_at timestamp, cancelled_at timestamp, completed_at timestamp,
    discarded_at timestamp,
    CONSTRAINT attempt_range CHECK (attempt >= 0 AND attempt <= max_attempts),
    CONSTRAINT positive_max_attempts CHECK (max_attempts > 0)
);
CREATE UNLOGGED TABLE oban_leaders (
    name text PRIMARY KEY DEFAULT 'oban', node text NOT NULL,
    elected_at timestamp NOT NULL, expires_at timestamp NOT NULL
);
CREATE UNLOGGED TABLE oban_producers (
    uuid uuid PRIMARY KEY, name text NOT NULL DEFAULT 'oban', node text NOT NULL,
    queue text NOT NULL, meta jsonb NOT NULL DEFAULT '{}',
    started_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    updated_at timestamp NOT NULL DEFAULT timezone('UTC', now())
);
CREATE INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
    ON oban_jobs (state, queue, priority, scheduled_at, id);
CREATE INDEX oban_jobs_completed_at_index ON oban_jobs (completed_at) WHERE state = 'completed';
CREATE INDEX oban_jobs_cancelled_at_index ON oban_jobs (cancelled_at) WHERE state = 'cancelled';
CREATE INDEX oban_jobs_discarded_at_index ON oban_jobs (discarded_at) WHERE state = 'discarded';
