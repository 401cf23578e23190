-- Leader election over lease rows (SQLite has no advisory locks).

-- name: acquire
-- Take the lease when nobody holds it or the holder's lease expired; no row = held.
INSERT INTO qctl_leases (name, holder, expires_at) VALUES (:name, :holder, :expires_at)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE qctl_leases.expires_at < :now
RETURNING holder

-- name: renew
-- A held lease extended while it has not expired.
UPDATE qctl_leases SET expires_at = :expires_at
WHERE name = :name AND holder = :holder AND expires_at >= :now

-- name: holds
-- Whether a holder still holds an unexpired lease.
SELECT 1 FROM qctl_leases WHERE name = :name AND holder = :holder AND expires_at >= :now

-- name: release
-- A held lease given up.
DELETE FROM qctl_leases WHERE name = :name AND holder = :holder
