"""Checks at the API edge, shared by both backends: bad input raises ``InvalidInput``
before anything is written."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl_kit.decode import FarInstant
from qctl_kit.errors import InvalidInput, not_unicode
from qctl_kit.values import duration
from qctl_store.config import DEFAULT_MAX_ATTEMPTS, REPLAY_LIMIT
from qctl_store.types import JobState, Source, Subscriber

MAX_HINT_NAME_BYTES = 3000
"""The most a kind, event type, subscriber name or task key may take in a change hint
(JSON-encoded): two of them, the schema and the rest of a hint stay under PostgreSQL's
8000-byte NOTIFY payload, which would otherwise fail the write on PostgreSQL only."""

_ZERO = timedelta(0)


def hint_name(value: str, what: str) -> str:
    # A character takes at most 6 bytes in JSON, so short names need no encoding.
    if len(value) * 6 > MAX_HINT_NAME_BYTES:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if size > MAX_HINT_NAME_BYTES:
            raise InvalidInput(
                f"{what} is too long ({size} bytes in a change hint, at most {MAX_HINT_NAME_BYTES})"
            )
    return value


def unicode_text(value: str, what: str) -> str:
    """Text both databases can store: a str with a lone surrogate (bytes decoded with
    ``surrogateescape``, say) has no UTF-8 form, and the drivers would fail on it with a
    ``UnicodeEncodeError`` instead of naming the argument."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise not_unicode(exc, what) from None
    return value


def kind(value: str, what: str = "kind") -> str:
    if not isinstance(value, str) or not value or value.isspace():
        raise InvalidInput(f"{what} must be a non-empty string")
    return hint_name(unicode_text(value, what), what)


def kinds(values: list[str]) -> list[str]:
    if not isinstance(values, list | tuple | set | frozenset):
        raise InvalidInput(f"kinds must be a list of strings, not {type(values).__name__}")
    return [kind(k) for k in values]


def optional_kind(value: str) -> str:
    """A kind filter: ``""`` means every kind."""
    if not isinstance(value, str):
        raise InvalidInput(f"kind must be a string, not {type(value).__name__}")
    return kind(value) if value else value


def idempotency_key(value: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"idempotency key must be a string, not {type(value).__name__}")
    return unicode_text(value, "idempotency key")


def uuid_arg(value: uuid.UUID, what: str = "id") -> uuid.UUID:
    if not isinstance(value, uuid.UUID):
        raise InvalidInput(f"{what} must be a uuid.UUID, not {type(value).__name__}")
    return value


def source(value: Source | str) -> Source:
    try:
        return Source(value)
    except ValueError:
        raise InvalidInput(
            f"unknown source {value!r} (one of {', '.join(s.value for s in Source)})"
        ) from None


def job_state(value: JobState | str) -> JobState:
    try:
        return JobState(value)
    except ValueError:
        raise InvalidInput(
            f"unknown job state {value!r} (one of {', '.join(s.value for s in JobState)})"
        ) from None


def retention(value: timedelta) -> bool:
    """A vacuum's retention checked; False when it is zero, for which azync's vacuums
    delete nothing."""
    return duration(value, "retention") > _ZERO


def instant(value: datetime | None, what: str) -> datetime | None:
    """Aware datetimes only (a naive one is ambiguous); returned in UTC. A
    ``decode.FarInstant`` a read returned (``infinity``) is returned as it is."""
    if value is None or isinstance(value, FarInstant):
        return value
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{what} must be timezone-aware (got a naive datetime)")
    return value.astimezone(UTC)


def required_instant(value: datetime | None, what: str) -> datetime:
    out = instant(value, what)
    if out is None:
        raise InvalidInput(f"{what} is required")
    return out


def limit(value: int, what: str = "limit", *, maximum: int = 1_000_000) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(f"{what} must be an integer, not {type(value).__name__}")
    if value > maximum:
        raise InvalidInput(f"{what} {value} is out of range (at most {maximum})")
    return value


def int64(value: int, what: str) -> int:
    """A signed 64-bit integer (a ``bigint`` column on PostgreSQL, INTEGER on SQLite)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(f"{what} must be an integer, not {type(value).__name__}")
    if not -(2**63) <= value < 2**63:
        raise InvalidInput(f"{what} {value} is out of the 64-bit integer range")
    return value


def replay_limit(value: int) -> int:
    """A replay's limit; ``<= 0`` is azync's default (``REPLAY_LIMIT``)."""
    limit(value, "limit", maximum=2**62)
    return value if value > 0 else REPLAY_LIMIT


def non_negative(value: int, what: str) -> int:
    if value.__class__ is not int or not 0 <= value <= 2**31 - 1:  # checked once per job
        limit(value, what, maximum=2**31 - 1)  # the type and range errors
        if value < 0:
            raise InvalidInput(f"{what} must not be negative")
    return value


def enqueue_budget(max_attempts: int, explicit: bool) -> tuple[int, bool]:
    """``(max_attempts, max_attempts_explicit)`` as azync's queue producer writes them:
    no budget (0) is its runtime default, unpinned, because a zero budget would make a
    Go worker dead-letter the job on its first failure."""
    if non_negative(max_attempts, "max_attempts") == 0:
        return DEFAULT_MAX_ATTEMPTS, False
    return max_attempts, bool(explicit)


def meta(value: dict[str, str] | None) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or (
        value and not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    ):
        raise InvalidInput("meta must map strings to strings")
    return value


# One encoder for every call: json.dumps with options builds a new one each time, which
# showed up in batched-enqueue profiles.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def json_text(value: Any, what: str = "payload") -> str:
    """Encode a JSON value compactly; reject what JSON cannot carry."""
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{what} is not JSON-serialisable: {exc}") from None
    except RecursionError:
        raise InvalidInput(f"{what} is nested too deeply") from None
    return unicode_text(text, what)


def subscriber(sub: Subscriber) -> Subscriber:
    kind(sub.name, "subscriber name")
    kind(sub.event_type, "event type")
    if non_negative(sub.max_attempts, "max_attempts") == 0:
        raise InvalidInput("max_attempts must be positive")
    return sub
