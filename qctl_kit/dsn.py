"""DSN parsing and redaction shared by every system's database and the console."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from qctl_kit.errors import InvalidInput

_PASSWORD_KV = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S+)", re.IGNORECASE)
_URL_SCHEMES = ("postgresql://", "postgres://")
_URL_IN_TEXT = re.compile(r"postgres(?:ql)?://\S+", re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"')
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")

DEFAULT_CONNECT_TIMEOUT = 5
"""Seconds a connection attempt may take unless the DSN (or ``PGCONNECT_TIMEOUT``) says."""


def _redact_url(dsn: str) -> str:
    """``scheme://user:***@rest``. The userinfo ends at the last ``@`` before the query
    (or the last one at all when the query holds the only ones), so a ``/``, ``@``, ``:``
    or ``%`` typed into a password is hidden with it, whatever libpq makes of it."""
    scheme, _, rest = dsn.partition("://")
    head = rest.split("?", 1)[0]
    at = head.rfind("@") if "@" in head else rest.rfind("@")
    if at < 0:
        return dsn
    colon = rest.find(":", 0, at)
    if colon < 0:
        return dsn
    return f"{scheme}://{rest[:colon]}:***{rest[at:]}"


def redact(text: str) -> str:
    """``text`` with every password of a DSN in it replaced by ``***``: safe to print or
    log. Works on a DSN and on a message or traceback that quotes one."""
    if text.startswith(_URL_SCHEMES):  # a DSN itself: even a raw space stays hidden
        text = _redact_url(text)
    else:
        text = _URL_IN_TEXT.sub(lambda m: _redact_url(m.group(0)), text)
    return _PASSWORD_KV.sub(r"\1***", text)


def is_postgres(dsn: str) -> bool:
    return dsn.startswith(_URL_SCHEMES) or ("=" in dsn and not dsn.startswith("sqlite:"))


def postgres_params(dsn: str) -> dict[str, str]:
    """The connection parameters of a PostgreSQL DSN, or ``InvalidInput`` with a reason
    that never quotes the DSN (libpq's own messages echo it, password and all).

    A URL whose password holds a raw ``/``, ``@`` or a stray ``%`` is refused: libpq
    would read part of the password as the host or port."""
    if dsn.startswith(_URL_SCHEMES):
        rest = dsn.split("://", 1)[1].split("?", 1)[0]
        netloc, _, path = rest.partition("/")
        if netloc.count("@") > 1 or "@" in path or _BAD_PERCENT.search(rest):
            raise InvalidInput(
                f"malformed PostgreSQL DSN {redact(dsn)}: percent-encode a '/', '@' or '%' "
                "in the user name or password (%2F, %40, %25)"
            )
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(dsn)
    except ProgrammingError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "cannot parse"
        reason = re.split(r" in (?:URI|connection info string)", reason)[0]
        # A quoted piece of the DSN is shown only where the redacted DSN shows it too.
        shown = redact(dsn)
        reason = _QUOTED.sub(lambda m: m[0] if m[0][1:-1] in shown else "…", reason)
        raise InvalidInput(f"malformed PostgreSQL DSN {shown}: {reason}") from None
    checked = {k: str(v) for k, v in params.items() if v is not None}
    # libpq takes a port that is no number for a service name and fails to resolve the
    # host ("unavailable"), though the DSN itself is wrong.
    for port in checked.get("port", "").split(","):
        if port.strip() and not port.strip().isdigit():
            raise InvalidInput(f'malformed PostgreSQL DSN {redact(dsn)}: invalid port "{port}"')
    return checked


def check_dsn(dsn: str) -> None:
    """``InvalidInput`` for a DSN qctl cannot open: a scheme other than PostgreSQL's or
    SQLite's (anything else would be taken for an SQLite file path), or a malformed
    PostgreSQL DSN (``postgres_params``). The server is not asked."""
    scheme, sep, _ = dsn.partition("://")
    if sep and scheme not in ("postgresql", "postgres", "sqlite"):
        raise InvalidInput(
            f"unsupported DSN scheme {scheme!r}: use postgresql://... or sqlite:///path"
        )
    if is_postgres(dsn):
        postgres_params(dsn)


def with_password(dsn: str, password: str) -> str:
    """The PostgreSQL ``dsn`` with ``password`` added, for a password given apart from
    the DSN (so not on a command line): a URL gets it as its ``password`` query
    parameter, percent-encoded (libpq takes any connection keyword there, with or
    without a user name); a ``key=value`` string as one more quoted pair."""
    if not is_postgres(dsn):
        raise InvalidInput("a password is for a PostgreSQL DSN; an SQLite file has none")
    if "password" in postgres_params(dsn):
        raise InvalidInput(f"the DSN {redact(dsn)} already holds a password: give it once")
    if not password:
        raise InvalidInput("the password is empty")
    if dsn.startswith(_URL_SCHEMES):
        from urllib.parse import quote

        return f"{dsn}{'&' if '?' in dsn else '?'}password={quote(password, safe='')}"
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    return f"{dsn} password='{quoted}'"


def own_options(params: dict[str, str]) -> str:
    """The libpq ``options`` a connection on the DSN ``params`` would send by itself: the
    DSN's ``options=``, else ``PGOPTIONS`` (libpq reads it only when no ``options`` is
    passed, so a connection that adds its own must carry these first)."""
    return params.get("options", os.environ.get("PGOPTIONS", ""))


def options_set(options: str, name: str) -> bool:
    """Whether libpq ``options`` set the server setting ``name`` (``-c name=value``,
    ``-cname=value`` or ``--name=value``)."""
    return bool(re.search(rf"(?:-c\s*|--){re.escape(name)}\s*=", options, re.IGNORECASE))


def timeout_settings(statement: timedelta | None, lock: timedelta | None) -> dict[str, str]:
    """``statement_timeout`` and ``lock_timeout`` in milliseconds for the ones given (0
    turns a limit off, as in PostgreSQL); None leaves the session's own."""
    given = {"statement_timeout": statement, "lock_timeout": lock}
    return {
        name: str(max(0, round(value.total_seconds() * 1000)))
        for name, value in given.items()
        if value is not None
    }


