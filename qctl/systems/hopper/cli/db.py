"""``qctl db`` on a hopper database: status, tune (qctl's opt-in index), and the refusal
to migrate."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import OutputFormat
from qctl.systems.hopper.cli import database, group, writable

app = group("db")


@app.command("status")
def status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context, schema, hopper's schema version (``hopper_schema``) and what qctl
    supports of it; exit 5 (after the report) when qctl does not write to that
    version."""
    from qctl.systems.hopper import tune
    from qctl.systems.hopper.database import KNOWN_VERSIONS, SUPPORTED, WRITES_AT

    db = database(ctx)
    state = db.state
    fields = {
        "schema_version": state.version,
        "applied_versions": list(state.applied),
        "unknown_versions": list(state.unknown),
        "known_versions": list(KNOWN_VERSIONS),
        "writes_at_version": WRITES_AT,
        "writable": state.writable,
        "supported": SUPPORTED,
        "notifications_sent": "hopper_insert, hopper_control, hopper_done (as hopper's)",
        "dashboard_refresh": "live on hopper's notifications, polled for the rest",
        "console_indexes": tune.present(db),
        "not_in_this_schema": (
            "fences, job leases, progress, attempt logs, tags, snooze reasons,"
            " dependency outputs (later hopper schemas)"
        ),
    }
    refusal = None if state.writable else state.refusal()
    common.database_status(ctx, "hopper", db, fields, refusal, output)


@app.command("tune")
def tune(ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE) -> None:
    """Add qctl's own index on hopper_jobs (queue, state, scheduled_at), so the queue
    depths (`queues list`, `stats`, the Queues tab, metrics) count each state on index
    ranges instead of reading every live job: hopper's schema has no index that tells
    its waiting states apart. Built with CREATE INDEX CONCURRENTLY (hopper's clients are
    not blocked; each job's state change then updates one more index); named qctl_*, a
    name hopper's migrations never take; listed by `qctl db status`. Nothing else of
    hopper's schema is changed."""
    from qctl.systems.hopper import tune as tuning

    common.cli(ctx).unlimit("statement_timeout", "lock_timeout")
    db = writable(ctx, "db tune", dry_run)
    names = tuning.tune(db, dry_run=dry_run)
    common.tune_report(names, [] if names else tuning.present(db), dry_run, output)


@app.command("migrate")
def migrate(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE
) -> None:
    """Refused: hopper migrates its own schema (hoppermigrate, ``hopper migrate up``)."""
    common.refuse_migrate("hopper", "hopper does (hoppermigrate.Up, or `hopper migrate up`)")
