"""azync's own SQL, transcribed from its Go driver, so that "what would a Go worker do with
this row" is answered by azync's statements, not by qctl's (PostgreSQL: the Go driver's
only backend).

A transcription, not azync itself, because the Go module proxy these machines reach
refuses ``github.com/kausys/azync`` and ``github.com/kausys/azync/driver/azyncpgx`` (every
version asked, v0.0.8 included, answers 403), so ``tests/go`` cannot build an azync
worker. When it serves them, a harness program there replaces these statements."""

from __future__ import annotations

GO_DEQUEUE_PREDICATE = (
    "source = %(source)s AND kind = %(kind)s AND state = 'pending' AND run_at <= now()"
)
"""The WHERE clause of azync's dequeue (``dequeueClaimBody`` in
``driver/azyncpgx/store_jobs.go``), verbatim but for parameter names: the rows a Go worker
of (source, kind) leases next."""

GO_DEQUEUE = f"""
UPDATE azync_jobs j SET
    state = 'active',
    lease_until = now() + make_interval(secs => %(lease_seconds)s),
    lease_token = gen_random_uuid(),
    max_attempts = CASE WHEN j.max_attempts_explicit OR NOT %(override_default)s
        THEN j.max_attempts ELSE %(default_max_attempts)s END,
    max_attempts_explicit = true,
    attempt = j.attempt + 1,
    started_at = now(),
    updated_at = now()
FROM (
    SELECT id FROM azync_jobs
    WHERE {GO_DEQUEUE_PREDICATE}
    ORDER BY run_at, id
    FOR UPDATE SKIP LOCKED
    LIMIT %(limit)s
) picked
WHERE j.id = picked.id
RETURNING j.id, j.attempt, j.max_attempts
"""
"""``driver/azyncpgx/store_jobs.go``: ``dequeueClaimBody`` + ``dequeueQueueSQL``."""

GO_DELIVER_SIGNAL = """
WITH sig AS (
    UPDATE azync_jobs SET
        state = 'succeeded', result = %(payload)s::jsonb, completed_at = now(), updated_at = now()
    WHERE source = 'dag' AND dag_id = %(dag)s AND signal_name = %(name)s
        AND kind = '$signal' AND state = 'waiting'
    RETURNING 1
),
slp AS (
    UPDATE azync_jobs SET run_at = now(), updated_at = now()
    WHERE source = 'dag' AND dag_id = %(dag)s AND signal_name = %(name)s
        AND kind = '$sleep' AND state = 'scheduled'
    RETURNING 1
)
SELECT (SELECT count(*) FROM sig) + (SELECT count(*) FROM slp) AS delivered
"""
"""``driver/azyncpgx/dag_store.go``: ``deliverSignalNowSQL``."""


def go_exhausted(attempt: int, max_attempts: int) -> bool:
    """``internal/engine/executor.go``: a failed attempt dead-letters the job when
    ``job.Attempt >= job.MaxAttempts``."""
    return attempt >= max_attempts
