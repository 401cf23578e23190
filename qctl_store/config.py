"""Store configuration and the identifier rules azync applies to it."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from qctl_store.errors import InvalidInput

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
MAX_IDENT_BYTES = 63

DEFAULT_NOTIFY_CHANNEL = "azync"
CHANGES_CHANNEL = "azync_changes"
DEFAULT_MIGRATIONS_TABLE = "azync_migrations"
STATS_SLOTS = 8
MAINTENANCE_BATCH = 1000
MAINTENANCE_BATCH_SECONDS = 0.25
"""What one maintenance batch's transaction should take: batches shrink below
``MAINTENANCE_BATCH`` rows when they take longer (``qctl_store.batches.batched_tx``)."""
BULK_HINT_CAP = 50
WAKE_BUFFER = 64
CHANGE_BUFFER = 256
REPLAY_LIMIT = 1_000_000
STALLED_LIMIT = 100
DEFAULT_MAX_ATTEMPTS = 25
"""azync's ``Defaults.DefaultMaxAttempts``: the budget its queue producer writes when a job
names none (with ``max_attempts_explicit = false``), and the floor of an operation."""
OPERATION_MAX_ATTEMPTS = DEFAULT_MAX_ATTEMPTS
WORKFLOW_TASK_QUEUE = "default"


def is_identifier(name: str) -> bool:
    return bool(_IDENT.match(name)) and len(name.encode()) <= MAX_IDENT_BYTES


def validate_identifier(what: str, name: str) -> str:
    if not is_identifier(name):
        raise InvalidInput(
            f"{what} {name!r} is not a plain identifier "
            f"([A-Za-z_][A-Za-z0-9_$]*, at most {MAX_IDENT_BYTES} bytes)"
        )
    return name


def default_notify_channel(schema: str) -> str:
    """``azync`` or ``azync_<schema>`` when that is still a valid identifier."""
    if not schema:
        return DEFAULT_NOTIFY_CHANNEL
    candidate = f"{DEFAULT_NOTIFY_CHANNEL}_{schema}"
    return candidate if is_identifier(candidate) else DEFAULT_NOTIFY_CHANNEL


@dataclass
class Config:
    """Mirrors azync's ``driver.Config``, plus a few qctl knobs.

    ``schema``: the namespace of azync's tables (PostgreSQL schema; ignored by SQLite,
    where the file is the namespace). ``notify_channel``/``migrations_table``: empty
    means azync's defaults. ``poll_only``: no push wakeups or change hints.
    ``read_only``: every write is refused, and the database session itself is opened
    read-only. ``pooled``: PostgreSQL only; False uses one connection, for one-shot
    commands that should not pay for a pool. ``maintenance_batch``: the most rows one
    batch of bulk work takes (azync's ``WithMaintenanceBatch``);
    ``maintenance_batch_seconds``: the time a batch's transaction is sized toward.
    ``create_database``: SQLite only; False refuses a file that does not exist yet
    instead of creating it (the console creates one only for its embedded default and
    in ``qctl db migrate``). ``connection``:
    PostgreSQL with ``pooled`` False only; an open connection from
    ``qctl_store.postgres.base.open_connection`` for the store to use first.
    ``statement_timeout``/``lock_timeout``: PostgreSQL only; the session's limits (0
    turns one off), a statement past one fails with ``errors.Timeout``. None keeps the
    server's and the DSN's: the library sets no limit of its own, because how long a
    worker's statement or lock wait may take is its deployment's decision (the console
    sets limits that suit an operator waiting at a terminal). ``on_lock_wait``:
    PostgreSQL only; called (from a thread of the store's) with a
    ``qctl_store.postgres.watch.Blocker`` for each session a statement has waited
    behind for a second. ``unanswered_after``: PostgreSQL only; a statement the server
    has not answered for this long has its connection given up and fails with
    ``errors.NoAnswer`` (see ``qctl_store.postgres.watch``); None waits as long as the
    server's limits and TCP keepalives let it.
    """

    schema: str = ""
    notify_channel: str = ""
    migrations_table: str = ""
    poll_only: bool = False
    read_only: bool = False
    pooled: bool = True
    create_database: bool = True
    pool_max_size: int = 10
    stats_slots: int = STATS_SLOTS
    maintenance_batch: int = MAINTENANCE_BATCH
    maintenance_batch_seconds: float = MAINTENANCE_BATCH_SECONDS
    application_name: str = "qctl"
    statement_timeout: timedelta | None = None
    lock_timeout: timedelta | None = None
    connection: Any = field(default=None, repr=False)
    on_lock_wait: Callable[[Any], None] | None = field(default=None, repr=False)
    unanswered_after: timedelta | None = None
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("qctl_store"))

    def __post_init__(self) -> None:
        if self.schema:
            validate_identifier("schema", self.schema)
        if self.notify_channel:
            validate_identifier("notify channel", self.notify_channel)
        if self.migrations_table:
            validate_identifier("migrations table", self.migrations_table)
        if self.stats_slots <= 0:
            self.stats_slots = STATS_SLOTS
        if self.maintenance_batch <= 0:
            self.maintenance_batch = MAINTENANCE_BATCH
        if not self.maintenance_batch_seconds > 0:
            self.maintenance_batch_seconds = MAINTENANCE_BATCH_SECONDS

    @property
    def channel(self) -> str:
        return self.notify_channel or default_notify_channel(self.schema)

    @property
    def version_table(self) -> str:
        return self.migrations_table or DEFAULT_MIGRATIONS_TABLE
