"""PostgreSQL's jsonb containment (``@>``) on decoded JSON values, for the backend whose
database has no such operator (SQLite registers ``contains`` as a SQL function)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from qctl_kit import decode


def contains(value: Any, needle: Any, top: bool = True) -> bool:
    """Whether ``value`` contains ``needle`` as jsonb does: an object contains every key
    of ``needle`` with a contained value, an array contains every element of ``needle``
    in some element of its own, a scalar equals (numbers by value, never a boolean), and
    at the top level only an array also contains a scalar that is one of its elements."""
    if isinstance(needle, dict):
        return isinstance(value, dict) and all(
            k in value and contains(value[k], v, False) for k, v in needle.items()
        )
    if isinstance(needle, list):
        return isinstance(value, list) and all(
            any(contains(e, n, False) for e in value) for n in needle
        )
    if isinstance(value, list):
        return top and any(_scalar_equal(e, needle) for e in value)
    return _scalar_equal(value, needle)


def _scalar_equal(a: Any, b: Any) -> bool:
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


@lru_cache(maxsize=32)
def _needle(text: str) -> Any:
    return json.loads(text)


def contains_text(value: str | None, needle: str) -> bool:
    """``contains`` on JSON texts, as a SQL function: a NULL (absent) value contains
    nothing; the needle, the same for every row of a statement, is decoded once."""
    if value is None:
        return False
    try:
        decoded = decode.loads(value)
    except ValueError:  # not written by a store; contains nothing
        return False
    return contains(decoded, _needle(needle))
