"""``qctl db`` on a hopper database: status, and the refusal to migrate."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.errors import ExitCode
from qctl.cli.output import OutputFormat, emit_object, note
from qctl.systems.hopper.cli import database, group
from qctl_store.errors import InvalidInput

app = group("db")


@app.command("status")
def status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context, schema, hopper's schema version (``hopper_schema``) and what qctl
    supports of it; exit 5 (after the report) when qctl does not write to that
    version."""
    from qctl.systems.hopper.database import KNOWN_VERSIONS, SUPPORTED, WRITES_AT

    db = database(ctx)
    state = db.state
    emit_object(
        {
            "context": common.cli(ctx).context_name or "",
            "system": "hopper",
            "backend": "postgres",
            "location": db.location,
            "schema": db.schema,
            "schema_version": state.version,
            "applied_versions": list(state.applied),
            "unknown_versions": list(state.unknown),
            "known_versions": list(KNOWN_VERSIONS),
            "writes_at_version": WRITES_AT,
            "writable": state.writable,
            "supported": SUPPORTED,
            "read_only": db.read_only,
            "notifications_sent": "hopper_insert, hopper_control, hopper_done (as hopper's)",
            "dashboard_refresh": "polling",
            "not_in_this_schema": (
                "fences, job leases, progress, attempt logs, tags, snooze reasons,"
                " dependency outputs (later hopper schemas)"
            ),
        },
        output,
    )
    if not state.writable:
        note(state.refusal())
        raise typer.Exit(int(ExitCode.SCHEMA))


@app.command("migrate")
def migrate(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE
) -> None:
    """Refused: hopper migrates its own schema (hoppermigrate, ``hopper migrate up``)."""
    raise InvalidInput(
        "qctl never migrates a hopper database: hopper does (hoppermigrate.Up, or"
        " `hopper migrate up`)"
    )
