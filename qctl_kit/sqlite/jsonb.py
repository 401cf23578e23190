"""SQLite's JSONB (https://sqlite.org/jsonb.html), for SQLite libraries older than 3.45,
which store and read it as an opaque BLOB.

A JSONB value is one element: a header byte whose low four bits are the element's type and
whose high four bits are its payload's size (0 to 11), or say that the size follows in the
next 1, 2, 4 or 8 bytes (12 to 15, big-endian), then the payload. An array's payload is its
elements, an object's its keys and values alternating; a number's is its JSON (or JSON5)
text, a string's its text with or without escapes, as the type says.

``install(conn)`` gives an older library's connection the functions a system's SQL names
(``json``, ``jsonb_set`` and ``jsonb_remove`` with a top-level key path), each with
SQLite's own effect; a library with JSONB keeps its own. Never an exception from a read
(``json`` of a BLOB that is not JSONB is the BLOB), no recursion (a value nested however
deep is walked with a stack of its own), nothing past ``qctl_kit.decode.MAX_JSON`` bytes
rendered."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from typing import Any

from qctl_kit import deepjson
from qctl_kit.decode import MAX_JSON

NULL, TRUE, FALSE, INT, INT5, FLOAT, FLOAT5, TEXT, TEXTJ, TEXT5, TEXTRAW, ARRAY, OBJECT = range(13)
"""The element types, by their codes."""
NATIVE = (3, 45, 0)
"""The first SQLite release that reads and writes JSONB itself."""

_LITERALS = {NULL: "null", TRUE: "true", FALSE: "false"}
_KEY_PATH = re.compile(r'^\$\.(?:"([^"]*)"|([A-Za-z_][A-Za-z0-9_]*))$')
_JSON5_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|'|v|0|\r\n|[\n\r\u2028\u2029])")


def header(data: bytes, at: int) -> tuple[int, int, int]:
    """The element at ``at``: its type, where its payload starts and where it ends."""
    if at >= len(data):
        raise ValueError("JSONB: truncated")
    first = data[at]
    kind, size = first & 0x0F, first >> 4
    start = at + 1
    if size >= 12:
        width = 1 << (size - 12)
        size = int.from_bytes(data[start : start + width], "big")
        start += width
    end = start + size
    if end > len(data) or kind > OBJECT:
        raise ValueError("JSONB: malformed element")
    return kind, start, end


def _json5_text(payload: str) -> str:
    """A TEXT5 payload's JSON5 escapes as JSON's."""

    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] == "x":
            return f"\\u00{e[1:]}"
        return {"'": "'", "v": "\\u000b", "0": "\\u0000"}.get(e, "")  # a line continuation

    return _JSON5_ESCAPE.sub(one, payload)


def _number5(kind: int, payload: str) -> str:
    """An INT5 (hexadecimal) or FLOAT5 (``.5``, ``5.``, ``+1``, ``Infinity``, ``NaN``)
    payload as SQLite's ``json`` renders it."""
    sign = "-" if payload.startswith("-") else ""
    body = payload.lstrip("+-")
    if kind == INT5:
        return f"{sign}{int(body, 16)}"
    if body.lower() == "nan":
        return "null"
    if body.lower() in ("inf", "infinity"):
        return f"{sign}9.0e999"
    if body.startswith("."):
        body = "0" + body
    if body.endswith("."):
        body += "0"
    return sign + body.replace(".e", ".0e").replace(".E", ".0E")


