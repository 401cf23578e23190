"""``qctl db`` on a River database: status, and the refusal to migrate."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import OutputFormat
from qctl.systems.river.cli import database, group

app = group("db")


@app.command("status")
def status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context, schema, River's applied migrations (line and version) and what qctl
    supports of them; exit 5 (after the report) when qctl does not know them."""
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
        " clients there)",
    }
    refusal = None if state.supported else state.refusal()
    common.database_status(ctx, "river", db, fields, refusal, output)


@app.command("migrate")
def migrate(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE
) -> None:
    """Refused: River migrates its own schema (rivermigrate, or `river migrate-up`)."""
    common.refuse_migrate("River", "River's migrator does (rivermigrate, `river migrate-up`)")
