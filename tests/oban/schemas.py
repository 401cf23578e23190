"""Oban's two schema flavours as test fixtures, each in a given PostgreSQL schema (Oban's
prefix), which must exist:

- ``install_obanpy(dsn, schema)``: oban-py 0.7.0's own install (``oban.schema.install``,
  its ``queries/install.sql``), run by the partner in oban-py's environment: ``oban_jobs``,
  ``oban_leaders``, ``oban_producers``; no version comment. oban-py writes its prefix
  into its SQL unquoted, so ``schema`` is a plain lower-case identifier here.
- ``install_elixir(dsn, schema, version)``: Elixir Oban's PostgreSQL migrations up to
  ``version`` (1 to ``ELIXIR_LATEST``), written here from the public migrations of
  oban-bg/oban v2.23.1 (``lib/oban/migrations/postgres/vNN.ex``, each step below names its
  file), as Ecto renders them; then the version comment on ``oban_jobs`` that
  ``lib/oban/migrations/postgres.ex`` (``record_version``) writes and reads back
  (``migrated_version``). Elixir Oban comments no other table: ``oban_peers`` (v11 on)
  carries none.

Column types as Ecto's PostgreSQL adapter renders them: ``:utc_datetime_usec`` is
``timestamp`` without a time zone, ``:map`` is ``jsonb``, and ``{:array, :map}`` is
``jsonb[]`` (so Elixir's ``errors`` is a ``jsonb[]``, where oban-py's is a ``jsonb``
array).
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from tests.oban.harness import Partner

ELIXIR_LATEST = 14
"""``@current_version`` of ``lib/oban/migrations/postgres.ex`` at v2.23.1."""


def install_obanpy(dsn: str, schema: str) -> None:
    """oban-py's own schema install, by oban-py (the partner process)."""
    partner = Partner(dsn, schema)
    try:
        partner.call("install")
    finally:
        partner.close()


