"""The command groups of a dispatch database, one module per noun; the root command
picks them when the database holds dispatch's tables. Flags and output follow the azync
and DBOS groups (``-o``, ``--limit``/``--after``, ``--dry-run``, ``--yes``); field names
are dispatch's column names, JSON values exact (``timeout`` in nanoseconds, as stored)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

import typer

from qctl.cli import common
from qctl.cli.output import OutputFormat, page_note, stream_listing
from qctl.core.sqldb import row_record
from qctl.systems.dispatch import SYSTEM

if TYPE_CHECKING:
    from qctl.systems.dispatch.database import Database

Many = list[str] | None


def group(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    app.callback()(lambda: None)  # a one-verb group stays a group (``qctl cron list``)
    return app


def database(ctx: typer.Context, gate: bool = True) -> Database:
    """The dispatch database of this invocation, opened once (versions gated unless
    ``gate`` is False)."""
    from qctl.systems.dispatch.database import Database

    return common.cli(ctx).database(Database, gate=gate)


def writable(ctx: typer.Context, action: str, dry_run: bool) -> Database:
    """The database for a writing verb, refused first when read-only (a dry run only
    reads) or at a schema version qctl does not write to (a dry run too: the real run
    would be refused)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    db = database(ctx)
    db.writable()
    return db


class Identified(Protocol):
    id: str


def listing(
    fetch: Callable[[int, Any], Sequence[Identified]],
    columns: Sequence[str],
    output: OutputFormat,
    limit: int,
    after: str | None,
) -> None:
    """A newest-first listing of dispatch rows (``fetch(n, cursor)``: the next ``n``
    after a ``reads.Cursor``), streamed (``output.stream_listing``): JSON shows every
    column as stored, a table and CSV as ``for_table``; the next page's cursor on stderr."""
    from qctl.systems.dispatch import reads

    shown, position = stream_listing(
        fetch,
        lambda row: reads.Cursor(row.id),
        row_record,
        columns,
        output,
        limit,
        reads.Cursor.decode(after) if after else None,
        shown=lambda row: for_table(row_record(row)),
    )
    page_note(output, shown, None, position.encode() if position else None)


def for_table(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row as a table shows it: ``timeout`` as a duration."""
    if isinstance(record.get("timeout"), int):
        return {**record, "timeout": timedelta(microseconds=record["timeout"] // 1000)}
    return record
