-- qctl: azync schema version 10, when the current attempt started, and an index for
-- per-(name, state) DAG counts. Re-runnable.

-- Stamped by each lease; NULL means "not known" (rows leased before this version).
ALTER TABLE azync_jobs ADD COLUMN IF NOT EXISTS started_at timestamptz;

-- The DAG navigator groups every run by (name, state), terminal ones included, which
-- the live-only partial indexes cannot serve.
CREATE INDEX IF NOT EXISTS azync_dags_name_state_idx ON azync_dags (name, state);
