"""``qctl versions``: DBOS's application versions."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
)
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.cli.base import (
    database,
    emit_list,
    group,
    report,
    writable,
)

app = group("versions")


@app.command("list")
def versions_list(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Application versions, latest first (the first is the latest)."""
    emit_list(
        reads.list_application_versions(database(ctx)),
        ["version_name", "version_timestamp", "created_at", "application_name"],
        output,
    )


@app.command("set-latest")
def versions_set_latest(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="VERSION", help="Application version name.")],
    application_name: Annotated[
        str | None,
        typer.Option(
            "--application-name",
            metavar="NAME",
            help="The application to act as (DBOS's application_name); a version"
            " another application registered is refused.",
        ),
    ] = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Make VERSION the latest application version (DBOS's
    set_latest_application_version): new scheduled runs start on it, e.g. to roll back."""
    db = writable(ctx, "versions set-latest", dry_run)
    planned = actions.set_latest_version(db, name, application_name, dry_run=True)
    if not dry_run:
        common.confirm(f"Make {name} the latest DBOS application version?", yes)
    outcome = planned if dry_run else actions.set_latest_version(db, name, application_name)
    word = "would make" if dry_run else "made"
    report(
        outcome.__dict__,
        f"{word} {name} the latest DBOS application version (was {outcome.latest})",
        dry_run,
        output,
    )
