"""The command groups of a hopper database, one module per noun; the root command picks
them when the database holds hopper's tables. Flags and output follow the other
systems' groups (``-o``, ``--limit``/``--after``, ``--dry-run``, ``--yes``, ``--max``);
field names are hopper's column names, JSON values exact."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from qctl.cli import common
from qctl.cli.output import note
from qctl.systems.hopper import SYSTEM

if TYPE_CHECKING:
    from qctl.systems.hopper.database import Database


def group(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    app.callback()(lambda: None)  # a one-verb group stays a group (``qctl clients list``)
    return app


def database(ctx: typer.Context) -> Database:
    """The hopper database of this invocation, opened once. A schema version qctl does
    not know is read (with a note) but never written to."""
    from qctl.systems.hopper.database import Database

    root = ctx.find_root()
    db = common.cli(ctx).database(Database)
    if db.state.unknown and not root.meta.get("qctl.hopper.noted"):
        root.meta["qctl.hopper.noted"] = True
        note(f"{db.state.refusal()}; reading it as version 8")
    return db


def writable(ctx: typer.Context, action: str, dry_run: bool) -> Database:
    """The database for a writing verb: refused first when read-only (a dry run only
    reads) or at a schema version qctl does not write to (a dry run too: it says what
    the real run would do, and that would be refused)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    db = database(ctx)
    db.require_writable()
    return db