def to_text(data: bytes) -> str:
    """The JSON text of one JSONB value, as SQLite's ``json`` renders it; ``ValueError``
    on bytes that are not one JSONB element."""
    out: list[str] = []
    # Each open container: its end, and whether it is an object, and its next child's index.
    stack: list[list[int]] = []
    at, size = 0, 0
    while True:
        if stack and at >= stack[-1][0]:
            end, is_object, _ = stack.pop()
            if at != end:
                raise ValueError("JSONB: malformed container")
            out.append("}" if is_object else "]")
        else:
            if stack:
                parent = stack[-1]
                if parent[2]:
                    out.append(":" if parent[1] and parent[2] % 2 else ",")
                parent[2] += 1
            kind, start, end = header(data, at)
            payload = data[start:end]
            if stack and stack[-1][1] and stack[-1][2] % 2 and not TEXT <= kind <= TEXTRAW:
                raise ValueError("JSONB: an object key that is not text")
            if kind in _LITERALS:
                out.append(_LITERALS[kind])
            elif kind in (INT, FLOAT):
                out.append(payload.decode("ascii"))
            elif kind in (INT5, FLOAT5):
                out.append(_number5(kind, payload.decode("ascii")))
            elif kind in (TEXT, TEXTJ):
                out.append(f'"{payload.decode()}"')
            elif kind == TEXT5:
                out.append(f'"{_json5_text(payload.decode())}"')
            elif kind == TEXTRAW:
                out.append(json.dumps(payload.decode(), ensure_ascii=False))
            else:
                out.append("{" if kind == OBJECT else "[")
                stack.append([end, kind == OBJECT, 0])
                at = start
                continue
            size += end - start
            if size > MAX_JSON:
                raise ValueError("JSONB: longer than qctl renders")
            at = end
        if not stack:
            if at != len(data):
                raise ValueError("JSONB: bytes after the value")
            return "".join(out)


def element(kind: int, payload: bytes) -> bytes:
    """One element: its header (the smallest that holds the size, as SQLite writes it)
    and ``payload``."""
    n = len(payload)
    if n <= 11:
        return bytes([n << 4 | kind]) + payload
    for code, width in ((12, 1), (13, 2), (14, 4), (15, 8)):
        if n < 1 << (8 * width):
            return bytes([code << 4 | kind]) + n.to_bytes(width, "big") + payload
    raise ValueError("JSONB: element too large")


def text_element(value: str) -> bytes:
    """A string as SQLite stores a SQL text value given to ``jsonb_set``: TEXTRAW (its
    characters as they are, escaped only when rendered)."""
    return element(TEXTRAW, value.encode())


def from_json(text: str) -> bytes:
    """JSON text as a JSONB value (``jsonb(X)``): every string TEXTJ (its escapes kept as
    JSON writes them), every number its own text; ``ValueError`` on text that is not
    JSON."""
    try:
        value = json.loads(text, parse_int=_Verbatim, parse_float=_Verbatim)
    except RecursionError:  # deeper than json's parser goes
        value = deepjson.parse(text, parse_int=_Verbatim)
    return _encode(value)


class _Verbatim(str):
    """A number's JSON text, kept as written."""


def _encode(value: Any) -> bytes:
    # Innermost first, with a stack of (container, its encoded children, those to do).
    done: list[bytes] = []
    stack: list[tuple[Any, list[bytes], list[Any]]] = []
    item = value
    while True:
        if isinstance(item, dict | list):
            children = (
                [x for kv in item.items() for x in kv] if isinstance(item, dict) else list(item)
            )
            stack.append((item, [], children[::-1]))
        else:
            done.append(_scalar(item))
        while stack:
            container, parts, todo = stack[-1]
            if done:
                parts.append(done.pop())
            if todo:
                item = todo.pop()
                break
            stack.pop()
            done.append(element(OBJECT if isinstance(container, dict) else ARRAY, b"".join(parts)))
        else:
            return done.pop()


def _scalar(value: Any) -> bytes:
    if value is None:
        return element(NULL, b"")
    if value is True or value is False:
        return element(TRUE if value else FALSE, b"")
    if isinstance(value, _Verbatim):
        is_float = any(c in value for c in ".eE")
        return element(FLOAT if is_float else INT, value.encode("ascii"))
    if isinstance(value, float) and not math.isfinite(value):  # JSON5's NaN and Infinity
        return element(FLOAT5, json.dumps(value).encode())
    if isinstance(value, int | float):
        return element(FLOAT if isinstance(value, float) else INT, json.dumps(value).encode())
    return element(TEXTJ, json.dumps(value, ensure_ascii=False)[1:-1].encode())


