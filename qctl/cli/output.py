"""Rendering results: ``-o table|json|jsonl|csv``.

The JSON forms are stable and documented (docs/cli.md): dataclasses become objects with
their field names, instants are RFC 3339 UTC strings (``2026-01-02T03:04:05.123456Z``),
durations are seconds (a number), ids are strings, enums their string values. Tables are
for people: shortened instants and durations, and on a terminal long cells cut to fit
(whole with ``--wide``, and always in a pipe or a file, where a cut value would be lost
to the program or the reader that gets it). Tables, CSV and the
sentences for people show text from the database through ``qctl.core.sanitize`` (control
characters and escape sequences escaped); JSON is exact. CSV text cells that a
spreadsheet would evaluate get a leading ``'`` (``QCTL_CSV_RAW=1`` keeps them as stored).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import Enum, StrEnum
from typing import Any, TextIO, TypeVar

import typer

from qctl.core import audit
from qctl.core.parse import ParseError, format_duration
from qctl.core.sanitize import sanitize
from qctl_kit.decode import JSON_DEPTH, cut_text, scalar


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"


OUTPUT_HELP = "Output format: table, json, jsonl or csv."

TABLE_CELL_WIDTH = 60


def iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def plain(value: Any, depth: int = JSON_DEPTH) -> Any:
    """A JSON-ready form of a store value (see the module doc), folded as
    ``qctl_kit.decode.fold`` folds: a list or object nested deeper than ``depth`` levels
    is ``cut_text()``, NaN and infinities are strings, an integer too long to print is
    cut."""
    if type(value) is str:  # the commonest leaf (a bulk verb's 150,000 ids) first
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), depth) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        if depth <= 0:
            return cut_text()
        return {str(plain(k)): plain(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        if depth <= 0:
            return cut_text()
        return [plain(v, depth - 1) for v in value]
    return scalar(value)


def cell_width(out: TextIO) -> int | None:
    """How long a table cell written to ``out`` may be: ``TABLE_CELL_WIDTH`` on a
    terminal, so that rows fit its lines, unless ``--wide``; else no limit."""
    try:
        terminal = out.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream
        terminal = False
    if not terminal:
        return None
    from typer._click.globals import get_current_context

    from qctl.cli.context import CliContext

    ctx = get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    return None if isinstance(root, CliContext) and root.wide else TABLE_CELL_WIDTH


def cell(value: Any, width: int | None = TABLE_CELL_WIDTH) -> str:
    """A table cell: short instants and durations, compact JSON, on one line and cut to
    ``width`` characters (None: whole)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, uuid.UUID | str | int | float):
        text = str(value)
    else:
        text = json.dumps(plain(value), separators=(",", ":"), ensure_ascii=False)
    text = " ".join(sanitize(text, multiline=True).split())
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def layout(table: Sequence[Sequence[str]], headers: Sequence[str] = ()) -> str:
    """``table``'s cells (one line each, as ``cell`` makes them) in left-aligned columns
    two spaces apart, the way tabulate 0.9 lays out text cells (``disable_numparse``):
    its "simple" format under ``headers`` (each column at least two wider than its
    heading, a rule of dashes), else "plain"; lines without trailing spaces. qctl laid
    tables out with tabulate, whose import compiles five regular expressions (~6 ms of
    CPU on every table command, this 0.1 ms); tests/cli/test_output.py checks this
    against tabulate."""
    lines = [*([list(headers)] if headers else []), *table]
    if not lines:
        return ""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    if headers:
        widths = [max(w, len(h) + 2) for w, h in zip(widths, headers, strict=True)]
        lines.insert(1, ["-" * w for w in widths])
    return "\n".join(
        "  ".join(text.ljust(w) for text, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet evaluates a cell starting with (OWASP's CSV injection rule)."""


def csv_raw() -> bool:
    """``QCTL_CSV_RAW=1``: CSV text cells exactly as stored, formulas and all."""
    import os

    from qctl.cli.context import env_flag

    return env_flag(os.environ, "QCTL_CSV_RAW")


def _csv_cell(value: Any, raw: bool = False) -> str:
    """A CSV cell. Text that a spreadsheet would run as a formula (a kind or an error
    written as ``=cmd|' /C calc'!A0``) gets a leading ``'``, which shows it as text,
    unless ``raw``; numbers are never touched (``-5`` stays a number)."""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return sanitize(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    if isinstance(value, bool):
        return "true" if value else "false"
    text = sanitize(str(value), multiline=True)  # csv quotes a newline; it cannot escape
    if isinstance(value, str) and not raw and text.startswith(FORMULA_START):
        return "'" + text
    return text


def _dumps(value: Any, indent: int | None) -> str:
    return json.dumps(plain(value), indent=indent, ensure_ascii=False)


def emit_rows(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    fmt: OutputFormat,
    *,
    out: TextIO | None = None,
    full: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """Print rows. Tables and CSV show ``columns``; JSON forms print ``full`` (every
    field) when given, else the rows themselves."""
    out = out or sys.stdout
    records = list(full) if full is not None else list(rows)
    if fmt == OutputFormat.JSON:
        out.write(_dumps(records, 2) + "\n")
    elif fmt == OutputFormat.JSONL:
        for record in records:
            out.write(_dumps(record, None) + "\n")
    elif fmt == OutputFormat.CSV:
        raw = csv_raw()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_csv_cell(row.get(c), raw) for c in columns])
    else:
        if not rows:
            note("no rows")  # stderr: an empty table must not look like a hung command
            return
        width = cell_width(out)
        table = [[cell(row.get(c), width) for c in columns] for row in rows]
        out.write(layout(table, [c.upper() for c in columns]) + "\n")


def stream_rows(
    pages: Iterable[Sequence[Any]],
    columns: Sequence[str],
    fmt: OutputFormat,
    record: Callable[[Any], Mapping[str, Any]],
    *,
    out: TextIO | None = None,
    shown: Callable[[Any], Mapping[str, Any]] | None = None,
) -> int:
    """``emit_rows`` of the rows of ``pages``, each page written as it comes (JSON as
    the one document ``emit_rows`` writes), so memory holds one page whatever the row
    count; a table, which sizes its columns on every row, is written at the end.
    ``record``: a row as JSON shows it (``emit_rows``' ``full``); ``shown``: as a table
    and CSV show it (``emit_rows``' rows; ``record`` when not given). Both take the row
    as fetched, so a table can show what JSON spells differently (a decoded payload's
    text). The number of rows."""
    out = out or sys.stdout
    show = shown or record
    if fmt == OutputFormat.TABLE:
        rows = [row for page in pages for row in page]
        emit_rows([show(r) for r in rows], columns, fmt, out=out, full=[record(r) for r in rows])
        return len(rows)
    count = 0
    raw = csv_raw()
    writer = csv.writer(out, lineterminator="\n")
    if fmt == OutputFormat.CSV:
        writer.writerow(columns)
    for page in pages:
        for row in page:
            if fmt == OutputFormat.JSON:
                # The list json.dumps(rows, indent=2) writes, one element at a time.
                out.write(("[\n" if not count else ",\n") + _indented(_dumps(record(row), 2)))
            elif fmt == OutputFormat.JSONL:
                out.write(_dumps(record(row), None) + "\n")
            else:
                cells = show(row)
                writer.writerow([_csv_cell(cells.get(c), raw) for c in columns])
            count += 1
        out.flush()
    if fmt == OutputFormat.JSON:
        out.write("\n]\n" if count else "[]\n")
    return count


STREAM_PAGE = 1000
"""Rows a listing fetches and writes at a time: memory holds one such page."""
MAX_TABLE_ROWS = 10_000
"""The most rows a table lists (it is sized on all of them, and read by a person)."""
MAX_ROWS = 1_000_000
"""The most rows one listing writes; ``--after`` continues past them."""

Row = TypeVar("Row")
Position = TypeVar("Position")


def stream_listing(
    fetch: Callable[[int, Position | None], Sequence[Row]],
    position: Callable[[Row], Position],
    record: Callable[[Row], Mapping[str, Any]],
    columns: Sequence[str],
    fmt: OutputFormat,
    limit: int,
    after: Position | None,
    *,
    shown: Callable[[Any], Mapping[str, Any]] | None = None,
) -> tuple[int, Position | None]:
    """Every keyset listing's output: up to ``limit`` rows from ``after`` on (every row
    in JSON, JSON lines and CSV unless ``--limit`` was given), fetched
    ``STREAM_PAGE`` at a time (``fetch(n, after)``: the next ``n`` rows after a
    position; ``position(row)``: where a row ends its page) and written as they come
    (``stream_rows``; ``record``: a fetched row as JSON shows it, ``shown`` as a table
    and CSV do), so memory holds one fetch whatever ``--limit``. ``--limit`` is capped (a table
    at ``MAX_TABLE_ROWS``, any form at ``MAX_ROWS``). Returns the number of rows written
    and, when that is ``limit`` (there may be more), the last row's position: where the
    next page starts."""
    if fmt != OutputFormat.TABLE and _limit_defaulted():
        # A machine reads every row unless it asked for a page: a cut it would not see
        # (the next page's cursor goes to stderr) would pass for the whole listing.
        limit = sys.maxsize
    elif fmt == OutputFormat.TABLE and limit > MAX_TABLE_ROWS:
        raise ParseError(
            f"--limit: at most {MAX_TABLE_ROWS} rows in a table; -o jsonl or -o csv "
            f"stream up to {MAX_ROWS}"
        )
    elif limit > MAX_ROWS:
        raise ParseError(f"--limit: at most {MAX_ROWS} rows; --after continues from there")
    last: list[Row] = []  # the newest fetch's last row

    def pages() -> Iterator[Sequence[Row]]:
        left, at = limit, after
        while left > 0:
            want = min(STREAM_PAGE, left)
            batch = fetch(want, at)
            last[:] = batch[-1:]
            yield batch
            if len(batch) < want:
                return
            left -= len(batch)
            at = position(batch[-1])

    count = stream_rows(pages(), columns, fmt, record, shown=shown)
    return count, (position(last[0]) if count == limit and last else None)


def _limit_defaulted() -> bool:
    """Whether the command's ``--limit`` was left at its default (a page of a table)."""
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is None or "limit" not in ctx.params:
        return False
    return ctx.get_parameter_source("limit") == ParameterSource.DEFAULT


def _indented(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))


def emit_object(record: Mapping[str, Any], fmt: OutputFormat, *, out: TextIO | None = None) -> None:
    """Print one record: a two-column table, or one JSON object."""
    out = out or sys.stdout
    if fmt == OutputFormat.JSON:
        out.write(_dumps(record, 2) + "\n")
    elif fmt == OutputFormat.JSONL:
        out.write(_dumps(record, None) + "\n")
    elif fmt == OutputFormat.CSV:
        emit_rows([record], list(record), fmt, out=out)
    else:
        width = cell_width(out)
        table = [[cell(key, width), cell(value, width)] for key, value in record.items()]
        out.write(layout(table) + "\n")


def emit_detail(
    fmt: OutputFormat,
    head: Mapping[str, Any],
    document: Mapping[str, Any],
    tables: Sequence[tuple[Sequence[Mapping[str, Any]], Sequence[str]]] = (),
    text: str = "",
) -> None:
    """One item with its parts (``jobs show``, ``dags show``): JSON forms print
    ``document`` whole; CSV prints ``head`` as one row (one table per CSV document; the
    parts have list verbs of their own); tables print ``head`` in two columns, then each
    non-empty table and ``text``, after blank lines."""
    if fmt in (OutputFormat.JSON, OutputFormat.JSONL):
        emit_object(document, fmt)
        return
    emit_object(head, fmt)
    if fmt == OutputFormat.CSV:
        return
    for rows, columns in tables:
        if rows:
            sys.stdout.write("\n")
            emit_rows(rows, columns, fmt)
    if text:
        sys.stdout.write(f"\n{sanitize(text, multiline=True)}\n")


def emit_result(result: Mapping[str, Any], message: str, fmt: OutputFormat) -> None:
    """Print what a writing verb did: a sentence for people, the record for machines
    (and for the write's audit entry)."""
    audit.note(plain(result))
    if fmt == OutputFormat.TABLE:
        sys.stdout.write(sanitize(message, multiline=True) + "\n")
    else:
        emit_object(result, fmt)


def emit_outcomes(
    rows: Sequence[Mapping[str, Any]],
    lines: Sequence[str],
    columns: Sequence[str],
    fmt: OutputFormat,
) -> None:
    """Print what a writing verb did to each of several rows: a line each for people,
    the rows for machines (and for the write's audit entry)."""
    audit.note([plain(r) for r in rows])
    if fmt == OutputFormat.TABLE:
        for line in lines:
            sys.stdout.write(sanitize(line, multiline=True) + "\n")
    else:
        emit_rows(rows, columns, fmt)


def as_dict(value: Any) -> dict[str, Any]:
    """The fields of a dataclass, unconverted (tables format them; ``plain`` for JSON)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def note(message: str) -> None:
    """A diagnostic for people: stderr, never mixed into the data. The data printed
    so far goes out first, so a terminal or ``2>&1`` shows the two in order."""
    sys.stdout.flush()
    typer.echo(sanitize(message, multiline=True), err=True)


def page_note(
    fmt: OutputFormat,
    shown: int,
    total: int | None,
    next_cursor: str | None,
    estimated: bool = False,
) -> None:
    """Every paged listing's notes on stderr: in a table how many rows of how many
    matching (``~`` for an estimate), and, after a full page in any format, the cursor
    its next page starts after."""
    if fmt == OutputFormat.TABLE and total is not None:
        note(f"{shown} shown of {'~' if estimated else ''}{total} matching")
    if next_cursor:
        note(f"next page: --after {next_cursor}")


def rows_of(values: Iterable[Any]) -> list[dict[str, Any]]:
    return [as_dict(v) for v in values]
