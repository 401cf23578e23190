"""``qctl db`` on a River database: status, tune (qctl's opt-in index), and the refusal
to migrate."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import OutputFormat
from qctl.systems.river.cli import database, group, writable

app = group("db")


@app.command("status")
def status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context, schema, River's applied migrations (line and version) and what qctl
    supports of them; exit 5 (after the report) when qctl does not know them."""
    from qctl.systems.river import tune
    from qctl.systems.river.database import SUPPORTED

    db = database(ctx, gate=False)
    state = db.state
    fields = {
        "migrations": [f"{line} {version}" for line, version in state.applied],
        "unknown_migrations": list(state.unknown),
        "missing_versions": [f"main {v}" for v in state.missing],
        "supported": state.supported,
        "supported_versions": SUPPORTED,
        "control_channel": f"{db.control_channel} (cancel, pause and resume notify River's"
        " clients there"
        + ("" if db.postgres else ": a row of river_notification, which they poll")
        + ")",
        "dashboard_refresh": "live on River's notifications"
        + ("" if db.postgres else " (its outbox, polled)")
        + ", polled for the rest",
        "console_indexes": tune.present(db) if state.readable else [],
    }
    refusal = None if state.supported else state.refusal()
    common.database_status(ctx, "river", db, fields, refusal, output)


@app.command("tune")
def tune(ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE) -> None:
    """Add qctl's own index on river_job (queue, id), so a listing by queue (`jobs list
    --queue`, a queue's jobs in the dashboard) reads its page on one range instead of
    walking every newer job of the table: River indexes a queue only after a state.
    Built with CREATE INDEX CONCURRENTLY on PostgreSQL (River's clients are not blocked;
    each insert then updates one more index); on SQLite under the file's write lock
    (River's clients wait while it is built); named qctl_*, a name River's migrations
    never take; listed by `qctl db status`. Nothing else of River's schema is changed."""
    from qctl.systems.river import tune as tuning

    common.cli(ctx).unlimit("statement_timeout", "lock_timeout")
    db = writable(ctx, "db tune", dry_run)
    names = tuning.tune(db, dry_run=dry_run)
    common.tune_report(names, [] if names else tuning.present(db), dry_run, output)


@app.command("migrate")
def migrate(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE
) -> None:
    """Refused: River migrates its own schema (rivermigrate, or `river migrate-up`)."""
    common.refuse_migrate("River", "River's migrator does (rivermigrate, `river migrate-up`)")