def _as_jsonb(value: bytes | str) -> bytes:
    """A column's value as JSONB: a BLOB as it is, TEXT parsed as JSON."""
    return value if isinstance(value, bytes) else from_json(value)


def _key(path: str) -> bytes:
    m = _KEY_PATH.match(path)
    if m is None:
        raise ValueError(f"JSON path {path!r}: only a top-level key ('$.name') is supported")
    return (m.group(1) if m.group(1) is not None else m.group(2)).encode()


def _members(data: bytes) -> tuple[list[tuple[bytes, bytes, bytes]], bool]:
    """A top-level object's members (key text, key element, value element), and whether
    ``data`` is an object at all."""
    kind, start, end = header(data, 0)
    if end != len(data):
        raise ValueError("JSONB: bytes after the value")
    if kind != OBJECT:
        return [], False
    members, at = [], start
    while at < end:
        key_kind, _, key_end = header(data, at)
        _, _, value_end = header(data, key_end)
        if not TEXT <= key_kind <= TEXTRAW:
            raise ValueError("JSONB: an object key that is not text")
        key_text = json.loads(to_text(data[at:key_end])).encode()
        members.append((key_text, data[at:key_end], data[key_end:value_end]))
        at = value_end
    if at != end:
        raise ValueError("JSONB: malformed object")
    return members, True


def set_key(value: bytes | str, path: str, new: bytes) -> bytes:
    """``jsonb_set(value, '$.key', new)``: the first member named ``key`` given the
    element ``new``, or the member added last; a value that is not an object unchanged.
    Every other byte is kept as it was."""
    data, key = _as_jsonb(value), _key(path)
    members, is_object = _members(data)
    if not is_object:
        return data
    parts, replaced = [], False
    for text, key_element, old in members:
        if text == key and not replaced:
            parts.append(key_element + new)
            replaced = True
        else:
            parts.append(key_element + old)
    if not replaced:
        parts.append(text_element(key.decode()) + new)
    return element(OBJECT, b"".join(parts))


def remove_key(value: bytes | str, path: str) -> bytes:
    """``jsonb_remove(value, '$.key')``: the value without its first member named ``key``
    (SQLite's removes the first match); a value that is not an object unchanged."""
    data, key = _as_jsonb(value), _key(path)
    members, is_object = _members(data)
    if not is_object:
        return data
    parts, removed = [], False
    for text, key_element, old in members:
        if text == key and not removed:
            removed = True
            continue
        parts.append(key_element + old)
    return element(OBJECT, b"".join(parts))


def _json(value: Any) -> Any:
    """SQLite's ``json(X)`` over JSONB; a BLOB that is not JSONB as it is (for the reader to
    show), never an exception in a read."""
    if not isinstance(value, bytes):
        return value
    try:
        return to_text(value)
    except (ValueError, UnicodeDecodeError):
        return value


def _jsonb_set(value: Any, path: str, new: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(new, bytes):
        new_element = new
    elif isinstance(new, str):
        new_element = text_element(new)
    else:
        new_element = _scalar(new)
    return set_key(value, path, new_element)


def _jsonb_remove(value: Any, path: str) -> bytes | None:
    return None if value is None else remove_key(value, path)


def install(conn: sqlite3.Connection, version: tuple[int, int, int] | None = None) -> bool:
    """Give ``conn`` ``json``, ``jsonb_set`` and ``jsonb_remove`` over JSONB where its
    SQLite library (``version``: ``sqlite3.sqlite_version_info``) predates JSONB; whether
    it did."""
    if (version or sqlite3.sqlite_version_info) >= NATIVE:
        return False
    conn.create_function("json", 1, _json, deterministic=True)
    conn.create_function("jsonb_set", 3, _jsonb_set, deterministic=True)
    conn.create_function("jsonb_remove", 2, _jsonb_remove, deterministic=True)
    return True
