"""Named queries kept in ``.sql`` files, one file per capability and backend.

The convention, the same on both backends:

- A file holds blocks introduced by ``-- name: <query_name>``; everything up to the next
  marker is the statement (a trailing ``;`` is dropped). Comment lines before the first
  marker describe the file.
- The first comment line after a marker is the query's one-line description, ending in
  a period; any further comment lines explain why the statement is written as it is.
  Whole-line comments are not sent to the database.
- ``{token}`` marks text filled in before the statement runs, from one vocabulary:

  - statement text shared by the files of one package, filled when a file is loaded:
    ``{name}`` where ``name`` is a block of that package's ``fragments.sql`` (one text
    several queries run; the block's comment says what it needs around it);
  - fragments built in code, filled per call by ``fill``: ``{where}``, ``{order}``,
    ``{table}`` (a table name from a fixed set, or a quoted table), ``{schema}`` (the
    quoted schema), ``{columns}`` and ``{limit}`` (a validated int, written in so
    PostgreSQL keeps the statement's generic plan);
  - a system's own ``Vocabulary``, given to ``load``: column lists filled when the file is
    loaded, and further fragments filled per call (azync's, ``qctl_store.columns.AZYNC_SQL``).

  A token outside that vocabulary is an error when the file is loaded; JSON literals such
  as ``'{}'`` are not tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources

_MARKER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_TOKEN = re.compile(r"\{([a-z_]+)\}(\.?)")

FRAGMENT_TOKENS = frozenset({"where", "order", "table", "schema", "columns", "limit"})
"""Tokens filled per call by ``fill``, in every system's files."""


@dataclass(frozen=True)
class Vocabulary:
    """A system's own tokens: ``columns`` (name, text) filled when a file is loaded,
    ``fragments`` filled per call by ``fill`` besides ``FRAGMENT_TOKENS``."""

    columns: tuple[tuple[str, str], ...] = ()
    fragments: frozenset[str] = field(default_factory=frozenset)

    def tokens(self) -> set[str]:
        return {name for name, _ in self.columns} | FRAGMENT_TOKENS | self.fragments


NEUTRAL = Vocabulary()

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


def parse(
    text: str,
    origin: str = "<sql>",
    shared: Mapping[str, str] | None = None,
    vocabulary: Vocabulary = NEUTRAL,
) -> Queries:
    """The named queries of one file's text, ``vocabulary``'s column tokens and ``shared``
    blocks (by name, from the package's ``fragments.sql``) filled in."""
    parts = _MARKER.split(text)
    queries = Queries()
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"{origin}: query {name!r} defined twice")
        lines = body.strip().splitlines()
        if lines and lines[0].startswith("--"):
            queries.descriptions[name] = lines[0].removeprefix("--").strip()
        sql = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
        queries[name] = _fill_columns(
            sql.strip().rstrip(";"), f"{origin}: {name}", shared or {}, vocabulary
        )
    return queries


def _fill_columns(sql: str, origin: str, shared: Mapping[str, str], vocabulary: Vocabulary) -> str:
    columns = dict(vocabulary.columns)

    def one(m: re.Match[str]) -> str:
        token = m.group(1)
        if token in shared:
            return shared[token] + m.group(2)
        if token in columns:
            return columns[token] + m.group(2)
        if token in FRAGMENT_TOKENS or token in vocabulary.fragments:
            return m.group(0)
        raise ValueError(f"{origin}: unknown token {{{token}}}")

    return _TOKEN.sub(one, sql)


@cache
def load(package: str, filename: str, vocabulary: Vocabulary = NEUTRAL) -> Queries:
    """The named queries of ``filename`` in ``package`` (a package of ``.sql`` files)."""
    files = resources.files(package)
    shared: Queries | None = None
    if filename != SHARED_FILE and files.joinpath(SHARED_FILE).is_file():
        shared = load(package, SHARED_FILE, vocabulary)
    text = files.joinpath(filename).read_text(encoding="utf-8")
    queries = parse(text, f"{package}/{filename}", shared, vocabulary)
    if filename == SHARED_FILE and (taken := set(queries) & vocabulary.tokens()):
        raise ValueError(f"{package}/{filename}: {sorted(taken)} are tokens already")
    return queries


def fill(sql: str, **fragments: str) -> str:
    """``sql`` with its fragment tokens replaced by ``fragments``; each token must be
    given and each fragment used. An empty fragment takes a ``.`` right after its token
    with it, so ``{schema}.jobs`` with no schema is the unqualified name."""
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
