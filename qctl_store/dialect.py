"""What the shared SQL builders (``qctl_store.listing``, ``qctl_store.writes``) need to
know of one backend, and azync's offset/limit paging rules they spell in it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from qctl_store import validate


@dataclass(frozen=True)
class Dialect:
    """What the shared SQL builders need to know of one backend."""

    placeholder: str
    """A named parameter, ``{}`` standing for its name: ``%({})s`` or ``:{}``."""
    no_limit: int | None
    """The LIMIT value that means no limit (PostgreSQL's NULL, SQLite's -1)."""
    arg_id: Callable[[uuid.UUID, str], Any]
    """A checked uuid argument as the driver binds it."""
    instant: Callable[[datetime | None], Any]
    """An aware UTC instant (or None) as the driver binds it."""
    meta_filter: str
    """A job's ``meta`` holds every pair of the JSON object bound as ``meta``."""
    error_filter: str
    """A job's ``last_error`` contains the text bound as ``error``, ignoring case."""
    text_filter: str
    """A job's kind or ``last_error`` contains the text bound as ``text``, ignoring
    case, or its id's 32 hex digits contain the lower-case digits bound as ``id_text``."""
    contains_arg: Callable[[str], str]
    """The bound value of a substring filter (``error``, ``text``, ``id_text``)."""
    payload_filter: str
    """A job's ``payload`` contains the JSON bound as ``payload`` (jsonb ``@>``)."""
    older_than_filter: str
    """A job was enqueued longer ago than the age bound as ``older_than``."""
    older_than_arg: Callable[[timedelta], Any]
    """The bound ``older_than`` value for ``older_than_filter``."""
    array: Callable[[list[Any]], Any]
    """A list argument, already bound values (``arg_id``): an array on PostgreSQL, a JSON
    array text that SQLite reads with ``json_each``."""

    def param(self, name: str) -> str:
        return self.placeholder.format(name)

    def page(self, offset: int, limit: int) -> dict[str, int | None]:
        """``page`` with this backend's spelling of no limit."""
        return page(offset, limit, no_limit=self.no_limit)


def page(offset: int, limit: int, *, no_limit: int | None = None) -> dict[str, int | None]:
    """azync's paging rules as ``offset``/``limit`` parameters: a negative offset is 0,
    ``limit <= 0`` is no limit, spelled ``no_limit`` (PostgreSQL's ``LIMIT NULL``,
    SQLite's ``LIMIT -1``)."""
    validate.limit(offset, "offset", maximum=2**62)
    validate.limit(limit, "limit", maximum=2**62)
    return {"offset": max(offset, 0), "limit": limit if limit > 0 else no_limit}
