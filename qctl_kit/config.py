"""The settings of a database session, whatever system it serves, and the sizing of bulk
work's batches."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from qctl_kit.errors import InvalidInput

MAINTENANCE_BATCH = 1000
"""The most rows one batch of bulk work takes."""
MAINTENANCE_BATCH_SECONDS = 0.25
"""What one maintenance batch's transaction should take: batches shrink below
``MAINTENANCE_BATCH`` rows when they take longer (``qctl_kit.batches.BatchSize``)."""

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
MAX_IDENT_BYTES = 63


def is_identifier(name: str) -> bool:
    return bool(_IDENT.match(name)) and len(name.encode()) <= MAX_IDENT_BYTES


def validate_identifier(what: str, name: str) -> str:
    if not is_identifier(name):
        raise InvalidInput(
            f"{what} {name!r} is not a plain identifier "
            f"([A-Za-z_][A-Za-z0-9_$]*, at most {MAX_IDENT_BYTES} bytes)"
        )
    return name


@dataclass
class Session:
    """How a session is opened (``qctl_kit.postgres.connect``).

    ``schema``: PostgreSQL's search_path (empty: the server's), a plain identifier.
    ``read_only``: the session itself is opened read-only.
    ``statement_timeout``/``lock_timeout``:
    PostgreSQL only; the session's limits (0 turns one off), a statement past one fails
    with ``errors.Timeout``. None keeps the server's and the DSN's: a library sets no
    limit of its own, because how long a worker's statement or lock wait may take is its
    deployment's decision (the console sets limits that suit an operator waiting at a
    terminal). ``connection``: an open connection from
    ``qctl_kit.postgres.connect.open_connection`` for the session to use first.
    ``on_lock_wait``: PostgreSQL only; called (from a thread of the watch's) with a
    ``qctl_kit.postgres.watch.Blocker`` for each session a statement has waited behind
    for a second. ``unanswered_after``: PostgreSQL only; a statement the server has not
    answered for this long has its connection given up and fails with
    ``errors.NoAnswer`` (``qctl_kit.postgres.watch``); None waits as long as the server's
    limits and TCP keepalives let it.
    """

    schema: str = ""
    read_only: bool = False
    application_name: str = "qctl"
    statement_timeout: timedelta | None = None
    lock_timeout: timedelta | None = None
    connection: Any = field(default=None, repr=False)
    on_lock_wait: Callable[[Any], None] | None = field(default=None, repr=False)
    unanswered_after: timedelta | None = None

    def __post_init__(self) -> None:
        if self.schema:
            validate_identifier("schema", self.schema)
