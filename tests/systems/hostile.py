"""The hostile rows of ``test_hostile.py``: values a producer (or a hand at ``psql``) can
store that break a naive reader, and what each system's provider gives to store them.

A provider (``tests/<system>/contract.py``) adds, beside what ``contract.py`` lists:

- ``HOSTILE_BACKENDS``: the backends its databases live on (``"postgres"``, ``"sqlite"``);
- ``hostile_database(backend, tmp)``: a context manager yielding a ``Target``: an empty
  database of the system on that backend (an SQLite file under the directory ``tmp``);
- ``insert_hostile(target, case)``: stores one row carrying ``case`` (the JSON in the
  column the system keeps its payloads in, the bytes where that column takes bytes, the
  instant in the row's instants), or returns None where the database refuses the value
  (jsonb takes no NaN and no ``\\u0000``; a jsonb or text column no invalid UTF-8);
- ``show_in_dashboard(app, pilot, row)``: shows the row in the dashboard's job table
  (``open_row``), the dashboard open on ``handle(target)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.widgets import DataTable

from tests.tui.helpers import until


@dataclass(frozen=True)
class Hostile:
    name: str
    json: str | None = None
    """A JSON text for the payload column."""
    raw: bytes | None = None
    """Bytes that are not JSON (or not UTF-8), for a payload column that takes them."""
    instant: str | None = None
    """A PostgreSQL timestamptz literal for the row's instants (on SQLite the text itself,
    stored where an integer instant belongs: text that does not parse)."""


MB = 1024 * 1024
CASES = [
    Hostile("nest-3000", json="[" * 3000 + "]" * 3000),
    Hostile("nest-100000", json='{"a":' * 100_000 + "1" + "}" * 100_000),
    Hostile("int-5000", json='{"n": ' + "7" * 5000 + "}"),
    Hostile("nan", json='{"x": [NaN, Infinity, -Infinity, 1e999]}'),
    Hostile("payload-10mb", json='{"blob": "' + "x" * (10 * MB) + '"}'),
    Hostile("infinity", instant="infinity"),
    Hostile("minus-infinity", instant="-infinity"),
    Hostile("year-10000", instant="10000-01-01 00:00:00+00"),
    Hostile("invalid-utf8", raw=b'{"a": "\xff\xfe\x80"}'),
    Hostile("nul", json='{"nul": "a\\u0000b"}', raw=b'{"nul": "a\x00b"}'),
]


@dataclass(frozen=True)
class HostileRow:
    key: str
    """How the dashboard's table keys the row, and the id ``show`` takes."""
    list_args: list[str]
    """A listing that includes the row (``jobs list --kind ...``)."""
    show_args: list[str]
    """The row's detail (``jobs show ID``)."""


async def open_row(app: Any, pilot: Any, tab: str, table_id: str, key: str) -> None:
    """Press ``tab``, wait for ``key`` in the table ``table_id`` and open its detail."""
    await pilot.press(tab)
    await until(pilot, lambda: key in row_keys(app, table_id), 20)
    table = app.screen.query_one(f"#{table_id}", DataTable)
    table.focus()
    table.move_cursor(row=row_keys(app, table_id).index(key))
    await pilot.press("enter")
    await pilot.pause(0.5)
    await pilot.press("escape")


def row_keys(app: Any, table_id: str) -> list[str]:
    table = app.screen.query_one(f"#{table_id}", DataTable)
    return [str(r.key.value) for r in table.ordered_rows]
