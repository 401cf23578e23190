"""Mapping of SQLite rows (``sqlite3.Row``) to the contract's dataclasses.

One place for every capability module (jobs, events, admin, maintenance, DAGs,
workflows): select ``JOB_COLUMNS`` (or ``job_columns("j")`` of the shared
``qctl_store.columns`` under an alias) and turn rows into dataclasses with ``ROWS``, the
shared ``records.RowMapper``. SQLite hands back plain values, so this module gives it
the decoders of what PostgreSQL's driver decodes itself: INTEGER µs instants -> aware
UTC datetimes, uuid TEXT -> ``uuid.UUID``, JSON TEXT -> Python values.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import cast

from qctl_kit import decode, errors
from qctl_store import validate
from qctl_store.columns import job_columns
from qctl_store.dialect import Dialect
from qctl_store.records import RowMapper
from qctl_store.sqlite.base import (
    JSONB_CONTAINS,
    US,
    SqliteBase,
    Tx,
    mapped_errors,
    now_us,
    parse_uuid,
    td_us,
    to_us,
)

JOB_COLUMNS = job_columns()
"""``SELECT {JOB_COLUMNS} FROM azync_jobs``: every column ``jobs_from_rows`` reads."""


def dt(value: int | None) -> datetime | None:
    """An INTEGER µs instant column as an aware UTC datetime (NULL stays None); a value
    out of ``datetime``'s range as a ``decode.FarInstant`` of its text, which views show
    and sort (typed as the datetime it stands for)."""
    return cast(datetime | None, decode.from_epoch(value, US))


def instant_arg(value: datetime | None) -> int | str | None:
    """An instant argument as the column holds it: µs, or a ``decode.FarInstant`` from a
    read (a listing's next page starting after it) as it is stored there."""
    if isinstance(value, decode.FarInstant):
        return int(value) if value.lstrip("-").isdigit() else str(value)
    return to_us(value)


def _day(value: str) -> datetime:
    """A ``YYYY-MM-DD`` stats day (``base.utc_day``)."""
    return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)


ROWS = RowMapper(
    decode_uuid=parse_uuid, decode_instant=dt, decode_json=decode.json_value, decode_day=_day
)

jobs_from_rows = ROWS.jobs
meta = ROWS.meta
"""A JSON TEXT meta column as a string map (NULL -> {})."""


def arg_id(value: uuid.UUID, what: str = "id") -> str:
    """A uuid argument as the canonical text the tables store; anything else is refused."""
    return str(validate.uuid_arg(value, what))


@contextlib.contextmanager
def caller_tx(store: SqliteBase, conn: sqlite3.Connection) -> Iterator[Tx]:
    """A ``Tx`` over the caller's connection inside the caller's open transaction (the
    ``*_tx`` methods): named-column rows while we use it, the caller's row factory after."""
    if store.config.read_only:
        raise errors.ReadOnly("the store is read-only; the write was refused")
    if not conn.in_transaction:
        raise errors.InvalidInput("the connection must be inside a transaction (BEGIN first)")
    saved = conn.row_factory
    conn.row_factory = sqlite3.Row
    try:
        with mapped_errors():
            yield Tx(conn, now_us())
    finally:
        conn.row_factory = saved


DIALECT = Dialect(
    placeholder=":{}",
    no_limit=-1,
    arg_id=arg_id,
    instant=instant_arg,
    # Every requested meta pair is present with the same value.
    meta_filter=(
        "NOT EXISTS (SELECT 1 FROM json_each(:meta) f WHERE f.value IS NOT "
        "(SELECT m.value FROM json_each(azync_jobs.meta) m WHERE m.key = f.key))"
    ),
    error_filter="instr(lower(COALESCE(last_error, '')), lower(:error)) > 0",
    text_filter=(
        "(instr(lower(kind), lower(:text)) > 0"
        " OR instr(lower(COALESCE(last_error, '')), lower(:text)) > 0"
        " OR instr(replace(id, '-', ''), :id_text) > 0)"
    ),
    contains_arg=str,
    payload_filter=f"{JSONB_CONTAINS}(payload, :payload)",
    # The backend clock is the host clock.
    older_than_filter="enqueued_at < :older_than",
    older_than_arg=lambda age: now_us() - td_us(age),
    array=json.dumps,
)
"""sqlite3's named parameters; JSON TEXT columns, INTEGER µs instants."""
