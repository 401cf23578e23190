"""The command groups of a River database, one module per noun; the root command picks
them when the database holds River's tables. Flags and output follow the other systems'
groups (``-o``, ``--limit``/``--after``, ``--dry-run``, ``--plan``, ``--yes``); field
names are River's column names, JSON values exact (``args``, ``metadata`` and ``errors``
decoded, ``unique_key`` in hex, ``unique_states`` as the states its bits name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from qctl.cli import common
from qctl.systems.river import SYSTEM

if TYPE_CHECKING:
    from qctl.systems.river.database import Database

Many = list[str] | None


def group(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    app.callback()(lambda: None)  # a group of one verb stays a group
    return app


def database(ctx: typer.Context, gate: bool = True) -> Database:
    """The River database of this invocation, opened once (migrations gated unless
    ``gate`` is False)."""
    from qctl.systems.river.database import Database

    return common.cli(ctx).database(Database, gate=gate)


def writable(ctx: typer.Context, action: str, dry_run: bool) -> Database:
    """The database for a writing verb, refused first when read-only (a dry run only
    reads) or at migrations qctl does not write to (a dry run too: the real run would be
    refused)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    db = database(ctx)
    db.writable()
    return db
