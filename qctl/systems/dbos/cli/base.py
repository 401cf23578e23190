"""What every DBOS command group shares: its group, the database of the invocation,
and rendering rows for tables and for JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import typer

from qctl.cli import common
from qctl.cli.output import (
    OutputFormat,
    emit_result,
    emit_rows,
)
from qctl.systems.dbos import SYSTEM
from qctl_kit.decode import Instant, from_epoch

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database
    from qctl.systems.dbos.payload import Decoded


def group(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    # A callback keeps a one-verb group a group (``qctl versions list``).
    app.callback()(lambda: None)
    return app


def database(ctx: typer.Context) -> Database:
    """The DBOS system database of this invocation, opened once (version checked)."""
    from qctl.systems.dbos.database import Database

    return common.cli(ctx).database(Database)


def writable(ctx: typer.Context, action: str, dry_run: bool = False) -> Database:
    """The database for a writing verb: refused first when read-only (a dry run only
    reads, so it is allowed)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    return database(ctx)


# --- rendering -----------------------------------------------------------------------

MS_FIELDS = {
    "created_at",
    "updated_at",
    "dequeued_at",
    "completed_at",
    "workflow_deadline_epoch_ms",
    "delay_until_epoch_ms",
    "started_at_epoch_ms",
    "completed_at_epoch_ms",
    "created_at_epoch_ms",
    "first_created_at",
    "last_created_at",
    "oldest_enqueued_at",
    "version_timestamp",
}


def from_ms(ms: Any) -> Instant | None:
    """An epoch-milliseconds column as an instant (``decode.from_epoch``)."""
    return from_epoch(ms, 1000)


def to_ms(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)


def _is_decoded(value: Any) -> bool:
    from qctl.systems.dbos.payload import Decoded

    return isinstance(value, Decoded)


ISO_FIELDS = {"last_fired_at"}
"""Instants DBOS stores as ISO 8601 text (``workflow_schedules``)."""


def for_table(row: Mapping[str, Any]) -> dict[str, Any]:
    """Instants as datetimes (shown as every table shows them), under names without
    ``_epoch_ms`` since they are dates now; payloads as their text
    (``RuntimeError('declined')``). JSON keeps DBOS's names and values (``for_json``)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in MS_FIELDS and isinstance(value, int):
            out[key.removesuffix("_epoch_ms")] = from_ms(value)
        elif key in ISO_FIELDS and isinstance(value, str):
            try:
                out[key] = datetime.fromisoformat(value)
            except ValueError:
                out[key] = value
        elif _is_decoded(value):
            out[key] = value.text()
        else:
            out[key] = value
    return out


def for_json(row: Mapping[str, Any]) -> dict[str, Any]:
    """Payloads as ``{"serialization": ..., "value": ...}``; everything else exact."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if _is_decoded(value):
            decoded: Decoded = value
            out[key] = {"serialization": decoded.serialization, "value": decoded.json()}
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out[key] = [for_json(v) for v in value]
        else:
            out[key] = value
    return out


def emit_list(rows: Sequence[Mapping[str, Any]], columns: list[str], output: OutputFormat) -> None:
    emit_rows([for_table(r) for r in rows], columns, output, full=[for_json(r) for r in rows])


def report(record: dict[str, Any], message: str, dry_run: bool, output: OutputFormat) -> None:
    """A writing verb's result; a dry run's in the form every system's dry runs share."""
    if dry_run:
        common.dry_run_report(record, message, output)
    else:
        emit_result(record, message, output)
