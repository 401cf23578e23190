"""``qctl db``: schema migrations, status and the console's own indexes."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import as_dict, emit_object, emit_result, note
from qctl_store.dsn import redact

app = common.app("db")


@app.command("migrate")
def migrate(
    ctx: typer.Context,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = common.OutputFormat.TABLE,
) -> None:
    """Bring azync's schema up to date (goose-compatible version table)."""
    if dry_run:
        status = common.store(ctx).schema_status()
        emit_result(
            {
                "dry_run": True,
                "pending_versions": status.pending_versions,
                "applied_version": status.applied_version,
            },
            f"would apply {len(status.pending_versions)} migration(s): "
            f"{', '.join(map(str, status.pending_versions)) or 'none'} "
            f"(at version {status.applied_version})",
            output,
        )
        return
    cli = common.cli(ctx)
    cli.require_writable("db migrate")
    store = cli.open_store(create=True)  # the one command that may create a SQLite file
    applied = store.migrate()
    status = store.schema_status()
    emit_result(
        {"applied": applied, "version": status.applied_version},
        f"applied {len(applied)} migration(s)"
        + (f": {', '.join(map(str, applied))}" if applied else " (already up to date)")
        + f"; schema at version {status.applied_version}",
        output,
    )


@app.command("tune")
def tune(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = common.OutputFormat.TABLE
) -> None:
    """Add the console's own indexes (PostgreSQL): one for paused jobs, which azync's
    schema has none for, so paused pages and counts stop reading the whole job table.
    Built with CREATE INDEX CONCURRENTLY (writers are not blocked); named qctl_*, a
    name azync's migrations never take; listed by `qctl db status`."""
    store = common.store(ctx) if dry_run else common.writable(ctx, "db tune")
    names = store.tune(dry_run=dry_run)
    if names:
        message = f"{'would create' if dry_run else 'created'} {', '.join(names)}"
    else:
        present = store.console_indexes()
        message = "nothing to tune" + (f": {', '.join(present)} exists" if present else "")
    emit_result({"dry_run": dry_run, "indexes": names}, message, output)


@app.command("status")
def status(ctx: typer.Context, output: Output = common.OutputFormat.TABLE) -> None:
    """Schema versions, change triggers, push or poll; the context and the wake channel
    in effect."""
    cli = common.cli(ctx)
    result = common.store(ctx).schema_status()
    record = {"context": cli.context_name or "", **as_dict(result)}
    record["location"] = redact(result.location) if result.location else cli.describe()
    emit_object(record, output)
    if result.pending_versions:
        note(f"{len(result.pending_versions)} migration(s) pending: run `qctl db migrate`")
