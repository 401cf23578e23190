"""``qctl db``: schema migrations, status and the console's own indexes."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.context import lock_wait_note
from qctl.cli.output import as_dict, emit_object, emit_result, note
from qctl.core.exits import ExitCode
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import database, options
from qctl_kit.dsn import default_database_path, redact
from qctl_kit.errors import StoreError
from qctl_store.types import SchemaStatus

if TYPE_CHECKING:
    from qctl.systems.azync.cli.database import AnyStore

app = common.app("db", SYSTEM.commands["db"].help)


@app.command("migrate")
def migrate(
    ctx: typer.Context,
    dry_run: DryRun = False,
    output: Output = common.OutputFormat.TABLE,
) -> None:
    """Bring azync's schema up to date (goose-compatible version table), and rebuild the
    indexes of its migrations that a cancelled concurrent build left invalid.
    On PostgreSQL it waits for other sessions' locks as azync's own migrator does (a
    concurrent index build waits for every older transaction to end), with a line on
    stderr naming each session it waits behind; `--lock-timeout` sets a limit. A run
    that stops says which versions are applied and which are left."""
    cli = common.cli(ctx)
    # A migration's index builds read whole tables and wait for older transactions:
    # neither limit applies unless the operator sets one.
    cli.unlimit("statement_timeout", "lock_timeout")
    if dry_run:
        absent = _absent_sqlite_file(cli.dsn)
        if absent:
            # Only `db migrate` creates the file: its dry run reads what a new one would
            # need from an empty database instead of refusing the missing file.
            from qctl_store import open_store

            with open_store("sqlite::memory:") as empty:
                status = empty.schema_status()
        else:
            status = database.store(cli, check=False).schema_status()
        rebuild = _rebuildable(status.invalid_indexes)
        common.dry_run_report(
            {
                "pending_versions": status.pending_versions,
                "applied_version": status.applied_version,
                "rebuild_indexes": rebuild,
            },
            (f"would create {absent} and apply " if absent else "would apply ")
            + f"{len(status.pending_versions)} migration(s): "
            f"{', '.join(map(str, status.pending_versions)) or 'none'} "
            f"(at version {status.applied_version})"
            + (
                f"; would rebuild the invalid index(es) {', '.join(rebuild)} (DROP INDEX"
                " CONCURRENTLY, then CREATE INDEX CONCURRENTLY as their migration defines them)"
                if rebuild
                else ""
            ),
            output,
        )
        return
    cli.require_writable("db migrate")
    # The one command that may create a file; its lock waits are named wherever stderr
    # goes (a deploy log too), since it waits without limit.
    store = database.open_store(cli, create=True, check=False, on_lock_wait=lock_wait_note)
    try:
        applied = store.migrate()
        rebuilt = store.rebuild_indexes(store.schema_status().invalid_indexes)
    except StoreError:
        _say_where_it_stopped(store)
        raise
    status = store.schema_status()
    emit_result(
        {"applied": applied, "version": status.applied_version, "rebuilt_indexes": rebuilt},
        f"applied {len(applied)} migration(s)"
        + (f": {', '.join(map(str, applied))}" if applied else " (already up to date)")
        + f"; schema at version {status.applied_version}"
        + (f"; rebuilt the invalid index(es) {', '.join(rebuilt)}" if rebuilt else ""),
        output,
    )


def _rebuildable(invalid: list[str]) -> list[str]:
    """Which of the ``invalid`` indexes ``db migrate`` rebuilds: those azync's
    migrations build concurrently (others, e.g. ``db tune``'s, are left to their own)."""
    from qctl_store.postgres.migrate import concurrent_indexes

    return [name for name in invalid if name in concurrent_indexes()] if invalid else []


def _say_where_it_stopped(store: AnyStore) -> None:
    """After a failed run, how far the schema got and what is left (one stderr line),
    read afresh; nothing when even that read fails (the error says why)."""
    try:
        status = store.schema_status()
    except StoreError:
        return
    left = ", ".join(map(str, status.pending_versions))
    note(
        f"db migrate stopped with the schema at version {status.applied_version} of "
        f"{status.expected_version}"
        + (f"; left: {left}" if left else "")
        + (f"; invalid: {', '.join(status.invalid_indexes)}" if status.invalid_indexes else "")
        + "; `qctl db migrate` again goes on from there"
    )


def _no_autovacuum(status: SchemaStatus) -> str:
    """What an operator should know, and do, when no autovacuum reaches azync_jobs."""
    from qctl_kit.sqlfile import identifier

    table = f"{identifier(status.schema)}.azync_jobs" if status.schema else "azync_jobs"
    dead = status.jobs_dead_rows
    return (
        "autovacuum is off for azync_jobs"
        + (f" (about {dead:,} dead rows)" if dead else "")
        + ": every lease walks the index entries of the jobs leased before it until a"
        f" vacuum removes them, so leasing slows as jobs are processed; run `VACUUM {table}`"
        " regularly (from cron, say) or turn autovacuum on"
    )


def _absent_sqlite_file(dsn: str | None) -> str:
    """The path of a SQLite file ``dsn`` names that does not exist yet in an existing
    directory (what ``db migrate`` would create), else ""."""
    from qctl_kit.dsn import is_postgres, sqlite_path

    if not dsn or is_postgres(dsn):
        return ""
    path = sqlite_path(dsn)
    if path == ":memory:" or path.startswith("file:") or os.path.exists(path):
        return ""
    return path if os.path.isdir(os.path.dirname(os.path.abspath(path))) else ""


@app.command("tune")
def tune(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = common.OutputFormat.TABLE
) -> None:
    """Add the console's own indexes (PostgreSQL): one for each job state azync's schema
    has none for (paused, cancelled, uncertain, skipped), so their pages, counts and
    `queues throughput` stop reading the whole job table, and one for dead jobs in
    failure order, so their pages stop sorting every dead job.
    Built with CREATE INDEX CONCURRENTLY (writers are not blocked); named qctl_*, a
    name azync's migrations never take; listed by `qctl db status`."""
    common.cli(ctx).unlimit("statement_timeout", "lock_timeout")
    store = options.store(ctx) if dry_run else options.writable(ctx, "db tune")
    names = store.tune(dry_run=dry_run)
    common.tune_report(names, [] if names else store.console_indexes(), dry_run, output)


@app.command("status")
def status(ctx: typer.Context, output: Output = common.OutputFormat.TABLE) -> None:
    """Schema versions, change triggers, push or poll; the context and the wake channel
    in effect. Exits 5 unless the schema is at this release's version (migrations
    pending, a schema that does not exist yet, or one newer than this release), as every
    other command would on that database; 0 when it is up to date."""
    cli = common.cli(ctx)
    result = database.store(cli, check=False).schema_status()
    record = {"context": cli.context_name or "", "system": "azync", **as_dict(result)}
    record["location"] = redact(result.location) if result.location else cli.describe()
    if not cli.dsn and not default_database_path().exists():  # read from an empty one
        record["location"] = f"{cli.describe()}, not created yet: the first write creates it"
    emit_object(record, output)
    if result.autovacuum is False:
        note(_no_autovacuum(result))
    common.invalid_indexes_note(
        result.invalid_indexes,
        "`qctl db migrate` rebuilds those of azync's migrations"
        if _rebuildable(result.invalid_indexes)
        else common.reindex_fix(result.schema),
    )
    if result.pending_versions:
        note(f"{len(result.pending_versions)} migration(s) pending: run `qctl db migrate`")
    elif result.applied_version > result.expected_version:
        note(f"schema version {result.applied_version} is newer than this release's")
    if result.applied_version != result.expected_version or result.pending_versions:
        raise typer.Exit(ExitCode.SCHEMA)
