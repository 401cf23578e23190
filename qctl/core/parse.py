"""Parsers for what operators type: durations, instants, JSON, ``key=value``, ids and
page cursors.

Every parser returns a value or raises ``ParseError`` (an ``InvalidInput``, so the CLI
reports it as a usage error, exit 2); nothing else escapes. The dashboard uses the same
functions for its prompts.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from qctl_kit.decode import FarInstant
from qctl_kit.errors import InvalidInput, StoreError
from qctl_kit.values import MAX_DURATION, PageCursor

MIN_PREFIX = 8
"""Hex characters an id prefix needs before it is looked up."""


class ParseError(InvalidInput):
    """Input that does not parse; the message says what was expected."""


class AmbiguousId(InvalidInput):
    """An id prefix matches more than one row; the message lists candidates."""


class IdNotFound(StoreError):
    """No row's id matches (exit code 3, like the store's ``NotFound``)."""


_UNITS = {
    "ms": timedelta(milliseconds=1),
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
}
# Patterns are strings, compiled by ``re`` on first use (and cached there): compiling
# them at import would cost every command, also the many that parse no duration or id.
_PART = r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)"
_DURATION = r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+"
DURATION_HELP = "a duration such as 90s, 15m, 36h, 7d or 1h30m"


def parse_duration(text: str) -> timedelta:
    """``90s``, ``15m``, ``36h``, ``7d``, ``2w``, ``500ms`` and combinations (``1h30m``);
    a bare ``0`` is zero; at most ``MAX_DURATION`` (1000 years)."""
    value = text.strip().lower()
    if value == "0":
        return timedelta(0)
    if not re.fullmatch(_DURATION, value):
        raise ParseError(f"invalid duration {text!r}: expected {DURATION_HELP}")
    try:
        total = timedelta(0)
        for number, unit in re.findall(_PART, value):
            total += float(number) * _UNITS[unit]
    except (OverflowError, ValueError):
        total = MAX_DURATION + timedelta(days=1)
    if total > MAX_DURATION:
        # Added to or taken from now, it would name an instant no clock can hold.
        raise ParseError(
            f"duration {text!r} is out of range (at most {MAX_DURATION.days} days)"
        ) from None
    return total


ZERO_AGE = "--older-than 0 would remove everything finished up to now; give a positive age"
"""Every vacuum's refusal of a zero age (a cutoff of now)."""


def retention_age(age: timedelta) -> timedelta:
    """A vacuum's ``--older-than``: more than 0, which would be everything."""
    if age <= timedelta(0):
        raise ParseError(ZERO_AGE)
    return age


def format_duration(value: timedelta) -> str:
    """A compact human form (``1d2h``, ``45s``, ``350ms``) for tables."""
    us = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if us < 0 else ""
    us = abs(us)
    if us < 1_000_000:
        return f"{sign}{us // 1000}ms"
    seconds = us // 1_000_000
    parts = []
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return sign + "".join(parts[:2])


def parse_instant(text: str, now: datetime | None = None, *, ago: bool = True) -> datetime:
    """RFC 3339 / ISO 8601 (``2026-01-02T03:04:05Z``; a value without an offset is UTC;
    a date alone is its midnight UTC), ``now``, or relative to now: ``-2h``, ``+15m``,
    and a duration unsigned as every other option takes it (``1d``) that long ago,
    unless ``ago`` is False (an instant that is usually ahead, as a job's run time,
    where ``15m`` could mean either): then the sign is required."""
    value = text.strip()
    base = now or datetime.now(UTC)
    if value.lower() == "now":
        return base
    unsigned = re.fullmatch(_DURATION, value.lower()) is not None
    if unsigned and not ago:
        raise ParseError(f"instant {text!r}: give -{value} for before now or +{value} for later")
    if unsigned or value[:1] in ("-", "+"):
        delta = parse_duration(value if unsigned else value[1:])
        try:
            return base + delta if value[0] == "+" else base - delta
        except OverflowError:
            raise ParseError(f"instant {text!r} is out of range") from None
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ParseError(
            f"invalid instant {text!r}: expected RFC 3339 (2026-01-02T03:04:05Z), "
            "'now', or relative like 2h or -2h (ago) and +2h (ahead)"
        ) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str, what: str = "JSON") -> Any:
    """A JSON document; NaN and Infinity are rejected (they are not JSON)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"invalid {what}: {exc}") from None


def parse_key_value(text: str) -> tuple[str, str]:
    """``key=value`` (the value may contain ``=`` and be empty; the key may not)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ParseError(f"invalid {text!r}: expected key=value")
    return key.strip(), value


def parse_meta(items: Iterable[str] | None) -> dict[str, str]:
    """Repeated ``--meta k=v`` options as a dict (a later key wins)."""
    return dict(parse_key_value(item) for item in items or ())


