"""Mapping of PostgreSQL rows (``dict_row``) to the contract's dataclasses.

One place for every capability module (jobs, events, admin, maintenance, DAGs,
workflows): select ``JOB_COLUMNS`` (or ``job_columns("j")`` of the shared
``qctl_store.columns`` under an alias) and turn rows into dataclasses with ``ROWS``, the
shared ``records.RowMapper``. psycopg already decodes jsonb and uuid; what is left here
is instants normalised to UTC and stats days as midnight UTC. The arguments'
helpers every module binds with (``arg_id``, ``caller_tx``) live here as on SQLite.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any, cast

import psycopg
from psycopg import pq
from psycopg.rows import RowMaker, dict_row

from qctl_kit.errors import InvalidInput
from qctl_kit.postgres.connect import Cursor
from qctl_store import validate
from qctl_store.columns import job_columns
from qctl_store.dialect import Dialect
from qctl_store.postgres.base import PgBase, azync_errors
from qctl_store.records import RowMapper
from qctl_store.types import Job

JOB_COLUMNS = job_columns()
"""``SELECT {JOB_COLUMNS} FROM azync_jobs``: every column ``fetch_jobs`` reads."""


def utc(value: datetime | None) -> datetime | None:
    """A timestamptz in UTC: psycopg returns it in the session's TimeZone, which is
    the server's default (left alone so CURRENT_DATE stats days match azync's). One out
    of ``datetime``'s range is the ``decode.FarInstant`` psycopg's loader made."""
    return value.astimezone(UTC) if isinstance(value, datetime) else value


def _day(value: date) -> datetime:
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def _as_is(value: Any) -> Any:
    return value


ROWS = RowMapper(decode_uuid=_as_is, decode_instant=utc, decode_json=_as_is, decode_day=_day)
"""psycopg hands back ``uuid.UUID`` and decoded jsonb already; instants come in the
session's time zone and stats days as ``date``."""


def _job_row(cursor: psycopg.Cursor[Any]) -> RowMaker[Job]:
    """A psycopg row factory: each row a ``Job``, read by position with the reader
    ``ROWS`` compiles once per column list (no dict built a row)."""
    # The result's names, not ``cursor.description``: that builds a Column object for
    # each of the ~40 columns (160 us a 50-job lease under cProfile).
    result = cursor.pgresult
    assert result is not None
    names = tuple((result.fname(i) or b"").decode() for i in range(result.nfields))
    return ROWS.job_reader(names)


def fetch_jobs(cur: Cursor) -> list[Job]:
    """The rows of ``cur``'s result, which holds ``JOB_COLUMNS`` (and maybe the ``ev_``
    event columns), as jobs; the cursor reads dicts again afterwards."""
    jobs = cast("psycopg.Cursor[Job]", cur)
    jobs.row_factory = _job_row
    try:
        return jobs.fetchall()
    finally:
        cur.row_factory = dict_row


arg_id = validate.uuid_arg
"""psycopg binds ``uuid.UUID`` as it is: the argument only needs checking."""


@contextlib.contextmanager
def caller_cursor(store: PgBase, conn: psycopg.Connection[Any]) -> Iterator[Cursor]:
    """A dict-row cursor on the caller's connection, inside its open transaction, for
    statements whose tables are schema-qualified (``PgBase.qualified``)."""
    store._check_writable()
    if conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE:
        raise InvalidInput("the connection must be inside a transaction (BEGIN first)")
    with azync_errors(store.dsn, store.config), conn.cursor(row_factory=dict_row) as cur:
        yield cur


@contextlib.contextmanager
def caller_tx(store: PgBase, conn: psycopg.Connection[Any]) -> Iterator[Cursor]:
    """``caller_cursor`` with the store's schema as search_path until the block ends, for
    unqualified statements; the caller's setting is then restored, so its session is
    left as it was."""
    with caller_cursor(store, conn) as cur:
        if not store.schema:
            yield cur
            return
        cur.execute("SELECT current_setting('search_path') AS path")
        row = cur.fetchone()
        assert row is not None
        cur.execute("SELECT set_config('search_path', %s, true)", (store.schema,))
        try:
            yield cur
        finally:
            if conn.info.transaction_status == pq.TransactionStatus.INTRANS:
                cur.execute("SELECT set_config('search_path', %s, true)", (row["path"],))


DIALECT = Dialect(
    placeholder="%({})s",
    no_limit=None,
    arg_id=arg_id,
    instant=_as_is,
    meta_filter="meta @> %(meta)s::jsonb",
    error_filter="last_error ILIKE %(error)s",
    text_filter=(
        "(kind ILIKE %(text)s OR last_error ILIKE %(text)s"
        " OR replace(id::text, '-', '') LIKE %(id_text)s)"
    ),
    contains_arg=lambda text: "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%",
    payload_filter="payload @> %(payload)s::jsonb",
    older_than_filter="enqueued_at < now() - make_interval(secs => %(older_than)s)",
    older_than_arg=timedelta.total_seconds,
    array=list,
)
"""psycopg's pyformat parameters; jsonb containment for meta, an escaped ILIKE for errors."""
