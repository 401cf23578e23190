"""``qctl db`` on a dispatch database: status, and the refusal to migrate."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import OutputFormat
from qctl.systems.dispatch.cli import database, group

app = group("db")


@app.command("status")
def status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context, schema, dispatch's applied migration versions and what qctl supports
    of them; exit 5 (after the report) when qctl does not know the versions."""
    from qctl.systems.dispatch.database import CAPABILITIES, SUPPORTED

    db = database(ctx, gate=False)
    state = db.state
    capabilities = {
        name: (
            "yes"
            if state.has(name) and state.supported
            else f"no: {table}.{column} is there, at versions qctl does not write to ({what})"
            if state.has(name)
            else f"no: needs {table}.{column} ({what})"
        )
        for name, (table, column, what) in CAPABILITIES.items()
    }
    fields = {
        "migration_versions": list(state.applied),
        "unknown_versions": list(state.unknown),
        "missing_versions": list(state.missing),
        "supported": state.supported,
        "supported_versions": SUPPORTED,
        "wake_notifications": "sent after a replay (dispatch_jobs_wake, dispatch v1.5.3);"
        " qctl top refreshes on them, qctl watch polls",
        "keyset_index": "the primary key (dispatch's ids sort by creation); no"
        " list-order index at the versions qctl knows",
        **{f"capability_{k}": v for k, v in capabilities.items()},
    }
    refusal = None if state.supported else state.refusal()
    common.database_status(ctx, "dispatch", db, fields, refusal, output)


@app.command("migrate")
def migrate(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE
) -> None:
    """Refused: dispatch migrates its own schema (its store's Migrate, through grove)."""
    common.refuse_migrate("dispatch", "the dispatch application does (its store's Migrate)")
