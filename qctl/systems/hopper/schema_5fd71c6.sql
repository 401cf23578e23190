-- hopper's PostgreSQL schema, versions 1 to 8, as hopper's migrator (hoppermigrate)
-- creates it: github.com/parallelworks/hopper, hoppermigrate/migrations/00N_*.up.sql at
-- commit 5fd71c684487ad9e92266316d491196132b75730 (the commit of 008_function_schema).
-- The tables, columns, types, defaults, indexes, functions, storage settings and
-- notification channels are hopper's; the layout is ours. The Go module proxy refuses
-- hopper, so `qctl demo --system hopper`, the tests and bench/hopper_scale.py write this
-- instead of running hoppermigrate.
--
-- standin.py's install runs each "-- version: N" section in one transaction with
-- search_path set to the schema, then records it as hoppermigrate's Apply does
-- (INSERT INTO hopper_schema (version) VALUES (N)).

-- version: 1 schema
DO $do$
BEGIN
  IF current_setting('server_version_num')::int >= 180000 THEN
    EXECUTE $fn$
      CREATE FUNCTION hopper_uuidv7() RETURNS uuid
      LANGUAGE sql VOLATILE PARALLEL SAFE
      AS 'SELECT uuidv7()'
    $fn$;
  ELSE
    EXECUTE $fn$
      CREATE FUNCTION hopper_uuidv7() RETURNS uuid
      LANGUAGE sql VOLATILE PARALLEL SAFE
      AS $body$
        SELECT encode(
          set_bit(
            set_bit(
              overlay(uuid_send(gen_random_uuid())
                placing substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                FROM 1 FOR 6),
              52, 1),
            53, 1),
          'hex')::uuid
      $body$
    $fn$;
  END IF;
END
$do$;

CREATE TYPE hopper_job_state AS ENUM (
  'pending', 'available', 'scheduled', 'running', 'retryable', 'completed', 'cancelled', 'discarded'
);

CREATE TABLE hopper_jobs (
  id                  uuid        NOT NULL DEFAULT hopper_uuidv7() PRIMARY KEY,
  seq                 bigint      GENERATED ALWAYS AS IDENTITY,
  kind                text        NOT NULL,
  queue               text        NOT NULL DEFAULT 'default',
  state               hopper_job_state NOT NULL DEFAULT 'available',
  priority            smallint    NOT NULL DEFAULT 2 CHECK (priority BETWEEN 1 AND 4),
  attempt             smallint    NOT NULL DEFAULT 0,
  max_attempts        smallint    NOT NULL DEFAULT 25,
  scheduled_at        timestamptz NOT NULL DEFAULT now(),
  attempted_at        timestamptz,
  attempted_by        bigint,
  args                jsonb       NOT NULL DEFAULT '{}',
  metadata            jsonb       NOT NULL DEFAULT '{}',
  errors              jsonb       NOT NULL DEFAULT '[]',
  unique_key          text,
  ordering_key        text,
  partition_key       text,
  batch_id            uuid,
  expires_at          timestamptz,
  cancel_requested_at timestamptz,
  await               boolean     NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 70);

CREATE INDEX hopper_jobs_claim ON hopper_jobs (queue, priority, scheduled_at, seq)
  WHERE state IN ('available', 'scheduled', 'retryable');
CREATE INDEX hopper_jobs_running ON hopper_jobs (queue, attempted_by) WHERE state = 'running';
CREATE UNIQUE INDEX hopper_jobs_unique ON hopper_jobs (kind, unique_key) WHERE unique_key IS NOT NULL;

CREATE TABLE hopper_job_history (
  LIKE hopper_jobs,
  finalized_at timestamptz NOT NULL,
  output       jsonb
) PARTITION BY LIST (state);

CREATE TABLE hopper_job_history_completed PARTITION OF hopper_job_history
  FOR VALUES IN ('completed') PARTITION BY RANGE (finalized_at);
CREATE TABLE hopper_job_history_failed PARTITION OF hopper_job_history
  FOR VALUES IN ('cancelled', 'discarded') PARTITION BY RANGE (finalized_at);
CREATE TABLE hopper_job_history_completed_default PARTITION OF hopper_job_history_completed DEFAULT;
CREATE TABLE hopper_job_history_failed_default PARTITION OF hopper_job_history_failed DEFAULT;

