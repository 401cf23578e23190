"""Store configuration and the identifier rules azync applies to it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from qctl_kit.config import (
    MAINTENANCE_BATCH,
    MAINTENANCE_BATCH_SECONDS,
    Session,
    is_identifier,
    validate_identifier,
)

DEFAULT_NOTIFY_CHANNEL = "azync"
CHANGES_CHANNEL = "azync_changes"
DEFAULT_MIGRATIONS_TABLE = "azync_migrations"
STATS_SLOTS = 8
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


def default_notify_channel(schema: str) -> str:
    """``azync`` or ``azync_<schema>`` when that is still a valid identifier."""
    if not schema:
        return DEFAULT_NOTIFY_CHANNEL
    candidate = f"{DEFAULT_NOTIFY_CHANNEL}_{schema}"
    return candidate if is_identifier(candidate) else DEFAULT_NOTIFY_CHANNEL


@dataclass
class Config(Session):
    """Mirrors azync's ``driver.Config``, plus a few qctl knobs, over a ``Session``'s
    settings (``schema`` is the namespace of azync's tables, ignored by SQLite, where the
    file is the namespace; ``read_only`` also refuses every write; ``connection``:
    PostgreSQL with ``pooled`` False only).

    ``notify_channel``/``migrations_table``: empty means azync's defaults.
    ``poll_only``: no push wakeups or change hints. ``pooled``: PostgreSQL only; False
    uses one connection, for one-shot commands that should not pay for a pool.
    ``maintenance_batch``: the most rows one batch of bulk work takes (azync's
    ``WithMaintenanceBatch``); ``maintenance_batch_seconds``: the time a batch's
    transaction is sized toward. ``create_database``: SQLite only; False refuses a file
    that does not exist yet instead of creating it (the console creates one only for its
    embedded default and in ``qctl db migrate``).
    """

    notify_channel: str = ""
    migrations_table: str = ""
    poll_only: bool = False
    pooled: bool = True
    create_database: bool = True
    pool_max_size: int = 10
    stats_slots: int = STATS_SLOTS
    maintenance_batch: int = MAINTENANCE_BATCH
    maintenance_batch_seconds: float = MAINTENANCE_BATCH_SECONDS
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("qctl_store"))

    def __post_init__(self) -> None:
        super().__post_init__()
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