def session_options(dsn_options: str, settings: dict[str, str]) -> str:
    """libpq ``options``: the DSN's own first, then ``-c name=value`` for ``settings``
    (qctl's, which win where both set one)."""
    ours = [f"-c {name}={value}" for name, value in settings.items()]
    return " ".join([dsn_options.strip(), *ours] if dsn_options.strip() else ours)


def connect_timeout(params: dict[str, str]) -> dict[str, Any]:
    """``{"connect_timeout": 5}`` unless the DSN or the environment sets one: a server
    that accepts TCP and never answers must not hang a command."""
    own = params.get("connect_timeout", os.environ.get("PGCONNECT_TIMEOUT", ""))
    if own:
        try:
            int(own)
        except ValueError:
            raise InvalidInput(f"connect_timeout {own!r} is not a number of seconds") from None
        return {}
    return {"connect_timeout": DEFAULT_CONNECT_TIMEOUT}


def sqlite_path(dsn: str) -> str:
    """``sqlite:///abs/path`` (``sqlite:////abs/path`` too), ``sqlite://rel/path``,
    ``sqlite::memory:`` or a plain file path."""
    if dsn.startswith("sqlite://"):
        path = dsn[len("sqlite://") :]
        return "/" + path.lstrip("/") if path.startswith("/") else path
    if dsn.startswith("sqlite:"):
        return dsn[len("sqlite:") :]
    return dsn


def default_database_path() -> Path:
    """The embedded default database: ``$XDG_DATA_HOME/qctl/qctl.db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "qctl" / "qctl.db"