CREATE INDEX hopper_job_history_id ON hopper_job_history (id);
CREATE INDEX hopper_job_history_queue ON hopper_job_history (queue, finalized_at);

CREATE TABLE hopper_clients (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  hostname    text        NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  info        jsonb       NOT NULL DEFAULT '{}'
);

CREATE TABLE hopper_leader (
  name       text PRIMARY KEY DEFAULT 'default',
  client_id  bigint      NOT NULL,
  elected_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE hopper_queues (
  name          text PRIMARY KEY,
  paused_at     timestamptz,
  global_limit  int,
  rate_per_sec  double precision,
  rate_burst    int,
  tokens        double precision,
  refilled_at   timestamptz,
  metadata      jsonb       NOT NULL DEFAULT '{}',
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hopper_periodic (
  name      text PRIMARY KEY,
  last_slot timestamptz NOT NULL
);

CREATE TABLE hopper_subscriptions (
  name       text PRIMARY KEY,
  pattern    text NOT NULL,
  kind       text NOT NULL,
  queue      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hopper_schema (
  version    int PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);

-- version: 2 messaging
ALTER TABLE hopper_subscriptions
  ADD COLUMN max_attempts smallint,
  ADD COLUMN metadata     jsonb NOT NULL DEFAULT '{}';

CREATE UNIQUE INDEX hopper_jobs_ordering_running ON hopper_jobs (queue, ordering_key)
  WHERE state = 'running' AND ordering_key IS NOT NULL;
CREATE INDEX hopper_jobs_ordering ON hopper_jobs (queue, ordering_key, seq)
  WHERE ordering_key IS NOT NULL AND state IN ('available', 'scheduled', 'retryable');

CREATE FUNCTION hopper_topic_regex(pattern text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT '^' ||
    replace(replace(replace(replace(replace(
      regexp_replace(pattern, '([.+?^${}()|\[\]\\])', '\\\1', 'g'),
      '*', '[^.]+'),
      '\.#\.', '(\..*)?\.'),
      '\.#', '(\..*)?'),
      '#\.', '(.*\.)?'),
      '#', '.*')
    || '$'
$$;

CREATE FUNCTION hopper_insert(kind text, args jsonb, opts jsonb DEFAULT '{}') RETURNS uuid
LANGUAGE sql VOLATILE
AS $$
  INSERT INTO hopper_jobs (kind, queue, state, priority, max_attempts, scheduled_at, args, metadata, unique_key,
                           ordering_key, expires_at, await)
  VALUES (
    kind,
    coalesce(opts->>'queue', 'default'),
    (CASE WHEN (opts->>'scheduled_at')::timestamptz > now() THEN 'scheduled' ELSE 'available' END)::hopper_job_state,
    coalesce((opts->>'priority')::smallint, 2),
    coalesce((opts->>'max_attempts')::smallint, 25),
    coalesce((opts->>'scheduled_at')::timestamptz, now()),
    coalesce(args, '{}'),
    coalesce(opts->'metadata', '{}'),
    opts->>'unique_key',
    opts->>'ordering_key',
    CASE WHEN (opts->>'ttl_seconds')::float8 > 0 THEN now() + make_interval(secs => (opts->>'ttl_seconds')::float8) END,
    coalesce((opts->>'await')::boolean, false))
  ON CONFLICT (kind, unique_key) WHERE unique_key IS NOT NULL DO UPDATE SET kind = EXCLUDED.kind
  RETURNING id
$$;

CREATE FUNCTION hopper_publish(topic text, payload jsonb, opts jsonb DEFAULT '{}') RETURNS SETOF uuid
LANGUAGE sql VOLATILE
AS $$
  WITH msg AS (SELECT hopper_uuidv7()::text AS id),
  ins AS (
    INSERT INTO hopper_jobs (kind, queue, state, priority, max_attempts, scheduled_at, args, metadata, unique_key,
                             ordering_key, expires_at, await)
    SELECT s.kind, s.queue,
      (CASE WHEN (opts->>'delay_seconds')::float8 > 0 THEN 'scheduled' ELSE 'available' END)::hopper_job_state,
      coalesce((opts->>'priority')::smallint, 2),
      coalesce(s.max_attempts, CASE WHEN opts->>'ordering_key' IS NOT NULL THEN 10 ELSE 25 END),
      now() + make_interval(secs => coalesce((opts->>'delay_seconds')::float8, 0)),
      coalesce(payload, 'null'),
      jsonb_build_object('topic', topic, 'message_id', msg.id, 'headers', coalesce(opts->'headers', '{}')) || s.metadata,
      CASE WHEN opts->>'dedup_key' IS NOT NULL THEN 'msg:' || (opts->>'dedup_key') END,
      opts->>'ordering_key',
      CASE WHEN (opts->>'ttl_seconds')::float8 > 0 THEN now() + make_interval(secs => (opts->>'ttl_seconds')::float8) END,
      coalesce((opts->>'await')::boolean, false)
    FROM hopper_subscriptions s, msg
    WHERE topic ~ hopper_topic_regex(s.pattern)
    ON CONFLICT (kind, unique_key) WHERE unique_key IS NOT NULL DO UPDATE SET kind = EXCLUDED.kind
    RETURNING id, queue, (xmax <> 0) AS duplicate
  ),
  notified AS (SELECT pg_notify('hopper_insert', queue) FROM (SELECT DISTINCT queue FROM ins WHERE NOT duplicate) q)
  SELECT id FROM ins
$$;

-- version: 3 flow_control
ALTER TABLE hopper_queues
  ADD COLUMN partition_limit int,
  ADD COLUMN aging_seconds   int;

CREATE INDEX hopper_jobs_partition_running ON hopper_jobs (queue, partition_key)
  WHERE state = 'running' AND partition_key IS NOT NULL;

CREATE TABLE hopper_batches (
  id           uuid        NOT NULL DEFAULT hopper_uuidv7() PRIMARY KEY,
  pending      int         NOT NULL,
  failed       int         NOT NULL DEFAULT 0,
  total        int         NOT NULL,
  on_success   jsonb,
  on_failure   jsonb,
  on_complete  jsonb,
  metadata     jsonb       NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);

CREATE INDEX hopper_jobs_batch ON hopper_jobs (batch_id) WHERE batch_id IS NOT NULL;

-- version: 4 workflows
ALTER TABLE hopper_batches
  ADD COLUMN name  text,
  ADD COLUMN edges jsonb;

CREATE TABLE hopper_job_deps (
  job_id     uuid NOT NULL,
  depends_on uuid NOT NULL,
  on_failure text NOT NULL DEFAULT 'cancel',
  PRIMARY KEY (job_id, depends_on)
);

CREATE INDEX hopper_job_deps_depends_on ON hopper_job_deps (depends_on);
CREATE INDEX hopper_job_history_batch ON hopper_job_history (batch_id) WHERE batch_id IS NOT NULL;

-- version: 5 streams
CREATE TABLE hopper_stream_events (
  xid        xid8        NOT NULL DEFAULT pg_current_xact_id(),
  seq        bigint      GENERATED ALWAYS AS IDENTITY,
  topic      text        NOT NULL,
  key        text,
  payload    jsonb       NOT NULL DEFAULT 'null',
  headers    jsonb       NOT NULL DEFAULT '{}',
  message_id uuid        NOT NULL DEFAULT hopper_uuidv7(),
  created_at timestamptz NOT NULL DEFAULT now()
) PARTITION BY RANGE (created_at);

CREATE INDEX hopper_stream_events_position ON hopper_stream_events (xid, seq);
CREATE TABLE hopper_stream_events_default PARTITION OF hopper_stream_events DEFAULT;

CREATE TABLE hopper_stream_consumers (
  name         text PRIMARY KEY,
  pattern      text        NOT NULL,
  kind         text        NOT NULL,
  queue        text        NOT NULL,
  max_attempts smallint,
  metadata     jsonb       NOT NULL DEFAULT '{}',
  seen         pg_snapshot NOT NULL DEFAULT '3:3:',
  reading      pg_snapshot,
  xid          xid8        NOT NULL DEFAULT '0',
  seq          bigint      NOT NULL DEFAULT 0,
  delivered_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- version: 6 autovacuum
ALTER TABLE hopper_jobs SET (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.05
);

-- version: 7 vacuum_truncate
ALTER TABLE hopper_jobs SET (vacuum_truncate = false);

-- version: 8 function_schema
ALTER FUNCTION hopper_insert(text, jsonb, jsonb) SET search_path FROM CURRENT;
ALTER FUNCTION hopper_publish(text, jsonb, jsonb) SET search_path FROM CURRENT;
