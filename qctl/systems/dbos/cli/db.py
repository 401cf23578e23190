"""``qctl db`` on a DBOS system database: status; never migrated."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import (
    OutputFormat,
    emit_object,
)
from qctl.systems.dbos.cli.base import (
    database,
    group,
)
from qctl_kit.errors import InvalidInput

app = group("db")


@app.command("status")
def db_status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context in effect, the system, backend, schema and DBOS migration version."""
    from qctl.systems.dbos.database import MAX_VERSION, MIN_VERSION

    db = database(ctx)
    invalid = db.invalid_indexes()
    emit_object(
        {
            "context": common.cli(ctx).context_name or "",
            "system": "dbos",
            "backend": db.backend,
            "location": db.location,
            "schema": db.schema or None,
            "migration_version": db.version,
            "supported_versions": f"{MIN_VERSION}-{MAX_VERSION}",
            "read_only": db.read_only,
            "change_hints": db.postgres,  # messages, events, streams; status is polled
            "invalid_indexes": invalid,
        },
        output,
    )
    common.invalid_indexes_note(invalid, common.reindex_fix(db.schema))


@app.command("migrate")
def db_migrate(
    ctx: typer.Context,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Refused: a DBOS system database is migrated by its applications, never by qctl."""
    # azync's flags are accepted so that the same command line meets this refusal on
    # either system rather than an unknown-option error.
    raise InvalidInput(
        "qctl never migrates a DBOS system database: DBOS applications migrate it on launch "
        "(or `dbos migrate`)"
    )
