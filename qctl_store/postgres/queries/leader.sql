-- Leadership: session-scoped advisory locks held on a dedicated connection (notes 2.4).

-- name: try_lock
SELECT pg_try_advisory_lock(%(key)s) AS acquired

-- name: unlock
SELECT pg_advisory_unlock(%(key)s) AS released

-- name: ping
SELECT 1 AS ok
