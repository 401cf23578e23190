"""Values read from any system's database, decoded so that no row breaks a view.

Knows no system: azync's store, the SQL database base of the other systems
(``qctl.core.sqldb``) and every front end decode and render through it.

- JSON (``loads``): any depth (``deepjson`` keeps a stack of its own where ``json``'s
  parser recurses), an integer past the interpreter's digit limit folded into a marker
  string (``int()`` refuses to build it, and a Python worker's ``json.loads`` would
  refuse the document), a text past ``MAX_JSON`` bytes folded whole. Never an exception
  for a valid document.
- Instants outside ``datetime``'s range (PostgreSQL's ``infinity``, ``-infinity``, years
  past 9999 or before 1; an SQLite column holding what does not parse) are ``FarInstant``:
  the stored text, sorted before or after every ``datetime``.
- SQLite TEXT that is not UTF-8 read with replacement characters (``SQLITE_TEXT``).
- Rendering (``fold``): nesting cut at ``JSON_DEPTH`` levels (``json.dumps`` and every
  renderer recurse), NaN and infinities as strings, so JSON output is strict JSON.

Every marker starts with ``…(cut:`` and says what was cut.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl_kit import deepjson

JSON_DEPTH = 100
"""How deep the console renders a JSON value (tables, JSON output, the dashboard):
rendering and ``json.dumps`` recurse, and a producer may write JSON nested deeper than
Python's recursion limit (a thousand levels)."""
MAX_JSON = 64 * 1024 * 1024
"""Bytes of JSON text decoded; a longer value is folded into a marker (no queue's
payload is near it: PostgreSQL's own limit on a jsonb value is 255 MB)."""
LEAD = 20
"""Leading digits a folded integer keeps."""


def cut_text(depth: int = JSON_DEPTH) -> str:
    """What stands for a list or object nested deeper than ``depth`` levels."""
    return f"…(cut: nested deeper than {depth} levels)"


def _digit_limit() -> int:
    return sys.get_int_max_str_digits() or sys.maxsize


def _integer(word: str) -> int | str:
    """A JSON integer literal: an ``int``, or past the interpreter's digit limit a marker
    with its leading digits and digit count."""
    digits = len(word) - word.startswith("-")
    if digits <= _digit_limit():
        return int(word)
    return f"{word[: LEAD + word.startswith('-')]}…(cut: {digits} digits)"


def loads(text: str | bytes) -> Any:
    """A JSON text decoded (see the module doc). Raises ``ValueError`` on text that is not
    JSON (``UnicodeDecodeError`` on bytes that are not UTF-8)."""
    if len(text) > MAX_JSON:
        return f"…(cut: {len(text)} bytes of JSON)"
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError):  # too deep, or an integer too long for int()
        return deepjson.parse(
            text if isinstance(text, str) else bytes(text).decode(), parse_int=_integer
        )


def json_value(value: str | bytes | memoryview | None) -> Any:
    """A JSON column's value (SQLite TEXT, or bytes such as a bytea payload) decoded by
    ``loads``; what is not JSON as its text (bytes escaped: ``b'\\x00...'``), never
    anything executed or unpickled, never an exception; NULL is None."""
    if value is None:
        return None
    try:
        return loads(value if isinstance(value, str) else bytes(value).decode("utf-8"))
    except ValueError:  # not JSON, or bytes not UTF-8 (UnicodeDecodeError)
        return value if isinstance(value, str) else repr(bytes(value))


SQLITE_TEXT = functools.partial(str, encoding="utf-8", errors="replace")
"""sqlite3's ``text_factory``: a TEXT value that is not UTF-8 (SQLite stores what it is
given) read with U+FFFD for its bad bytes, where the default fails the whole fetch."""

_CANONICAL = json.JSONDecoder()


def jsonb(data: str | bytes | memoryview) -> Any:
    """A jsonb value from the text PostgreSQL writes for it, which is canonical (UTF-8,
    one value, no whitespace around it): ``raw_decode`` skips ``json.loads``' encoding
    detection and whitespace checks (0.7 against 2.6 us a value); what it cannot decode
    goes to ``loads``."""
    text = data if isinstance(data, str) else bytes(data).decode()
    if len(text) <= MAX_JSON:
        try:
            return _CANONICAL.raw_decode(text)[0]
        except (RecursionError, ValueError):
            pass
    return loads(text)