def parse_pair(text: str, what: str) -> tuple[str, Any]:
    """``KEY=VALUE`` (a string) or ``KEY:=JSON`` (any JSON value), as HTTPie writes a
    request's fields."""
    key, value = parse_key_value(text)
    if not key.endswith(":"):
        return key, value
    if not key[:-1].strip():
        raise ParseError(f"{what}: {text!r}: expected KEY:=JSON")
    return key[:-1].strip(), parse_json(value, f"JSON in {what} {text!r}")


def parse_fragment(items: Iterable[str] | None, option: str) -> dict[str, Any] | None:
    """Repeated JSON-filter options (River's ``--args``, Oban's ``--meta``): each a JSON
    object, or ``KEY=VALUE`` (a string) or ``KEY:=JSON`` for one key (``parse_pair``),
    merged into the one object a job's column must contain (a later key wins); None for
    none."""
    merged: dict[str, Any] = {}
    for text in items or ():
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            if text.lstrip().startswith("{") or "=" not in text:
                raise ParseError(
                    f"{option}: {text!r} is neither a JSON object nor KEY=VALUE ({exc})"
                ) from None
            value = dict([parse_pair(text, option)])
        if not isinstance(value, dict):
            raise ParseError(f"{option}: {text!r} is JSON but not an object")
        merged.update(value)
    return merged if items else None


_HEX = r"[0-9a-f]+"


def parse_id_text(text: str) -> uuid.UUID | str:
    """A whole UUID, or a lower-case hex prefix (dashes ignored) of at least 8 chars."""
    value = text.strip().lower()
    compact = value.replace("-", "")
    if not compact or not re.fullmatch(_HEX, compact):
        raise ParseError(f"invalid id {text!r}: expected a UUID or a hex prefix of it")
    if len(compact) == 32:
        return uuid.UUID(hex=compact)
    if len(compact) > 32:
        raise ParseError(f"invalid id {text!r}: longer than a UUID")
    if len(compact) < MIN_PREFIX:
        raise ParseError(
            f"id prefix {text!r} is too short: give at least {MIN_PREFIX} hex characters"
        )
    return compact


class PrefixFinder(Protocol):
    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]: ...


AMBIGUOUS_SHOWN = 5
"""Ids an ambiguous prefix's error lists; a prefix lookup asks for one more, to say
there are more."""


def ambiguous(entity: str, text: str, found: Sequence[object]) -> AmbiguousId:
    """The one wording of a prefix several ids start with, on every system: the first
    of them whole, to copy (an id that begins with its creation time, as a UUIDv7, shares
    its first characters with every id made in the same minute)."""
    shown = ", ".join(str(i) for i in found[:AMBIGUOUS_SHOWN])
    more = ", ..." if len(found) > AMBIGUOUS_SHOWN else ""
    return AmbiguousId(f"{entity} id prefix {text!r} is ambiguous: {shown}{more}")


def resolve_id(store: PrefixFinder, entity: str, text: str) -> uuid.UUID:
    """The id ``text`` names: a whole UUID as is, or the single id starting with the
    prefix. No match raises ``IdNotFound``; several raise ``AmbiguousId`` listing them."""
    parsed = parse_id_text(text)
    if isinstance(parsed, uuid.UUID):
        return parsed
    found = store.find_ids_by_prefix(entity, parsed, limit=AMBIGUOUS_SHOWN + 1)
    if not found:
        raise IdNotFound(f"no {entity} id starts with {text!r}")
    if len(found) > 1:
        raise ambiguous(entity, text, found)
    return found[0]


def cursor_text(cursor: PageCursor) -> str:
    """The ``--after`` text of a keyset position, opaque to the operator: every listing
    prints its next page's cursor in this one form, and ``parse_cursor`` reads it."""
    key = "-" if cursor.sort_key is None else _instant_text(cursor.sort_key)
    return base64.urlsafe_b64encode(f"{key}|{cursor.id}".encode()).decode().rstrip("=")


def _instant_text(value: datetime) -> str:
    # A FarInstant (out of datetime's range) as stored: the next page compares with it.
    return value.isoformat() if isinstance(value, datetime) else str(value)


_FAR = re.compile(r"-?infinity|-?\d+|\d{5,}-\d\d-\d\d [\d:.+-]*|.* BC")
"""What a ``FarInstant`` stored by PostgreSQL or SQLite reads like."""


def parse_cursor(text: str) -> PageCursor:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        key, _, ident = raw.partition("|")
        sort_key: Any = None
        if _FAR.fullmatch(key):
            sort_key = FarInstant(key)
        elif key != "-":
            sort_key = datetime.fromisoformat(key).astimezone(UTC)
        return PageCursor(sort_key=sort_key, id=uuid.UUID(ident))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ParseError(
            f"--after: {text!r} is not a cursor printed by a qctl listing (its `next page:`)"
        ) from None
