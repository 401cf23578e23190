"""JSON of any depth: ``json.loads``' parser recurses, so a valid document nested
deeper than the interpreter's recursion limit (about a thousand levels, which a Go
producer writes without trouble) raises RecursionError there; ``parse`` keeps a stack of
its own (``qctl_kit.decode.loads`` falls back on it)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from json.decoder import scanstring as _scanstring  # type: ignore[attr-defined]
from typing import Any

_JSON_ATOM = re.compile(
    r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity"
)
_JSON_CONSTANTS = {
    "true": True, "false": False, "null": None,
    "NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf,
}  # fmt: skip
_WS = re.compile(r"[ \t\n\r]*")


def parse(text: str, parse_int: Callable[[str], Any] = int) -> Any:
    """JSON parsed with a stack of its own: nesting deeper than the interpreter's stack
    (which ``json.loads`` uses) is plain data; ``parse_int`` makes an integer of its
    literal, as ``json.loads``' does. Raises ``ValueError`` on malformed text."""
    root: list[Any] = []
    stack: list[Any] = [root]  # open containers; a dict's pending key rides beside it
    keys: list[Any] = [None]
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    expect_value = True
    while True:
        top = stack[-1]
        if expect_value:
            if isinstance(top, dict) and keys[-1] is None:
                if text.startswith("}", pos) and not top:
                    pos += 1
                    expect_value = False
                    stack.pop(), keys.pop()
                    _json_add(stack, keys, top)
                    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                    continue
                if not text.startswith('"', pos):
                    raise ValueError(f"key expected at {pos}")
                key, pos = _scanstring(text, pos + 1)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                if not text.startswith(":", pos):
                    raise ValueError(f"':' expected at {pos}")
                keys[-1] = key
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                continue
            char = text[pos : pos + 1]
            if char in ("[", "{"):
                stack.append([] if char == "[" else {})
                keys.append(None)
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if char == "[" and text.startswith("]", pos):
                    expect_value = False
                    stack.pop(), keys.pop()
                    _json_add(stack, keys, [])
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                continue
            if char == '"':
                value, pos = _scanstring(text, pos + 1)
            else:
                atom = _JSON_ATOM.match(text, pos)
                if atom is None:
                    raise ValueError(f"value expected at {pos}")
                word, pos = atom.group(), atom.end()
                is_number = word not in _JSON_CONSTANTS
                integral = is_number and not any(c in word for c in ".eE")
                if integral:
                    value = parse_int(word)
                else:
                    value = float(word) if is_number else _JSON_CONSTANTS[word]
            _json_add(stack, keys, value)
            expect_value = False
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            continue
        if top is root:
            if pos != len(text) or len(root) != 1:
                raise ValueError(f"extra data at {pos}")
            return root[0]
        char = text[pos : pos + 1]
        closing = "]" if isinstance(top, list) else "}"
        if char == ",":
            expect_value = True
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        elif char == closing:
            stack.pop(), keys.pop()
            _json_add(stack, keys, top)
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        else:
            raise ValueError(f"',' or {closing!r} expected at {pos}")


def _json_add(stack: list[Any], keys: list[Any], value: Any) -> None:
    top = stack[-1]
    if isinstance(top, dict):
        top[keys[-1]] = value
        keys[-1] = None
    else:
        top.append(value)