def fold(value: Any, depth: int = JSON_DEPTH) -> Any:
    """``value`` as every view can render it: a list or dict nested deeper than ``depth``
    levels replaced by ``cut_text``, NaN and infinities as the strings JavaScript spells
    them, an integer too long to print folded; the recursion is bounded by ``depth``."""
    if isinstance(value, dict):
        if depth <= 0:
            return cut_text()
        return {k: fold(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth <= 0:
            return cut_text()
        return [fold(v, depth - 1) for v in value]
    return scalar(value)


def scalar(value: Any) -> Any:
    """A leaf value as ``fold`` renders it."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    # At least 3 bits a decimal digit: only an integer this long can be too long to print.
    if isinstance(value, int) and value.bit_length() > 3 * _digit_limit():
        try:
            str(value)
        except ValueError:  # more digits than the interpreter prints
            digits = int(math.log10(abs(value))) + 1
            lead = abs(value) // 10 ** (digits - LEAD)
            return f"{'-' if value < 0 else ''}{lead}…(cut: {digits} digits)"
    return value


class FarInstant(str):
    """An instant ``datetime`` cannot hold, as the database stored it (``infinity``,
    ``-infinity``, ``10000-01-01 00:00:00+00``, ``4714-11-24 00:00:00+00 BC``, an SQLite
    integer out of range or text that does not parse): shown as that text, and ordered
    before every ``datetime`` when it is in the past (``-``, ``BC``), after otherwise."""

    __slots__ = ()

    @property
    def past(self) -> bool:
        return self.startswith("-") or self.endswith(" BC")

    def _key(self, other: object) -> tuple[int, str] | None:
        if isinstance(other, FarInstant):
            return (-1 if other.past else 1, str(other))
        if isinstance(other, datetime):
            return (0, "")
        return None

    def _compare(self, other: object) -> int | None:
        theirs = self._key(other)
        if theirs is None:
            return None
        mine = (-1 if self.past else 1, str(self))
        return (mine > theirs) - (mine < theirs)

    def __lt__(self, other: object) -> bool:
        c = self._compare(other)
        return NotImplemented if c is None else c < 0

    def __le__(self, other: object) -> bool:
        c = self._compare(other)
        return NotImplemented if c is None else c <= 0

    def __gt__(self, other: object) -> bool:
        c = self._compare(other)
        return NotImplemented if c is None else c > 0

    def __ge__(self, other: object) -> bool:
        c = self._compare(other)
        return NotImplemented if c is None else c >= 0

    __hash__ = str.__hash__


Instant = datetime | FarInstant
"""What an instant column decodes to."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def elapsed(start: Instant | None, end: Instant | None) -> timedelta | None:
    """``end - start``; None where either is missing or a ``FarInstant`` (no duration)."""
    if isinstance(start, datetime) and isinstance(end, datetime):
        return end - start
    return None


def from_epoch(value: Any, per_second: int) -> Instant | None:
    """An instant stored as a count of ``1/per_second`` seconds since the Unix epoch
    (SQLite's azync columns: µs; DBOS: ms); NULL is None, a value out of range or not an
    integer is a ``FarInstant`` of its text."""
    if value is None:
        return None
    try:
        count = int(value)
        seconds, part = divmod(count, per_second)
        return _EPOCH + timedelta(seconds=seconds, microseconds=part * (1_000_000 // per_second))
    except (TypeError, ValueError, OverflowError):
        return FarInstant(value)


_FRACTION = re.compile(r"(\.\d{6})\d+")


def from_sqlite_text(value: Any) -> Instant | None:
    """An instant stored as SQLite's date-time text (``YYYY-MM-DD HH:MM:SS[.fff]``, UTC
    unless it names an offset, as SQLite's date functions write it); NULL is None, text
    that does not parse a ``FarInstant`` of it."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(_FRACTION.sub(r"\1", str(value).strip()))
    except ValueError:
        return FarInstant(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def register_postgres(adapters: Any) -> None:
    """Loaders on a psycopg ``AdaptersMap`` (a connection's, or one that connections are
    opened with): json and jsonb through ``loads``/``jsonb``, timestamptz and timestamp
    as psycopg decodes them or, out of ``datetime``'s range, ``FarInstant``."""
    import psycopg
    from psycopg.adapt import Loader
    from psycopg.postgres import types
    from psycopg.pq import Format

    class Json(Loader):
        def load(self, data: Any) -> Any:
            return loads(bytes(data).decode())

    class JsonBinary(Json):
        format = Format.BINARY  # the same text

    class Jsonb(Loader):
        def load(self, data: Any) -> Any:
            return jsonb(data)

    class JsonbBinary(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> Any:
            return jsonb(bytes(data)[1:])  # a version byte, then the text

    adapters.register_loader("json", Json)
    adapters.register_loader("json", JsonBinary)
    adapters.register_loader("jsonb", Jsonb)
    adapters.register_loader("jsonb", JsonbBinary)

    for name in ("timestamptz", "timestamp"):
        oid = types[name].oid
        for fmt in (Format.TEXT, Format.BINARY):
            base = psycopg.adapters.get_loader(oid, fmt)
            assert base is not None
            adapters.register_loader(oid, _instant_loader(Loader, base, fmt))


_INT64_MAX = 2**63 - 1


def _instant_loader(loader: type[Any], base: type[Any], fmt: Any) -> type[Any]:
    """A loader that decodes with ``base`` (psycopg's own, in C where installed; a Python
    subclass of a C loader would be bypassed) and keeps what it refuses as ``FarInstant``."""
    from psycopg import DataError

    class InstantLoader(loader):
        format = fmt

        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self._base = base(oid, context)

        def load(self, data: Any) -> Any:
            try:
                return self._base.load(data)
            except (DataError, ValueError, OverflowError):
                return FarInstant(_far_text(bytes(data), fmt))

    return InstantLoader


def _far_text(data: bytes, fmt: Any) -> str:
    """What PostgreSQL stored: its text, or from the binary form (µs since 2000-01-01,
    int64's extremes for the infinities) the infinity or a count of µs past the range."""
    if not fmt:  # Format.TEXT is 0
        return data.decode()
    micros = int.from_bytes(data, "big", signed=True)
    if abs(micros) == _INT64_MAX or micros == -_INT64_MAX - 1:
        return "infinity" if micros > 0 else "-infinity"
    return f"{micros} µs from 2000-01-01"
