"""Test fixtures: Oban's schema in either flavour, written for the tests from the public
sources (not shipped, and not upstream's text):

- ``PY``: the tables, type, indexes and column defaults of oban-py 0.7.0's
  ``oban/queries/install.sql`` (what ``oban.schema.install`` makes);
- ``elixir(version)``: Elixir Oban's ``lib/oban/migrations/postgres/v01.ex`` to
  ``v<version>.ex`` as they leave the schema (``errors`` a ``jsonb[]``, ``oban_peers``
  from v11, ``suspended`` from v14), the version recorded as the comment on ``oban_jobs``
  as ``lib/oban/migrations/postgres.ex`` records it.

Jobs are inserted and worked by ``Oban``-shaped statements of the tests' own
(``insert``, ``fetch``, ``ack``), after oban-py's ``insert_job.sql``, ``fetch_jobs.sql``
and ``ack_job.sql``.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

_PY_STATES = "'available', 'scheduled', 'suspended', 'executing', 'retryable', 'completed', \
'discarded', 'cancelled'"

PY = f"""
CREATE TYPE oban_job_state AS ENUM ({_PY_STATES});
CREATE TABLE oban_jobs (
    id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    state oban_job_state NOT NULL DEFAULT 'available',
    queue text NOT NULL DEFAULT 'default',
    worker text NOT NULL,
    attempt smallint NOT NULL DEFAULT 0,
    max_attempts smallint NOT NULL DEFAULT 20,
    priority smallint NOT NULL DEFAULT 0,
    args jsonb NOT NULL DEFAULT '{{}}',
    meta jsonb NOT NULL DEFAULT '{{}}',
    tags text[] NOT NULL DEFAULT ARRAY[]::text[],
    errors jsonb NOT NULL DEFAULT '[]',
    attempted_by text[] NOT NULL DEFAULT ARRAY[]::text[],
    inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    attempted_at timestamp, cancelled_at timestamp, completed_at timestamp,
    discarded_at timestamp,
    CONSTRAINT attempt_range CHECK (attempt >= 0 AND attempt <= max_attempts),
    CONSTRAINT positive_max_attempts CHECK (max_attempts > 0)
);
CREATE UNLOGGED TABLE oban_leaders (
    name text PRIMARY KEY DEFAULT 'oban', node text NOT NULL,
    elected_at timestamp NOT NULL, expires_at timestamp NOT NULL
);
CREATE UNLOGGED TABLE oban_producers (
    uuid uuid PRIMARY KEY, name text NOT NULL DEFAULT 'oban', node text NOT NULL,
    queue text NOT NULL, meta jsonb NOT NULL DEFAULT '{{}}',
    started_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    updated_at timestamp NOT NULL DEFAULT timezone('UTC', now())
);
CREATE INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
    ON oban_jobs (state, queue, priority, scheduled_at, id);
CREATE INDEX oban_jobs_completed_at_index ON oban_jobs (completed_at) WHERE state = 'completed';
CREATE INDEX oban_jobs_cancelled_at_index ON oban_jobs (cancelled_at) WHERE state = 'cancelled';
CREATE INDEX oban_jobs_discarded_at_index ON oban_jobs (discarded_at) WHERE state = 'discarded';
"""


def elixir(version: int = 14) -> str:
    """Elixir Oban's schema at migration ``version`` (11 or later)."""
    states = ["available", "scheduled", "executing", "retryable", "completed", "discarded",
              "cancelled"]  # fmt: skip
    if version >= 14:
        states.insert(1, "suspended")
    labels = ", ".join(f"'{s}'" for s in states)
    return f"""
CREATE TYPE oban_job_state AS ENUM ({labels});
CREATE TABLE oban_jobs (
    id bigserial PRIMARY KEY,
    state oban_job_state NOT NULL DEFAULT 'available',
    queue text NOT NULL DEFAULT 'default',
    worker text NOT NULL,
    args jsonb NOT NULL DEFAULT '{{}}',
    errors jsonb[] NOT NULL DEFAULT ARRAY[]::jsonb[],
    attempt integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 20,
    inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    attempted_at timestamp,
    completed_at timestamp,
    attempted_by text[],
    discarded_at timestamp,
    priority integer NOT NULL DEFAULT 0,
    tags character varying(255)[] DEFAULT ARRAY[]::character varying[],
    meta jsonb DEFAULT '{{}}',
    cancelled_at timestamp,
    CONSTRAINT attempt_range CHECK (attempt >= 0 AND attempt <= max_attempts),
    CONSTRAINT non_negative_priority CHECK (priority >= 0) NOT VALID
);
CREATE INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
    ON oban_jobs (state, queue, priority, scheduled_at, id);
CREATE INDEX oban_jobs_args_index ON oban_jobs USING gin (args);
CREATE INDEX oban_jobs_meta_index ON oban_jobs USING gin (meta);
CREATE UNLOGGED TABLE oban_peers (
    name text PRIMARY KEY, node text NOT NULL,
    started_at timestamp NOT NULL, expires_at timestamp NOT NULL
);
COMMENT ON TABLE oban_jobs IS '{version}';
"""


