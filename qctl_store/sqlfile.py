"""Named queries kept in ``.sql`` files, one file per capability and backend.

A file holds blocks introduced by ``-- name: <query_name>``; everything up to the next
marker is the statement. Keeping SQL in files keeps it readable, greppable and in one
place per backend.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_MARKER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


class Queries(dict[str, str]):
    def __getattr__(self, name: str) -> str:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@cache
def load(package: str, filename: str) -> Queries:
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    parts = _MARKER.split(text)
    queries = Queries()
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"{package}/{filename}: query {name!r} defined twice")
        queries[name] = body.strip().rstrip(";")
    return queries
