-- Leadership: session-scoped advisory locks held on a dedicated connection (azync's
-- driver/azyncpgx/leader.go).

-- name: try_lock
-- Try to take a session advisory lock without waiting.
SELECT pg_try_advisory_lock(%(key)s) AS acquired

-- name: unlock
-- Release a session advisory lock.
SELECT pg_advisory_unlock(%(key)s) AS released

-- name: ping
-- A round trip that proves the lock's session is alive.
SELECT 1 AS ok
