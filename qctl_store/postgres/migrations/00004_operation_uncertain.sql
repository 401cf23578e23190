-- qctl: azync schema version 4, durable workflow operations.
--
-- An operation whose outcome is unknown parks in the new 'uncertain' state, and an
-- execution key names at most one live operation job.

ALTER TABLE azync_jobs
    DROP CONSTRAINT azync_jobs_state_check,
    ADD CONSTRAINT azync_jobs_state_check CHECK (state IN (
        'pending', 'scheduled', 'active', 'dead', 'paused', 'succeeded',
        'blocked', 'waiting', 'cancelled', 'uncertain'));

CREATE UNIQUE INDEX azync_jobs_workflow_exec_key_idx
    ON azync_jobs ((meta ->> 'execution_key'))
    WHERE source = 'workflow'
      AND meta ? 'execution_key'
      AND state IN ('pending', 'scheduled', 'active', 'uncertain');
