-- qctl: azync schema version 1, the core tables.
--
-- Every object below keeps the name, column order, type, nullability and default that
-- azync's driver/azyncpgx gives it, so Go and Python instances can share one database.
-- The legacy tenant/trace columns of azync's first releases are not created here:
-- version 5 removes them anyway, and skipping them leaves the same visible schema.

-- The append-only event ledger; deliveries rehydrate their payload from it.
CREATE TABLE azync_events (
    id             uuid        NOT NULL,
    type           text        NOT NULL,
    aggregate_type text        NOT NULL DEFAULT '',
    aggregate_id   text        NOT NULL DEFAULT '',
    version        bigint      NOT NULL DEFAULT 0,
    occurred_at    timestamptz NOT NULL,
    payload        jsonb       NOT NULL,
    meta           jsonb       NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_events_pkey PRIMARY KEY (id)
);
CREATE INDEX azync_events_type_occurred_idx ON azync_events USING btree (type, occurred_at, id);
CREATE INDEX azync_events_occurred_idx ON azync_events USING btree (occurred_at, id);

-- Named consumers of an event type, each with its own attempt budget.
CREATE TABLE azync_subscribers (
    name         text        NOT NULL,
    event_type   text        NOT NULL,
    max_attempts integer     NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_subscribers_max_attempts_check CHECK (max_attempts > 0),
    CONSTRAINT azync_subscribers_pkey PRIMARY KEY (name, event_type)
);

-- One table for every unit of work; `source` tells queue jobs from event deliveries
-- (later versions add DAG tasks and workflow jobs).
CREATE TABLE azync_jobs (
    id                    uuid        NOT NULL,
    source                text        NOT NULL,
    kind                  text        NOT NULL,
    state                 text        NOT NULL,
    run_at                timestamptz NOT NULL,
    lease_until           timestamptz,
    lease_token           uuid,
    attempt               integer     NOT NULL DEFAULT 0,
    max_attempts          integer     NOT NULL,
    max_attempts_explicit boolean     NOT NULL DEFAULT false,
    reap_count            integer     NOT NULL DEFAULT 0,
    payload               jsonb,
    meta                  jsonb       NOT NULL DEFAULT '{}',
    idempotency_key       text,
    event_id              uuid,
    replay                boolean     NOT NULL DEFAULT false,
    last_error            text,
    enqueued_at           timestamptz NOT NULL,
    failed_at             timestamptz,
    completed_at          timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_jobs_source_check CHECK (source IN ('queue', 'event')),
    CONSTRAINT azync_jobs_state_check
        CHECK (state IN ('pending', 'scheduled', 'active', 'dead', 'paused', 'succeeded')),
    CONSTRAINT azync_jobs_pkey PRIMARY KEY (id),
    CONSTRAINT azync_jobs_event_id_fkey FOREIGN KEY (event_id)
        REFERENCES azync_events (id) ON DELETE CASCADE,
    -- A queue job always has a payload; a delivery reads its event's instead.
    CONSTRAINT azync_jobs_payload_check CHECK (source <> 'queue' OR payload IS NOT NULL),
    -- Exactly the event deliveries point at a ledger row.
    CONSTRAINT azync_jobs_event_id_check CHECK ((source = 'event') = (event_id IS NOT NULL))
);
-- One lean partial index per hot state, (source, kind) first, for the fetch loops.
CREATE INDEX azync_jobs_pending_idx
    ON azync_jobs (source, kind, run_at, id) WHERE state = 'pending';
CREATE INDEX azync_jobs_scheduled_idx
    ON azync_jobs (source, kind, run_at, id) WHERE state = 'scheduled';
CREATE INDEX azync_jobs_active_idx
    ON azync_jobs (source, kind, lease_until, id) WHERE state = 'active';
CREATE INDEX azync_jobs_dead_idx
    ON azync_jobs (source, kind, enqueued_at) WHERE state = 'dead';
CREATE INDEX azync_jobs_succeeded_idx
    ON azync_jobs (source, kind, completed_at) WHERE state = 'succeeded';
-- An idempotency key is taken only while its job is alive (not dead, not succeeded).
CREATE UNIQUE INDEX azync_jobs_idempotency_idx
    ON azync_jobs (source, kind, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state NOT IN ('dead', 'succeeded');
CREATE INDEX azync_jobs_event_idx ON azync_jobs (event_id) WHERE event_id IS NOT NULL;

-- The failure history, one row per failed attempt.
CREATE TABLE azync_job_attempts (
    id        bigint      GENERATED ALWAYS AS IDENTITY,
    job_id    uuid        NOT NULL,
    attempt   integer     NOT NULL,
    error     text        NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT azync_job_attempts_pkey PRIMARY KEY (id),
    CONSTRAINT azync_job_attempts_job_id_fkey FOREIGN KEY (job_id)
        REFERENCES azync_jobs (id) ON DELETE CASCADE
);
CREATE INDEX azync_job_attempts_job_idx ON azync_job_attempts (job_id, attempt);

-- Time-window dedupe reservations (idempotency TTL); they outlive their jobs.
CREATE TABLE azync_idempotency_keys (
    source     text        NOT NULL,
    kind       text        NOT NULL,
    key        text        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT azync_idempotency_keys_pkey PRIMARY KEY (source, kind, key)
);
CREATE INDEX azync_idempotency_expires_idx ON azync_idempotency_keys (expires_at);

-- Daily counters per (source, kind), sharded over slots so writers do not queue on
-- one hot row; readers add the slots up.
CREATE TABLE azync_stats_daily (
    source    text     NOT NULL,
    kind      text     NOT NULL,
    day       date     NOT NULL,
    slot      smallint NOT NULL DEFAULT 0,
    enqueued  bigint   NOT NULL DEFAULT 0,
    processed bigint   NOT NULL DEFAULT 0,
    failed    bigint   NOT NULL DEFAULT 0,
    reaped    bigint   NOT NULL DEFAULT 0,
    CONSTRAINT azync_stats_daily_pkey PRIMARY KEY (source, kind, day, slot)
);
