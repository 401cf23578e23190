"""azync's database as the shells open it: its store (``qctl_store``), on the context's
DSN and session terms (``CliContext.session``), one per invocation (unpooled, reused) or
a pool of its own for the dashboard's threads."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qctl_store.config import Config

if TYPE_CHECKING:
    from qctl.cli.context import CliContext
    from qctl_kit.postgres.watch import Blocker
    from qctl_store.postgres import PostgresStore
    from qctl_store.sqlite import SqliteStore

    AnyStore = PostgresStore | SqliteStore


class Store:
    """``System.database`` of azync: ``open`` gives what its reads and actions take."""

    @staticmethod
    def open(
        context: CliContext,
        pooled: bool = False,
        on_lock_wait: Callable[[Blocker], None] | None = None,
    ) -> AnyStore:
        """The invocation's store; ``pooled``: a pool of its own, for the dashboard's
        threads, after a check on one plain connection, so an unreachable or unmigrated
        database fails in one line before a pool would log every failed attempt."""
        if not pooled:
            return store(context)
        store(context).ops_stats()
        return open_store(context, pooled=True, on_lock_wait=on_lock_wait)


def open_store(
    context: CliContext,
    pooled: bool = False,
    create: bool = False,
    check: bool = True,
    on_lock_wait: Callable[[Blocker], None] | None = None,
) -> AnyStore:
    """Open the store ``context`` points at (the one-shot CLI uses ``pooled=False``; the
    dashboard passes ``pooled=True``), closed with the context.

    With no DSN the embedded default database is created and migrated by the first
    command that writes (``CliContext.writes``) or the dashboard (``pooled``); a read
    before it exists reads an empty database and creates nothing, not even a directory.
    PostgreSQL is never migrated implicitly. A SQLite file that does not exist is
    created only with ``create`` (``db migrate``).

    ``check`` is the schema-version gate of every command and the dashboard: a schema
    older or newer than this release's raises ``SchemaNotMigrated`` or ``SchemaTooNew``
    (exit 5) before any other statement, for reads and writes alike, since a read over
    columns or states qctl does not know could misstate rows (``db status`` and ``db
    migrate`` pass False: they report and fix it).

    ``on_lock_wait``: as ``CliContext.session``'s.
    """
    from qctl_kit.dsn import check_dsn, default_database_path
    from qctl_store import open_store as open_azync_store

    check_dsn(context.dsn or "")
    reads = not (context.writes or pooled or create)
    if reads and not context.dsn and not default_database_path().exists():
        return _empty(context)
    conn = context.detected()
    # A connection's settings are fixed when it opens: detection's has the usual limits.
    if conn is not None and (pooled or context.unlimited):
        conn.close()
        conn = None
    opened = open_azync_store(context.dsn, config(context, pooled, create, conn, on_lock_wait))
    context.opened.append(opened)
    if check:
        opened.require_schema()
    return opened


def _empty(context: CliContext) -> AnyStore:
    """What a read of the embedded default finds before anything was written there: an
    empty database, in memory."""
    from qctl_store.sqlite import SqliteStore

    empty = SqliteStore(":memory:", dataclasses.replace(config(context), read_only=False))
    context.opened.append(empty)
    empty.migrate()
    return empty


def config(
    context: CliContext,
    pooled: bool = False,
    create: bool = False,
    conn: Any = None,
    on_lock_wait: Callable[[Blocker], None] | None = None,
) -> Config:
    """azync's ``Config`` over the context's session terms."""
    session = context.session(on_lock_wait)
    return Config(
        **{
            f.name: getattr(session, f.name)
            for f in dataclasses.fields(session)
            if f.name != "connection"
        },
        pooled=pooled,
        create_database=create,
        connection=conn,
    )


def store(context: CliContext, check: bool = True) -> AnyStore:
    """The store of this invocation: opened unpooled on first use, then reused;
    ``check`` as ``open_store``'s (the store remembers a passed gate)."""
    opened = context.opened[0] if context.opened else open_store(context, check=False)
    if check:
        opened.require_schema()
    return opened
