"""qctl_store: azync's driver contract on PostgreSQL (schema- and wire-compatible with
azync's Go driver) and on embedded SQLite.

    from qctl_store import open_store, EnqueueParams
    with open_store() as store:          # the embedded default database
        store.enqueue(EnqueueParams(kind="email.send", payload={"to": "a@b.c"}))
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from qctl_store.config import Config
from qctl_store.types import *  # noqa: F403  (the contract's row and parameter types)

if TYPE_CHECKING:
    from qctl_store.postgres import PostgresStore
    from qctl_store.sqlite import SqliteStore

from qctl_store import types as _types

__all__ = [
    *_types.__all__,
    "Config",
    "open_store",
]


def open_store(dsn: str | None = None, config: Config | None = None) -> PostgresStore | SqliteStore:
    """Open a store.

    ``postgresql://...`` (or a libpq ``key=value`` string) opens PostgreSQL, which is
    never migrated implicitly. ``sqlite:///path``, ``sqlite::memory:`` or a file path
    opens SQLite. No DSN opens the embedded default database
    (``$XDG_DATA_HOME/qctl/qctl.db``), created and migrated on first use.
    """
    from qctl_kit.dsn import default_database_path, is_postgres, sqlite_path

    config = config or Config()
    if dsn and is_postgres(dsn):
        from qctl_store.postgres import PostgresStore

        return PostgresStore(dsn, config)
    from qctl_store.sqlite import SqliteStore

    if dsn:
        return SqliteStore(sqlite_path(dsn), config)
    path = default_database_path()
    if not config.read_only:  # a read-only session creates nothing, not even a directory
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # private: jobs carry data
    store = SqliteStore(str(path), dataclasses.replace(config, create_database=True))
    if not config.read_only:
        store.migrate()
    return store