# Each migration's up step; ``{p}`` is the quoted prefix, ``{e}`` the prefix as a string
# literal's contents.
_ELIXIR_UP: dict[int, list[str]] = {
    # lib/oban/migrations/postgres/v01.ex
    1: [
        """CREATE TYPE {p}.oban_job_state AS ENUM
             ('available', 'scheduled', 'executing', 'retryable', 'completed', 'discarded')""",
        """CREATE TABLE {p}.oban_jobs (
             id bigserial PRIMARY KEY,
             state {p}.oban_job_state NOT NULL DEFAULT 'available',
             queue text NOT NULL DEFAULT 'default',
             worker text NOT NULL,
             args jsonb NOT NULL,
             errors jsonb[] NOT NULL DEFAULT ARRAY[]::jsonb[],
             attempt integer NOT NULL DEFAULT 0,
             max_attempts integer NOT NULL DEFAULT 20,
             inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
             scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
             attempted_at timestamp,
             completed_at timestamp)""",
        "CREATE INDEX oban_jobs_queue_index ON {p}.oban_jobs (queue)",
        "CREATE INDEX oban_jobs_state_index ON {p}.oban_jobs (state)",
        "CREATE INDEX oban_jobs_scheduled_at_index ON {p}.oban_jobs (scheduled_at)",
        """CREATE FUNCTION {p}.oban_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
           DECLARE
             channel text;
             notice json;
           BEGIN
             IF TG_OP = 'INSERT' THEN
               channel = '{e}.oban_insert';
               notice = json_build_object('queue', NEW.queue, 'state', NEW.state);
               IF NEW.scheduled_at IS NOT NULL
                  AND NEW.scheduled_at > now() AT TIME ZONE 'utc' THEN
                 RETURN NULL;
               END IF;
             ELSE
               channel = '{e}.oban_update';
               notice = json_build_object(
                 'queue', NEW.queue, 'new_state', NEW.state, 'old_state', OLD.state);
             END IF;
             PERFORM pg_notify(channel, notice::text);
             RETURN NULL;
           END $$""",
        """CREATE TRIGGER oban_notify AFTER INSERT OR UPDATE OF state ON {p}.oban_jobs
           FOR EACH ROW EXECUTE PROCEDURE {p}.oban_jobs_notify()""",
    ],
    # lib/oban/migrations/postgres/v02.ex
    2: [
        "DROP INDEX {p}.oban_jobs_scheduled_at_index",
        """CREATE INDEX oban_jobs_scheduled_at_index ON {p}.oban_jobs (scheduled_at)
           WHERE state IN ('available'::{p}.oban_job_state, 'scheduled'::{p}.oban_job_state)""",
        """ALTER TABLE {p}.oban_jobs ADD CONSTRAINT worker_length
           CHECK (char_length(worker) > 0 AND char_length(worker) < 128)""",
        """ALTER TABLE {p}.oban_jobs ADD CONSTRAINT queue_length
           CHECK (char_length(queue) > 0 AND char_length(queue) < 128)""",
        """CREATE FUNCTION {p}.oban_wrap_id(value bigint) RETURNS int
           LANGUAGE plpgsql IMMUTABLE AS $$
           BEGIN
             RETURN (CASE WHEN value > 2147483647 THEN mod(value, 2147483647)
                     ELSE value END)::int;
           END $$""",
    ],
    # lib/oban/migrations/postgres/v03.ex
    3: ["ALTER TABLE {p}.oban_jobs ADD COLUMN attempted_by text[]"],
    # lib/oban/migrations/postgres/v04.ex
    4: ["DROP FUNCTION {p}.oban_wrap_id(bigint)"],
    # lib/oban/migrations/postgres/v05.ex
    5: [
        "DROP INDEX {p}.oban_jobs_scheduled_at_index",
        "DROP INDEX {p}.oban_jobs_queue_index",
        "DROP INDEX {p}.oban_jobs_state_index",
        """CREATE INDEX oban_jobs_queue_state_scheduled_at_id_index
           ON {p}.oban_jobs (queue, state, scheduled_at, id)""",
    ],
    # lib/oban/migrations/postgres/v06.ex (no longer changes anything)
    6: [],
    # lib/oban/migrations/postgres/v07.ex
    7: [
        """CREATE INDEX oban_jobs_attempted_at_id_index ON {p}.oban_jobs (attempted_at DESC, id)
           WHERE state IN ('completed', 'discarded')""",
    ],
    # lib/oban/migrations/postgres/v08.ex
    8: [
        """ALTER TABLE {p}.oban_jobs ADD COLUMN discarded_at timestamp,
             ADD COLUMN priority integer, ADD COLUMN tags text[]""",
        """ALTER TABLE {p}.oban_jobs ALTER COLUMN priority SET DEFAULT 0,
             ALTER COLUMN tags SET DEFAULT ARRAY[]::text[]""",
        "DROP INDEX {p}.oban_jobs_queue_state_scheduled_at_id_index",
        """CREATE INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
           ON {p}.oban_jobs (state, queue, priority, scheduled_at, id)""",
        """CREATE OR REPLACE FUNCTION {p}.oban_jobs_notify() RETURNS trigger
           LANGUAGE plpgsql AS $$
           BEGIN
             IF NEW.state = 'available' THEN
               PERFORM pg_notify('{e}.oban_insert', json_build_object('queue', NEW.queue)::text);
             END IF;
             RETURN NULL;
           END $$""",
        "DROP TRIGGER oban_notify ON {p}.oban_jobs",
        """CREATE TRIGGER oban_notify AFTER INSERT ON {p}.oban_jobs
           FOR EACH ROW EXECUTE PROCEDURE {p}.oban_jobs_notify()""",
    ],
    # lib/oban/migrations/postgres/v09.ex
    9: [
        """ALTER TABLE {p}.oban_jobs ADD COLUMN meta jsonb DEFAULT '{{}}',
             ADD COLUMN cancelled_at timestamp""",
        "ALTER TYPE {p}.oban_job_state ADD VALUE IF NOT EXISTS 'cancelled'",
    ],
    # lib/oban/migrations/postgres/v10.ex
    10: [
        """ALTER TABLE {p}.oban_jobs ALTER COLUMN args SET DEFAULT '{{}}',
             ALTER COLUMN priority SET NOT NULL""",
        "ALTER TABLE {p}.oban_jobs ADD CONSTRAINT priority_range CHECK (priority BETWEEN 0 AND 3)",
        "ALTER TABLE {p}.oban_jobs ADD CONSTRAINT positive_max_attempts CHECK (max_attempts > 0)",
        """ALTER TABLE {p}.oban_jobs ADD CONSTRAINT attempt_range
           CHECK (attempt BETWEEN 0 AND max_attempts)""",
        "DROP INDEX {p}.oban_jobs_attempted_at_id_index",
        "CREATE INDEX oban_jobs_args_index ON {p}.oban_jobs USING gin (args)",
        "CREATE INDEX oban_jobs_meta_index ON {p}.oban_jobs USING gin (meta)",
    ],
    # lib/oban/migrations/postgres/v11.ex (unlogged, Elixir Oban's default)
    11: [
        """CREATE UNLOGGED TABLE {p}.oban_peers (
             name text PRIMARY KEY,
             node text NOT NULL,
             started_at timestamp NOT NULL,
             expires_at timestamp NOT NULL)""",
    ],
    # lib/oban/migrations/postgres/v12.ex
    12: [
        "ALTER TABLE {p}.oban_jobs DROP CONSTRAINT priority_range",
        """ALTER TABLE {p}.oban_jobs ADD CONSTRAINT non_negative_priority
           CHECK (priority >= 0) NOT VALID""",
        "DROP TRIGGER oban_notify ON {p}.oban_jobs",
        "DROP FUNCTION {p}.oban_jobs_notify()",
    ],
    # lib/oban/migrations/postgres/v13.ex
    13: [
        "CREATE INDEX oban_jobs_state_cancelled_at_index ON {p}.oban_jobs (state, cancelled_at)",
        "CREATE INDEX oban_jobs_state_discarded_at_index ON {p}.oban_jobs (state, discarded_at)",
    ],
    # lib/oban/migrations/postgres/v14.ex
    14: ["ALTER TYPE {p}.oban_job_state ADD VALUE IF NOT EXISTS 'suspended' BEFORE 'scheduled'"],
}


def elixir_statements(schema: str, version: int = ELIXIR_LATEST) -> list[str]:
    """The DDL of Elixir Oban's migrations 1 to ``version`` in ``schema``, with the version
    comment last."""
    if not 1 <= version <= ELIXIR_LATEST:
        raise ValueError(f"Elixir Oban's PostgreSQL migrations run 1 to {ELIXIR_LATEST}")
    p = sql.Identifier(schema).as_string(None)
    e = schema.replace("'", "''")
    steps = [s.format(p=p, e=e) for v in range(1, version + 1) for s in _ELIXIR_UP[v]]
    # lib/oban/migrations/postgres.ex (record_version)
    return [*steps, f"COMMENT ON TABLE {p}.oban_jobs IS '{version}'"]


def install_elixir(dsn: str, schema: str, version: int = ELIXIR_LATEST) -> None:
    """Elixir Oban's schema at migration ``version`` in ``schema``, as ``mix ecto.migrate``
    with ``Oban.Migration.up(version: version, prefix: schema)`` leaves it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        # One statement at a time, each committed: an enum value added by ALTER TYPE is
        # usable only once committed.
        for statement in elixir_statements(schema, version):
            conn.execute(statement)
