"""The systems qctl operates, and which one a database holds.

Each system is a package here (``qctl.systems.azync``, ``qctl.systems.dbos``) whose
``SYSTEM`` says how to recognise its tables, what it can do, which top-level nouns
(command groups) it has and where its dashboard screens and demo are, as import strings
the shells resolve: the shells (``qctl.cli``, ``qctl.tui``) never import a system. Adding
a system is a new package and one line in ``SYSTEM_PACKAGES``: the root command,
``--system``, detection, ``qctl top`` and ``qctl demo`` read this table.

Nothing here imports a driver, the store or a system's implementation: the root command
consults it on every invocation, ``qctl --help`` included.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

SYSTEM_PACKAGES = (
    "qctl.systems.azync",
    "qctl.systems.dbos",
    "qctl.systems.dispatch",
    "qctl.systems.hopper",
    "qctl.systems.river",
    "qctl.systems.oban",
)
"""Detection order; the first is the default (an empty or new database is azync's)."""


@dataclass(frozen=True)
class Entry:
    """Where a top-level command lives: the root group imports ``module`` only when the
    command runs, so ``qctl --help`` reads the help line here instead."""

    module: str
    attr: str
    """``app`` for a command group (a Typer app), else the command function's name."""
    help: str
    alias: str = ""
    """The hidden singular name of a group (``qctl dag ...``)."""


@dataclass(frozen=True)
class System:
    name: str
    """What ``--system`` and a context's ``system`` say."""
    label: str
    """How messages name it ("DBOS databases have no jobs")."""
    tables: tuple[str, ...]
    """Tables that together mark the system's schema (all of them must exist)."""
    default_schema: str | None
    """PostgreSQL schema of those tables when ``--schema`` names none (``None``: the
    connection's ``current_schema()``)."""
    commands: Mapping[str, Entry]
    """The top-level nouns it has, with the module implementing each."""
    screens: str
    """``module:attribute`` of its dashboard's ``SystemScreens`` (``qctl.tui.base``)."""
    database: str
    """``module:attribute`` of what opens its database for a ``CliContext``:
    ``attribute.open(context, pooled=..., on_lock_wait=...)`` gives the handle its reads
    and actions take (a ``qctl.core.sqldb.SqlDatabase`` subclass opens itself; azync's
    is ``qctl.systems.azync.cli.database:Store``)."""
    takes_detection: bool = False
    """Its opener takes over the connection detection read on (``CliContext.detected``),
    so that a one-shot command opens one connection, not two."""
    demo: str = ""
    """``module:attribute`` of what ``qctl demo`` runs for it: a function taking the
    ``CliContext`` and the demo's options (``no_tui``, ``seconds``, ``speed``, ``reset``,
    ``seed``, ``yes``); empty where it has none. ``qctl demo`` is the shell's command
    (``SYSTEMLESS_COMMANDS``): its ``--system`` picks the system, never detection."""
    demo_embedded: bool = False
    """Its demo runs on a database of its own beside qctl's embedded demo database when
    no ``--dsn`` is given; else it needs ``--dsn``."""
    metrics: str = ""
    """``module:function`` of its collector for ``qctl metrics``: ``function(handle)``
    yields ``prometheus_client`` metric families from the dashboard's cheap reads; empty
    where it has none."""
    values: str = ""
    """``module:function`` giving shell completion the values its database holds:
    ``function(handle, noun, what, prefix)`` (``what``: ``kind``, ``queue`` or ``id`` of
    the noun's items), a short list; empty where it has none."""
    instead: Mapping[str, str] = field(default_factory=dict)
    """For a noun it lacks: what to do instead (``jobs``: "see `qctl workflows`")."""
    preloads: Mapping[str, str] = field(default_factory=dict)
    """Reads ``qctl top`` starts while Textual is imported: pane id → ``module:function``
    (``function(handle)``, importing no Textual), its result that pane's first data
    (``qctl.tui.preload``)."""
    project: str = ""
    """Where the system's own project lives (the man page's SEE ALSO)."""
    dsn_env: str = ""
    """The environment variable the system's own tools read its database from; qctl
    reads it after ``QCTL_DSN`` (``qctl.cli.context``)."""
    verbs: str = ""
    """``module:attribute`` of its operator verbs run by the verb engine: a tuple of
    ``qctl.core.verbs.Verb`` (the contract suite runs each over every selection)."""

    def schema(self, option: str) -> str | None:
        return option or self.default_schema


def choices(having: Callable[[System], object] = bool) -> str:
    """``--system``'s metavar: the registered systems' names (those ``having`` keeps)."""
    return "|".join(s.name for s in systems() if having(s))


def dsn_from(env: Mapping[str, str]) -> str:
    """The DSN a registered system's own variable (``System.dsn_env``) sets in ``env``,
    a SQLAlchemy driver suffix dropped (``postgresql+psycopg://`` is libpq's
    ``postgresql://``)."""
    import re

    url = next((env[s.dsn_env] for s in systems() if s.dsn_env and env.get(s.dsn_env)), "")
    return re.sub(r"^(postgres(?:ql)?|sqlite)\+\w+:", r"\1:", url)


def labels() -> str:
    """The registered systems' labels in prose ("azync, DBOS and dispatch")."""
    names = [s.label for s in systems()]
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


def summary() -> str:
    """What qctl is, for the root help and the man page."""
    return f"Operator console for {labels()} databases"


def schemas() -> str:
    """The default PostgreSQL schema of each system, for ``--schema``'s help."""
    own = [f"{s.default_schema} for {s.label}" for s in systems() if s.default_schema]
    rest = [s.label for s in systems() if not s.default_schema]
    if rest:
        own.append(f"the session's search_path for {' and '.join(rest)}")
    return "; ".join(own)


def load(reference: str) -> Any:
    """The object a ``module:attribute`` string names (importing its module)."""
    module, _, attr = reference.partition(":")
    return getattr(importlib.import_module(module), attr)


@cache
def systems() -> tuple[System, ...]:
    return tuple(importlib.import_module(p).SYSTEM for p in SYSTEM_PACKAGES)


def get(name: str) -> System:
    for system in systems():
        if system.name == name:
            return system
    from qctl_kit.errors import InvalidInput

    known = ", ".join(s.name for s in systems())
    raise InvalidInput(f"unknown system {name!r} (known: {known})")


def all_nouns() -> dict[str, Entry]:
    """Every top-level noun of any system, first system's entry first."""
    nouns: dict[str, Entry] = {}
    for system in systems():
        for name, entry in system.commands.items():
            nouns.setdefault(name, entry)
    return nouns


def all_aliases() -> dict[str, str]:
    """Singular alias -> noun, over every system."""
    return {e.alias: name for name, e in all_nouns().items() if e.alias}


def lacking(system: System, noun: str) -> str:
    """The usage error for a noun ``system`` does not have: what to use instead where
    there is one, and the nouns it has."""
    hint = system.instead.get(noun)
    nouns = ", ".join(system.commands)
    return (
        f"{system.label} databases have no {noun}"
        + (f"; {hint}" if hint else "")
        + (f" (its nouns: {nouns})")
    )


def detect(dsn: str | None, schema: str = "", conn: Any = None) -> System:
    """The system whose tables the database holds, with one catalog query (on ``conn``,
    an open psycopg connection to ``dsn``, when given).

    No DSN (qctl's embedded database) and a SQLite file that does not exist yet are
    azync's. A database holding no system's tables is also azync's (its commands say
    "run `qctl db migrate`"). One holding several is ambiguous: ``--system`` settles it.
    """
    candidates = systems()
    if not dsn:
        return candidates[0]
    present = holding(dsn, schema, conn)
    if len(present) > 1:
        from qctl_kit.errors import InvalidInput

        names = " and ".join(s.label for s in present)
        raise InvalidInput(
            f"the database holds both {names} tables: pass --system "
            + "|".join(s.name for s in present)
        )
    return present[0] if present else candidates[0]


def holding(dsn: str, schema: str = "", conn: Any = None) -> list[System]:
    """The systems whose tables the database ``dsn`` holds (none for a new one)."""
    from qctl_kit.dsn import is_postgres, sqlite_path

    candidates = systems()
    if is_postgres(dsn):
        found = _postgres_tables(dsn, schema, candidates, conn)
    else:
        found = _sqlite_tables(sqlite_path(dsn), candidates)
    return [
        s
        for s in candidates
        if all(((s.schema(schema) if is_postgres(dsn) else None), t) in found for t in s.tables)
    ]


def _postgres_tables(
    dsn: str, schema: str, candidates: tuple[System, ...], conn: Any
) -> set[tuple[str | None, str]]:
    import psycopg
    from psycopg.rows import tuple_row

    from qctl_kit.dsn import connect_timeout, postgres_params
    from qctl_kit.postgres.connect import mapped_errors

    pairs = [(s.schema(schema), t) for s in candidates for t in s.tables]
    values = ", ".join(["(%s::text, %s::text)"] * len(pairs))
    # A NULL schema stands for the connection's current_schema() (azync's default).
    sql = (
        f"SELECT w.s, c.relname FROM (VALUES {values}) AS w(s, t)"
        " JOIN pg_namespace n ON n.nspname = coalesce(w.s, current_schema())"
        " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = w.t"
        " AND c.relkind IN ('r', 'p')"
    )
    params = [v for pair in pairs for v in pair]
    if conn is not None:
        with mapped_errors(dsn), conn.cursor(row_factory=tuple_row) as cur:
            return {(s, t) for s, t in cur.execute(sql, params).fetchall()}
    timeout = connect_timeout(postgres_params(dsn))  # the DSN's own, else qctl's default
    with mapped_errors(dsn), psycopg.connect(dsn, autocommit=True, **timeout) as own:
        return {(s, t) for s, t in own.execute(sql, params).fetchall()}


def _sqlite_tables(path: str, candidates: tuple[System, ...]) -> set[tuple[str | None, str]]:
    import os
    import sqlite3

    from qctl_kit.sqlite.connect import read_only_uri, unwritable

    if path == ":memory:" or not os.path.exists(path):
        return set()
    tables = sorted({t for s in candidates for t in s.tables})
    marks = ", ".join("?" * len(tables))
    try:
        # Read-only and never creating the file: detection must not write.
        conn = sqlite3.connect(read_only_uri(path, unwritable(path)), uri=True)
        try:
            rows = conn.execute(
                f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({marks})",
                tables,
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return set()  # not a SQLite database: the store says so when it opens it
    return {(None, name) for (name,) in rows}
