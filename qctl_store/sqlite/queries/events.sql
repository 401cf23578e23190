-- Event ledger, subscribers and fan-out (SQLite).

-- name: insert_event
-- One event appended to the ledger.
INSERT INTO azync_events
    (id, type, aggregate_type, aggregate_id, version, occurred_at, payload, meta, created_at)
VALUES (:id, :type, :aggregate_type, :aggregate_id, :version, :occurred_at, :payload, :meta, :now)

-- name: subscribers
-- The subscribers of one event type, by name.
SELECT name, event_type, max_attempts FROM azync_subscribers
WHERE event_type = :event_type ORDER BY name

-- name: insert_delivery
-- One pending delivery job of an event to one subscriber.
-- A delivery carries no payload (the worker reads the event) and pins the subscriber's
-- attempt budget.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, event_id, replay,
     attempt, enqueued_at, meta, payload, created_at, updated_at)
VALUES (:id, 'event', :kind, 'pending', :now, :max_attempts, 1, :event_id, :replay,
        0, :now, '{}', NULL, :now, :now)

-- name: register_subscriber
-- A subscriber registered, or its attempt budget updated.
INSERT INTO azync_subscribers (name, event_type, max_attempts, created_at, updated_at)
VALUES (:name, :event_type, :max_attempts, :now, :now)
ON CONFLICT (name, event_type) DO UPDATE SET
    max_attempts = excluded.max_attempts, updated_at = excluded.updated_at

-- name: delete_subscriber
-- A subscriber removed from one event type, or from every type with an empty type.
DELETE FROM azync_subscribers
WHERE name = :name AND (:event_type = '' OR event_type = :event_type)

-- name: replay_targets
-- The (event, subscriber) pairs a replay delivers to, events capped by the limit.
-- Limit caps ledger events (picked by id, as azync does), which then fan out to every
-- matching subscriber registered now.
SELECT e.id AS event_id, sub.name AS kind, sub.max_attempts AS max_attempts
FROM (
    SELECT ev.id, ev.type FROM azync_events ev
    WHERE (:event_type = '' OR ev.type = :event_type)
      AND (:event_id IS NULL OR ev.id = :event_id)
      AND (:since IS NULL OR ev.occurred_at >= :since)
      AND (:until IS NULL OR ev.occurred_at <= :until)
    ORDER BY ev.id
    LIMIT :limit
) e
JOIN azync_subscribers sub ON sub.event_type = e.type
WHERE (:subscriber = '' OR sub.name = :subscriber)

-- name: count_replay
-- How many ledger events a replay of the filter re-delivers, and how many deliveries it creates.
-- replay_targets, counted.
SELECT COUNT(DISTINCT e.id) AS events, COUNT(*) AS deliveries
FROM (
    SELECT ev.id, ev.type FROM azync_events ev
    WHERE (:event_type = '' OR ev.type = :event_type)
      AND (:event_id IS NULL OR ev.id = :event_id)
      AND (:since IS NULL OR ev.occurred_at >= :since)
      AND (:until IS NULL OR ev.occurred_at <= :until)
    ORDER BY ev.id
    LIMIT :limit
) e
JOIN azync_subscribers sub ON sub.event_type = e.type
WHERE (:subscriber = '' OR sub.name = :subscriber)

-- name: retain
-- Oldest events first whose deliveries (if any) are all terminal.
DELETE FROM azync_events WHERE id IN (
    SELECT e.id FROM azync_events e
    WHERE e.occurred_at < :before
      AND NOT EXISTS (
          SELECT 1 FROM azync_jobs j
          WHERE j.event_id = e.id AND j.state NOT IN ('succeeded', 'dead'))
    ORDER BY e.occurred_at, e.id
    LIMIT :limit
)

-- name: count_events
-- How many ledger events match {where}.
SELECT COUNT(*) AS n FROM azync_events e WHERE {where}

-- name: list_events
-- A page of the ledger events matching {where}, newest first, with their delivery counts.
SELECT {event_admin},
       (SELECT COUNT(*) FROM azync_jobs j WHERE j.event_id = e.id AND j.source = 'event')
           AS deliveries
FROM azync_events e WHERE {where}
ORDER BY e.occurred_at DESC, e.id DESC
LIMIT :limit OFFSET :offset

-- name: get_event
-- One ledger event by id with its delivery count.
SELECT {event_admin},
       (SELECT COUNT(*) FROM azync_jobs j WHERE j.event_id = e.id AND j.source = 'event')
           AS deliveries
FROM azync_events e WHERE e.id = :id

-- name: list_subscriber_views
-- Every subscriber (of one event type, or all) with its registration times.
SELECT event_type, name, max_attempts, created_at, updated_at FROM azync_subscribers
WHERE (:event_type = '' OR event_type = :event_type)
ORDER BY event_type, name

-- name: ops_stats
-- The event overview: undispatched events, events and types of the last 24 hours, subscribers.
SELECT
    (SELECT COUNT(*) FROM azync_events e WHERE NOT EXISTS (
        SELECT 1 FROM azync_jobs j WHERE j.event_id = e.id AND j.source = 'event'))
        AS undispatched,
    (SELECT COUNT(*) FROM azync_events WHERE occurred_at >= :since) AS total_24h,
    (SELECT COUNT(DISTINCT type) FROM azync_events WHERE occurred_at >= :since) AS types_24h,
    (SELECT COUNT(*) FROM azync_subscribers) AS subscribers
