"""The command groups of an Oban database, one module per noun; the root command picks
them when the database holds ``oban_jobs``. Flags and output follow the other systems'
groups (``-o``, ``--limit``/``--after``, ``--dry-run``, ``--plan``, ``--yes``); field
names are Oban's column names, JSON values exact (``args``, ``meta`` and ``errors``
decoded), instants UTC."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from qctl.cli import common
from qctl.systems.oban import SYSTEM

if TYPE_CHECKING:
    from qctl.systems.oban.database import Database

Many = list[str] | None


def group(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    app.callback()(lambda: None)  # a group of one verb stays a group
    return app


def database(ctx: typer.Context, gate: bool = True) -> Database:
    """The Oban database of this invocation, opened once (its schema gated unless
    ``gate`` is False)."""
    from qctl.systems.oban.database import Database

    return common.cli(ctx).database(Database, gate=gate)


def writable(ctx: typer.Context, action: str, dry_run: bool) -> Database:
    """The database for a writing verb, refused first when read-only (a dry run only
    reads) or at a schema qctl does not write to (a dry run too: the real run would be
    refused)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    db = database(ctx)
    db.writable()
    return db
