"""Jobs written as Oban writes them, for tests that need rows in a given state without
running a node: ``insert``, ``fetch`` and ``fail`` follow oban-py 0.7.0's
``insert_job.sql``, ``fetch_jobs.sql`` and ``ack_job.sql`` (on either flavour's schema,
``tests/oban/schemas.py``)."""

from __future__ import annotations

import json
from typing import Any

import psycopg


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
