"""Connecting to PostgreSQL for any system: the session's settings (search_path,
application name, timeouts, keepalives, read-only), the decoding adapters, and psycopg's
failures as the toolkit's errors."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
from psycopg import errors as pgerr
from psycopg.adapt import AdaptersMap
from psycopg.rows import dict_row

from qctl_kit import decode, errors
from qctl_kit.config import Session
from qctl_kit.dsn import (
    connect_timeout,
    own_options,
    postgres_params,
    redact,
    session_options,
    timeout_settings,
)
from qctl_kit.postgres.watch import WatchedConnection

Row = dict[str, Any]
Cursor = psycopg.Cursor[Row]
Connection = psycopg.Connection[Row]


def timeout_error(
    exc: psycopg.Error, statement: timedelta | None = None, lock: timedelta | None = None
) -> errors.Timeout | None:
    """``errors.Timeout`` for a statement PostgreSQL cancelled at the session's
    ``lock_timeout`` (55P03) or ``statement_timeout`` (57014), naming the limit when it is
    known (``statement``, ``lock``: the ones qctl set); None for any other failure (a
    cancel asked by a user or an administrator is no timeout)."""
    if isinstance(exc, pgerr.LockNotAvailable):
        holder = getattr(exc, "qctl_holder", None)  # SessionWatch.answered's
        return errors.Timeout("lock_timeout", lock, holder.line() if holder else "")
    if isinstance(exc, pgerr.QueryCanceled) and "statement timeout" in str(exc):
        return errors.Timeout("statement_timeout", statement)
    return None


@contextlib.contextmanager
def mapped_errors(dsn: str, session: Session | None = None, tables: str = "") -> Iterator[None]:
    """Translate psycopg failures into the toolkit's errors, never leaking the DSN; a
    missing table is ``SchemaNotMigrated`` naming whose ``tables`` (azync's, ...)."""
    try:
        yield
    except (pgerr.LockNotAvailable, pgerr.QueryCanceled) as exc:
        limits = (session.statement_timeout, session.lock_timeout) if session else (None, None)
        raise timeout_error(exc, *limits) or _unavailable(dsn, exc) from None
    except UnicodeEncodeError as exc:
        # A text argument the checks at the API edge do not cover: the driver refused it
        # before the statement reached the database.
        raise errors.not_unicode(exc) from None
    except pgerr.UndefinedTable as exc:
        whose = f"{tables} tables" if tables else "tables"
        raise errors.SchemaNotMigrated(
            f"{whose} are missing ({exc.diag.message_primary}); run `qctl db migrate`"
        ) from None
    except pgerr.UniqueViolation as exc:
        raise errors.UniqueViolation(str(exc.diag.message_primary or exc)) from None
    except pgerr.ReadOnlySqlTransaction:
        raise errors.ReadOnly("the database is read-only") from None
    except (pgerr.SerializationFailure, pgerr.DeadlockDetected) as exc:
        raise errors.Conflict(str(exc.diag.message_primary or exc)) from None
    except (psycopg.DataError, pgerr.ProgramLimitExceeded) as exc:
        # A value PostgreSQL cannot hold (a NUL in text or JSON, a number or instant out
        # of range, a too deep document): bad input, and the statement wrote nothing.
        text = _first_line(str(exc.diag.message_primary or exc))
        detail = exc.diag.message_detail
        raise errors.InvalidInput(f"{text} ({_first_line(detail)})" if detail else text) from None
    except pgerr.DiskFull as exc:
        raise errors.StorageFull(
            f"PostgreSQL at {redact(dsn)}: {_first_line(str(exc.diag.message_primary or exc))}"
            "; the statement was rolled back: free space on the server's disk, then run it again"
        ) from None
    except psycopg.OperationalError as exc:
        reason = _first_line(redact(str(exc)))
        bad = _BAD_PARAMETER.search(reason)
        if bad:  # libpq refused a value of the DSN itself
            raise errors.InvalidInput(f"malformed PostgreSQL DSN {redact(dsn)}: {bad[0]}") from None
        raise _unavailable(dsn, exc) from None


SCHEMA_ACCESS = (
    "SELECT has_schema_privilege(oid, 'USAGE') AS usable, current_user AS role"
    " FROM pg_namespace WHERE nspname = %s"
)
"""Whether this session's role may use a schema (no row: there is no such schema)."""


SCHEMAS_HOLDING = (
    "SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE c.relname = %s AND c.relkind IN ('r', 'p') ORDER BY 1"
)
"""The schemas that hold a table of this name (a system's marker table)."""

SCHEMAS_SHOWN = 8


def no_such_schema(schema: str, holders: list[str], system: str) -> str:
    """``schema "X" does not exist``, with the schemas ``holders`` that hold the
    ``system``'s tables, the closest to a typo of ``X`` first, so that a mistyped
    ``--schema`` is not taken for a new one."""
    import difflib

    text = f'schema "{schema}" does not exist'
    if not holders:
        return f"{text} (no schema of this database holds {system}'s tables)"
    close = difflib.get_close_matches(schema, holders, n=3)
    listed = close + [h for h in holders if h not in close]
    more = len(listed) - SCHEMAS_SHOWN
    shown = ", ".join(f'"{h}"' for h in listed[:SCHEMAS_SHOWN]) + (
        f" and {more} more" if more > 0 else ""
    )
    return (
        text
        + (f'; did you mean "{close[0]}"?' if close else ";")
        + f" {system}'s tables are in {shown}"
    )


def usage_refused(schema: str, role: str) -> errors.Unavailable:
    """A schema whose tables this role cannot see: not missing, not unmigrated."""
    return errors.Unavailable(
        f'role "{role}" may not use schema "{schema}" (no USAGE privilege); '
        f'ask for GRANT USAGE ON SCHEMA "{schema}" TO "{role}"'
    )


def _unavailable(dsn: str, exc: psycopg.Error) -> errors.Unavailable:
    reason = _first_line(redact(str(exc)))
    return errors.Unavailable(f"PostgreSQL at {redact(dsn)} is unavailable: {reason}")


# libpq's wording for a DSN parameter it cannot use ("invalid sslmode value: "bogus"",
# "invalid port number: "99999"", a service no service file defines): the DSN is wrong,
# the server was never asked.
_BAD_PARAMETER = re.compile(
    r"invalid [\w ]+ (?:value|number|specification)[^\n]*"
    r'|definition of service "[^"\n]*" not found|service file "[^"\n]*" not found'
)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "connection failed"


ADAPTERS = AdaptersMap(psycopg.adapters)
"""psycopg's adapters with json, jsonb and the timestamps decoded by ``decode`` (any
depth, no integer too long, instants out of ``datetime``'s range kept as text)."""
decode.register_postgres(ADAPTERS)


KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
"""TCP keepalives unless the DSN sets its own: a peer gone without a word (a host down, a
network cut) fails a waiting statement within about 25 s instead of the system's two
hours. A paused server still answers them (its kernel does): ``unanswered_after``."""


def connect_kwargs(dsn: str, session: Session) -> dict[str, Any]:
    """Session settings every connection of a session on ``dsn`` uses (azync's store's
    dedicated listener and leader connections included): the schema's search_path, the
    application name, the timeouts configured and, when read-only, a read-only session;
    and ``ADAPTERS``."""
    params = postgres_params(dsn)
    settings = timeout_settings(session.statement_timeout, session.lock_timeout)
    if session.schema:
        settings["search_path"] = session.schema
    if session.read_only:
        settings["default_transaction_read_only"] = "on"
    kw: dict[str, Any] = {
        "application_name": session.application_name,
        "context": ADAPTERS,
        **connect_timeout(params),
        **{k: v for k, v in KEEPALIVES.items() if k not in params},
    }
    options = session_options(own_options(params), settings)
    if options:
        kw["options"] = options  # replaces the DSN's and PGOPTIONS, so it carries those first
    return kw


def open_connection(dsn: str, session: Session) -> Connection:
    """One autocommit connection of a session, watched (``watch.WatchedConnection``): a
    system's session, or the connection a caller reads on before azync's store exists
    and then hands it over (``Session.connection``): the console's system detection, so
    that a one-shot command opens one connection, not two."""
    with mapped_errors(dsn, session):
        return WatchedConnection.connect(
            dsn, autocommit=True, row_factory=dict_row, **connect_kwargs(dsn, session)
        )