def install(conn: psycopg.Connection[Any], schema: str, flavour: str, version: int = 14) -> None:
    """Oban's schema in ``schema`` (which exists), ``flavour`` "oban-py" or "elixir"."""
    conn.execute(f'SET search_path TO "{schema}"')
    conn.execute(PY if flavour == "oban-py" else elixir(version))


def insert(
    conn: psycopg.Connection[Any],
    queue: str,
    n: int = 1,
    worker: str = "app.Worker",
    args: Any = None,
    **columns: Any,
) -> list[int]:
    """``n`` jobs as oban-py's ``insert_job.sql`` inserts them (``columns``: any other
    column's value, written as given); their ids."""
    names = ["queue", "worker", "args", *columns]
    marks = ", ".join(["%s"] * len(names))
    values = [queue, worker, json.dumps(args if args is not None else {"n": 1}),
              *columns.values()]  # fmt: skip
    sql = f"INSERT INTO oban_jobs ({', '.join(names)}) VALUES ({marks}) RETURNING id"
    return [int(conn.execute(sql, values).fetchone()[0]) for _ in range(n)]  # type: ignore[index]


def fetch(
    conn: psycopg.Connection[Any], queue: str, node: str = "web.1", demand: int = 1
) -> list[int]:
    """Claim jobs as oban-py's ``fetch_jobs.sql`` does (executing, attempt + 1)."""
    rows = conn.execute(
        "WITH l AS (SELECT id FROM oban_jobs WHERE state = 'available' AND queue = %s"
        " ORDER BY priority, scheduled_at, id LIMIT %s FOR UPDATE SKIP LOCKED)"
        " UPDATE oban_jobs j SET attempt = j.attempt + 1, attempted_at = timezone('UTC', now()),"
        " attempted_by = ARRAY[%s, 'producer'], state = 'executing' FROM l WHERE j.id = l.id"
        " RETURNING j.id",
        (queue, demand, node),
    ).fetchall()
    return [int(r[0]) for r in rows]


def fail(conn: psycopg.Connection[Any], job_id: int, error: str, discard: bool = False) -> None:
    """An executing job's attempt failed, as oban-py's ``ack_job.sql`` records it: the
    error appended, retryable (or discarded once attempts are spent)."""
    state = "discarded" if discard else "retryable"
    entry = {"attempt": 1, "at": "2026-01-01T00:00:00+00:00", "error": error}
    [kind] = conn.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = 'oban_jobs' AND column_name = 'errors'"
    ).fetchall()
    elixir_errors = kind[0] == "ARRAY"
    append = (
        "errors || ARRAY[%s::jsonb]" if elixir_errors else "errors || jsonb_build_array(%s::jsonb)"
    )
    conn.execute(
        f"UPDATE oban_jobs SET state = %s, errors = {append},"
        " discarded_at = CASE WHEN %s = 'discarded' THEN timezone('UTC', now()) END"
        " WHERE id = %s AND state = 'executing'",
        (state, json.dumps(entry), state, job_id),
    )
