"""Named queries kept in ``.sql`` files, one file per capability and backend.

The convention, the same on both backends:

- A file holds blocks introduced by ``-- name: <query_name>``; everything up to the next
  marker is the statement (a trailing ``;`` is dropped). Comment lines before the first
  marker describe the file.
- The first comment line after a marker is the query's one-line description, ending in
  a period; any further comment lines explain why the statement is written as it is.
  Whole-line comments are not sent to the database.
- ``{token}`` marks text filled in before the statement runs, from one vocabulary:

  - column lists, filled when the file is loaded: ``{jobs}`` (every job column a
    ``types.Job`` is read from), ``{jobs_j}`` (the same under alias ``j``), ``{event_e}``
    (the ledger columns of alias ``e`` renamed ``ev_*``, riding along a job row) and
    ``{event_admin}`` (an admin event row's ledger columns of alias ``e``);
  - statement text shared by the files of one package, filled when a file is loaded:
    ``{name}`` where ``name`` is a block of that package's ``fragments.sql`` (one text
    several queries run; the block's comment says what it needs around it);
  - fragments built in code, filled per call by ``fill``: ``{where}`` and ``{order}``
    (from the fixed fragments of ``listing``), ``{table}`` (a table name from a fixed
    set, or the quoted version table), ``{schema}`` (the quoted schema), ``{claim}`` and
    ``{input}`` (each one of two named queries of the enqueue statement,
    ``postgres/queries/jobs.sql``), ``{paused}``, ``{cancelled}``, ``{uncertain}`` and
    ``{skipped}`` (TRUE or FALSE: whether that state's console index exists), ``{limit}``
    (the lease's validated int, written in so PostgreSQL keeps the statement's generic
    plan, ``postgres/queries/jobs.sql``).

  A token outside that vocabulary is an error when the file is loaded; JSON literals such
  as ``'{}'`` are not tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache, lru_cache
from importlib import resources

from qctl_store.columns import event_admin_columns, event_columns, job_columns

_MARKER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_TOKEN = re.compile(r"\{([a-z_]+)\}(\.?)")

COLUMN_TOKENS = {
    "jobs": job_columns(),
    "jobs_j": job_columns("j"),
    "event_e": event_columns("e"),
    "event_admin": event_admin_columns("e"),
}
"""Tokens filled when a file is loaded."""

FRAGMENT_TOKENS = frozenset(
    {"where", "order", "table", "schema", "claim", "input", "columns", "limit"}
    | {"paused", "cancelled", "uncertain", "skipped"}
)
"""Tokens filled per call by ``fill``."""

SHARED_FILE = "fragments.sql"
"""A package's file of statement text its other files name as tokens."""


class Queries(dict[str, str]):
    """Statement text by query name, with each query's one-line description."""

    def __init__(self) -> None:
        super().__init__()
        self.descriptions: dict[str, str] = {}

    def __getattr__(self, name: str) -> str:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def parse(text: str, origin: str = "<sql>", shared: Mapping[str, str] | None = None) -> Queries:
    """The named queries of one file's text, column tokens and ``shared`` blocks (by
    name, from the package's ``fragments.sql``) filled in."""
    parts = _MARKER.split(text)
    queries = Queries()
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"{origin}: query {name!r} defined twice")
        lines = body.strip().splitlines()
        if lines and lines[0].startswith("--"):
            queries.descriptions[name] = lines[0].removeprefix("--").strip()
        sql = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
        queries[name] = _fill_columns(sql.strip().rstrip(";"), f"{origin}: {name}", shared or {})
    return queries


def _fill_columns(sql: str, origin: str, shared: Mapping[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        token = m.group(1)
        if token in shared:
            return shared[token] + m.group(2)
        if token in COLUMN_TOKENS:
            return COLUMN_TOKENS[token] + m.group(2)
        if token in FRAGMENT_TOKENS:
            return m.group(0)
        raise ValueError(f"{origin}: unknown token {{{token}}}")

    return _TOKEN.sub(one, sql)


@cache
def load(package: str, filename: str) -> Queries:
    files = resources.files(package)
    shared: Queries | None = None
    if filename != SHARED_FILE and files.joinpath(SHARED_FILE).is_file():
        shared = load(package, SHARED_FILE)
    text = files.joinpath(filename).read_text(encoding="utf-8")
    queries = parse(text, f"{package}/{filename}", shared)
    if filename == SHARED_FILE and (
        taken := set(queries) & (COLUMN_TOKENS.keys() | FRAGMENT_TOKENS)
    ):
        raise ValueError(f"{package}/{filename}: {sorted(taken)} are tokens already")
    return queries


def fill(sql: str, **fragments: str) -> str:
    """``sql`` with its fragment tokens replaced by ``fragments``; each token must be
    given and each fragment used. An empty fragment takes a ``.`` right after its token
    with it, so ``{schema}.azync_jobs`` with no schema is the unqualified name."""
    return _fill(sql, tuple(sorted(fragments.items())))


@lru_cache(maxsize=512)
def _fill(sql: str, fragments: tuple[tuple[str, str], ...]) -> str:
    given = dict(fragments)
    used: set[str] = set()

    def one(m: re.Match[str]) -> str:
        token = m.group(1)
        if token not in given:
            raise ValueError(f"no fragment for {{{token}}} in {sql[:60]!r}")
        used.add(token)
        value = given[token]
        return value + m.group(2) if value else ""

    out = _TOKEN.sub(one, sql)
    if unused := set(given) - used:
        raise ValueError(f"fragments {sorted(unused)} have no token in {sql[:60]!r}")
    return out


def identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier (as psycopg's ``sql.Identifier`` writes it)."""
    return '"' + name.replace('"', '""') + '"'
