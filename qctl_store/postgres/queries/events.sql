-- Event ledger: publish with fan-out, subscribers, replay, retention, admin reads.

-- name: insert_event
-- One event appended to the ledger.
INSERT INTO azync_events
    (id, type, aggregate_type, aggregate_id, version, occurred_at, payload, meta)
VALUES (%(id)s, %(type)s, %(aggregate_type)s, %(aggregate_id)s, %(version)s,
        COALESCE(%(occurred_at)s::timestamptz, now()), %(payload)s::jsonb, %(meta)s::jsonb)

-- name: fan_out
-- One pending delivery job per subscriber of the event's type, registered now.
-- One pending delivery per subscriber registered now; the body stays in the ledger
-- (payload NULL) and the subscriber's budget is pinned (explicit).
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, event_id, replay,
     attempt, enqueued_at, meta, payload)
SELECT gen_random_uuid(), 'event', s.name, 'pending', now(), s.max_attempts, true,
       %(id)s, false, 0, now(), '{}', NULL
FROM azync_subscribers s WHERE s.event_type = %(type)s
RETURNING kind

-- name: register_subscriber
-- A subscriber registered, or its attempt budget updated.
INSERT INTO azync_subscribers (name, event_type, max_attempts, updated_at)
VALUES (%(name)s, %(event_type)s, %(max_attempts)s, now())
ON CONFLICT (name, event_type)
DO UPDATE SET max_attempts = EXCLUDED.max_attempts, updated_at = now()

-- name: subscribers
-- The subscribers of one event type, by name.
SELECT name, event_type, max_attempts FROM azync_subscribers
WHERE event_type = %(event_type)s ORDER BY name

-- name: delete_subscriber
-- A subscriber removed from one event type, or from every type with an empty type.
DELETE FROM azync_subscribers
WHERE name = %(name)s AND (%(event_type)s = '' OR event_type = %(event_type)s)

-- name: replay
-- Fresh replay deliveries of the ledger events matching the filter, to every matching subscriber.
-- The limit caps ledger events (picked by id), which then fan out to every matching
-- subscriber as fresh replay deliveries.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, event_id, replay,
     attempt, enqueued_at, meta, payload)
SELECT gen_random_uuid(), 'event', sub.name, 'pending', now(), sub.max_attempts, true,
       e.id, true, 0, now(), '{}', NULL
FROM (
    SELECT ev.id, ev.type FROM azync_events ev
    WHERE (%(event_type)s = '' OR ev.type = %(event_type)s)
      AND (%(event_id)s::uuid IS NULL OR ev.id = %(event_id)s::uuid)
      AND (%(since)s::timestamptz IS NULL OR ev.occurred_at >= %(since)s::timestamptz)
      AND (%(until)s::timestamptz IS NULL OR ev.occurred_at <= %(until)s::timestamptz)
    ORDER BY ev.id
    LIMIT %(limit)s
) e
JOIN azync_subscribers sub ON sub.event_type = e.type
WHERE (%(subscriber)s = '' OR sub.name = %(subscriber)s)
RETURNING kind

-- name: count_replay
-- How many ledger events a replay of the filter re-delivers, and how many deliveries it creates.
-- The replay statement's SELECT, counted.
SELECT COUNT(DISTINCT e.id) AS events, COUNT(*) AS deliveries
FROM (
    SELECT ev.id, ev.type FROM azync_events ev
    WHERE (%(event_type)s = '' OR ev.type = %(event_type)s)
      AND (%(event_id)s::uuid IS NULL OR ev.id = %(event_id)s::uuid)
      AND (%(since)s::timestamptz IS NULL OR ev.occurred_at >= %(since)s::timestamptz)
      AND (%(until)s::timestamptz IS NULL OR ev.occurred_at <= %(until)s::timestamptz)
    ORDER BY ev.id
    LIMIT %(limit)s
) e
JOIN azync_subscribers sub ON sub.event_type = e.type
WHERE (%(subscriber)s = '' OR sub.name = %(subscriber)s)

-- name: retain
-- Up to limit ledger events older than a cutoff deleted, only those whose deliveries all ended.
-- Only events whose deliveries are all terminal (succeeded/dead); the FK cascade then
-- removes those deliveries. Oldest first.
DELETE FROM azync_events WHERE id IN (
    SELECT e.id FROM azync_events e
    WHERE e.occurred_at < %(before)s
      AND NOT EXISTS (
          SELECT 1 FROM azync_jobs j
          WHERE j.event_id = e.id AND j.state <> ALL (ARRAY['succeeded'::text, 'dead'::text])
      )
    ORDER BY e.occurred_at, e.id
    LIMIT %(limit)s
)

-- name: count_events
-- How many ledger events match {where}.
-- {where} is built from the fixed fragments of listing.event_where.
SELECT COUNT(*) AS n FROM azync_events e WHERE {where}

-- name: list_events
-- A page of the ledger events matching {where}, newest first, with their delivery counts.
SELECT {event_admin},
       (SELECT COUNT(*) FROM azync_jobs j
        WHERE j.event_id = e.id AND j.source = 'event') AS deliveries
FROM azync_events e WHERE {where}
ORDER BY e.occurred_at DESC, e.id DESC
LIMIT %(limit)s OFFSET %(offset)s

-- name: get_event
-- One ledger event by id with its delivery count.
SELECT {event_admin},
       (SELECT COUNT(*) FROM azync_jobs j
        WHERE j.event_id = e.id AND j.source = 'event') AS deliveries
FROM azync_events e WHERE e.id = %(id)s

-- name: list_subscriber_views
-- Every subscriber (of one event type, or all) with its registration times.
SELECT event_type, name, max_attempts, created_at, updated_at FROM azync_subscribers
WHERE (%(event_type)s = '' OR event_type = %(event_type)s)
ORDER BY event_type, name

-- name: ops_stats
-- The event overview: undispatched events, events and types of the last 24 hours, subscribers.
SELECT
    (SELECT COUNT(*) FROM azync_events e
     WHERE NOT EXISTS (SELECT 1 FROM azync_jobs j
                       WHERE j.event_id = e.id AND j.source = 'event')) AS undispatched,
    (SELECT COUNT(*) FROM azync_events
     WHERE occurred_at >= now() - interval '24 hours') AS total_24h,
    (SELECT COUNT(DISTINCT type) FROM azync_events
     WHERE occurred_at >= now() - interval '24 hours') AS types_24h,
    (SELECT COUNT(*) FROM azync_subscribers) AS subscribers
