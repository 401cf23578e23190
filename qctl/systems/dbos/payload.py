"""DBOS payloads (inputs, outputs, errors, step results, events, messages) decoded
without running anything from the database.

DBOS writes a value with the serializer named in the row's ``serialization`` column
(``dbos/_serialization.py``): ``portable_json`` is JSON text (what the TypeScript, Go and
Java SDKs write); ``py_pickle``, and a NULL column from before the column existed, is a
base64-encoded pickle; any other name is an application's own serializer, whose text
is shown as stored (``Raw``). qctl never unpickles: ``pickle.loads`` imports and calls whatever
the pickle names. Instead ``render_pickle`` walks the opcodes with
``pickletools.genops`` (which parses without executing) and interprets them into plain
data: containers, strings, bytes, numbers, booleans and None are themselves; anything
the pickle would construct by calling a global becomes an ``Obj`` holding the class's
dotted name and the arguments and state it would have been built from. A pickled
``RuntimeError('card declined')`` is ``Obj('builtins.RuntimeError', ('card declined',))``
and renders as ``RuntimeError('card declined')``.

Limits keep a hostile or huge payload cheap: ``MAX_PAYLOAD`` bytes decoded, ``MAX_OPS``
opcodes interpreted, ``MAX_DEPTH`` levels rendered and ``MAX_TEXT`` characters of text;
past them the value is shown as cut (never an exception).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import pickletools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

PICKLE = "py_pickle"
PORTABLE_JSON = "portable_json"
MAX_PAYLOAD = 4 * 1024 * 1024
MAX_OPS = 1_000_000
MAX_DEPTH = 24
MAX_TEXT = 20_000
MAX_DIGITS = 1_000
"""An integer with more decimal digits (about) shows its leading ones and digit count."""
MAX_RAW = 2_000
"""Characters shown of a value no serializer qctl knows wrote (``Raw``)."""


MAX_NESTED = 4
"""Pickles inside pickles read symbolically; deeper ones stay ``loads(b'...')``."""


class _Nesting(threading.local):
    depth = 0


_nesting = _Nesting()


class Undecodable(Exception):
    """The payload is not a pickle (or portable JSON) this renderer reads."""


@dataclass(eq=False)
class Obj:
    """What a pickle would have built by calling ``cls``: never built here."""

    cls: str
    """The dotted name of the global the pickle calls (``builtins.RuntimeError``)."""
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    state: Any = None
    """What ``BUILD`` would set (usually the instance ``__dict__``)."""
    items: list[Any] = field(default_factory=list)
    """Items appended to it (a list subclass)."""
    dictitems: list[tuple[Any, Any]] = field(default_factory=list)
    """Keys set on it (a dict subclass)."""

    @property
    def name(self) -> str:
        """The class name as ``repr`` shows it (the module is in ``cls``)."""
        return self.cls.rpartition(".")[2]


@dataclass(frozen=True, eq=False)
class Global:
    """A reference to a global (a class or function) the pickle names, not imported."""

    cls: str


@dataclass(frozen=True)
class Raw:
    """A value written by a serializer qctl does not know (an application's own
    ``dbos.Serializer``, named in the ``serialization`` column): only that serializer
    can read it, and running it is running the application's code, so the stored text
    is shown as it is, cut at ``MAX_RAW`` characters."""

    serializer: str
    text: str

    def shown(self) -> str:
        if len(self.text) <= MAX_RAW:
            return self.text
        return self.text[:MAX_RAW] + f"... ({len(self.text)} characters)"


@dataclass(frozen=True)
class Decoded:
    """A decoded payload: ``value`` is plain data with ``Obj`` for objects."""

    serialization: str
    value: Any

    def text(self) -> str:
        return to_text(self.value)

    def json(self) -> Any:
        return to_json(self.value)


_MARK = object()
_PUSH_ARGUMENT = frozenset(
    {
        "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
        "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE",
        "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8",
    }
)  # fmt: skip
"""Opcodes whose argument is the value they push."""


_PY2_MODULES = {"__builtin__": "builtins", "exceptions": "builtins", "copy_reg": "copyreg"}
"""Protocols 0-2 name a few modules by their Python 2 names (``pickle``'s
``_compat_pickle``)."""


def _global(module: Any, name: Any) -> Global:
    return Global(f"{_PY2_MODULES.get(str(module), module)}.{name}")


def _call(func: Any, args: Any, kwargs: Any = None) -> Any:
    """What REDUCE/NEWOBJ would construct, symbolically (with the few reconstructions
    that are pure data: ``copyreg`` helpers and ``datetime``'s byte states)."""
    name = func.cls if isinstance(func, Global) else to_text(func)
    args = tuple(args) if isinstance(args, tuple | list) else (args,)
    if name == "copyreg._reconstructor" and args:
        # object.__reduce_ex__(<2): _reconstructor(cls, base, state); BUILD sets __dict__.
        inner = args[0]
        return Obj(inner.cls if isinstance(inner, Global) else to_text(inner))
    if name == "copyreg.__newobj__" and args:
        inner = args[0]
        return Obj(inner.cls if isinstance(inner, Global) else to_text(inner), args[1:])
    if name in ("datetime.datetime", "datetime.date") and args and isinstance(args[0], bytes):
        return Obj(name, (_date_state(args[0], args[1] if len(args) > 1 else None),))
    # A pickle inside a pickle (qctl's own schedule triggers write the stored context
    # so): read the inner one the same symbolic way.
    if (
        name in ("_pickle.loads", "pickle.loads")
        and args
        and isinstance(args[0], bytes)
        and _nesting.depth < MAX_NESTED
    ):
        _nesting.depth += 1
        try:
            return render_pickle(args[0])
        except Undecodable:
            pass
        finally:
            _nesting.depth -= 1
    if name == "builtins.set":
        return set(_hashable(v) for v in (args[0] if args else ()))
    if name == "builtins.frozenset":
        return frozenset(_hashable(v) for v in (args[0] if args else ()))
    if name == "builtins.bytearray" and args and isinstance(args[0], bytes | str):
        raw = args[0]
        return raw if isinstance(raw, bytes) else raw.encode("latin-1")
    if name == "_codecs.encode" and len(args) == 2 and isinstance(args[0], str):
        # Protocol 0-2 bytes: _codecs.encode('\xff...', 'latin1').
        return args[0].encode("latin-1", "replace")
    return Obj(name, args, dict(kwargs or {}))


def _date_state(raw: bytes, tz: Any) -> Any:
    """ISO text of a pickled ``datetime``/``date`` state (its documented byte layout:
    year as two bytes, month, day, then hour, minute, second, microsecond as three)."""
    if len(raw) == 4:
        return f"{raw[0] * 256 + raw[1]:04d}-{raw[2]:02d}-{raw[3]:02d}"
    if len(raw) != 10:
        return raw
    text = (
        f"{raw[0] * 256 + raw[1]:04d}-{raw[2]:02d}-{raw[3]:02d}T"
        f"{raw[4]:02d}:{raw[5]:02d}:{raw[6]:02d}"
    )
    micro = (raw[7] << 16) | (raw[8] << 8) | raw[9]
    if micro:
        text += f".{micro:06d}"
    offset = tz.args[0] if isinstance(tz, Obj) and tz.cls == "datetime.timezone" else None
    if isinstance(offset, Obj) and offset.cls == "datetime.timedelta":
        days, seconds = [*offset.args, 0, 0][:2]
        total = int(days) * 86400 + int(seconds)
        sign = "+" if total >= 0 else "-"
        text += f"{sign}{abs(total) // 3600:02d}:{abs(total) % 3600 // 60:02d}"
    elif tz is not None:
        text += f" {to_text(tz)}"
    return text


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return to_text(value)
    return value


def _pop_mark(stack: list[Any]) -> list[Any]:
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is _MARK:
            items = stack[i + 1 :]
            del stack[i:]
            return items
    raise Undecodable("MARK missing")


def _build(obj: Any, state: Any) -> None:
    if isinstance(obj, Obj):
        obj.state = state
    # BUILD on plain data (a dict restored by state) has nothing symbolic to record.


def _interpret(ops: Iterator[tuple[pickletools.OpcodeInfo, Any, int | None]]) -> Any:
    stack: list[Any] = []
    memo: dict[int, Any] = {}
    items: list[Any]
    for count, (op, arg, _pos) in enumerate(ops):
        if count > MAX_OPS:
            raise Undecodable(f"more than {MAX_OPS} opcodes")
        name = op.name
        if name in ("PROTO", "FRAME"):
            continue
        if name == "STOP":
            if not stack:
                raise Undecodable("empty stack at STOP")
            return stack[-1]
        if name == "MARK":
            stack.append(_MARK)
        elif name in _PUSH_ARGUMENT:
            stack.append(bytes(arg) if isinstance(arg, bytearray) else arg)
        elif name == "NONE":
            stack.append(None)
        elif name == "NEWTRUE":
            stack.append(True)
        elif name == "NEWFALSE":
            stack.append(False)
        elif name == "EMPTY_LIST":
            stack.append([])
        elif name == "EMPTY_TUPLE":
            stack.append(())
        elif name == "EMPTY_DICT":
            stack.append({})
        elif name == "EMPTY_SET":
            stack.append(set())
        elif name == "LIST":
            stack.append(_pop_mark(stack))
        elif name == "TUPLE":
            stack.append(tuple(_pop_mark(stack)))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            top = tuple(stack[-n:])
            del stack[-n:]
            stack.append(top)
        elif name == "DICT":
            items = _pop_mark(stack)
            stack.append({_hashable(items[i]): items[i + 1] for i in range(0, len(items), 2)})
        elif name == "FROZENSET":
            stack.append(frozenset(_hashable(v) for v in _pop_mark(stack)))
        elif name == "APPEND":
            value = stack.pop()
            _append(stack[-1], [value])
        elif name == "APPENDS":
            items = _pop_mark(stack)
            _append(stack[-1], items)
        elif name == "SETITEM":
            value = stack.pop()
            key = stack.pop()
            _setitems(stack[-1], [key, value])
        elif name == "SETITEMS":
            items = _pop_mark(stack)
            _setitems(stack[-1], items)
        elif name == "ADDITEMS":
            items = _pop_mark(stack)
            target = stack[-1]
            if isinstance(target, set):
                target.update(_hashable(v) for v in items)
            elif isinstance(target, Obj):
                target.items.extend(items)
        elif name == "POP":
            if stack.pop() is _MARK:
                pass
        elif name == "POP_MARK":
            _pop_mark(stack)
        elif name == "DUP":
            stack.append(stack[-1])
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[int(arg)] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            if int(arg) not in memo:
                raise Undecodable(f"memo {arg} missing")
            stack.append(memo[int(arg)])
        elif name == "GLOBAL":
            module, _, qual = str(arg).partition(" ")
            stack.append(_global(module, qual))
        elif name == "STACK_GLOBAL":
            qual = stack.pop()
            module = stack.pop()
            stack.append(_global(module, qual))
        elif name == "REDUCE":
            args = stack.pop()
            func = stack.pop()
            stack.append(_call(func, args))
        elif name == "NEWOBJ":
            args = stack.pop()
            cls = stack.pop()
            stack.append(_newobj(cls, args, None))
        elif name == "NEWOBJ_EX":
            kwargs = stack.pop()
            args = stack.pop()
            cls = stack.pop()
            stack.append(_newobj(cls, args, kwargs))
        elif name == "BUILD":
            state = stack.pop()
            _build(stack[-1], state)
        elif name == "INST":
            module, _, qual = str(arg).partition(" ")
            stack.append(Obj(_global(module, qual).cls, tuple(_pop_mark(stack))))
        elif name == "OBJ":
            items = _pop_mark(stack)
            if not items:
                raise Undecodable("OBJ without a class")
            cls = items[0]
            stack.append(_newobj(cls, tuple(items[1:]), None))
        elif name in ("PERSID", "BINPERSID"):
            pid = arg if name == "PERSID" else stack.pop()
            stack.append(Obj("persistent_id", (pid,)))
        elif name in ("EXT1", "EXT2", "EXT4"):
            stack.append(Global(f"copyreg extension {arg}"))
        else:
            # NEXT_BUFFER / READONLY_BUFFER (out-of-band buffers) and anything newer.
            raise Undecodable(f"unsupported opcode {name}")
    raise Undecodable("no STOP opcode")


def _newobj(cls: Any, args: Any, kwargs: Any) -> Any:
    name = cls.cls if isinstance(cls, Global) else to_text(cls)
    if name in ("builtins.set", "builtins.frozenset", "builtins.object"):
        return _call(cls, args, kwargs)
    return Obj(name, tuple(args) if isinstance(args, tuple | list) else (args,), dict(kwargs or {}))


def _append(target: Any, items: list[Any]) -> None:
    if isinstance(target, list):
        target.extend(items)
    elif isinstance(target, Obj):
        target.items.extend(items)
    else:
        raise Undecodable(f"APPEND to {type(target).__name__}")


def _setitems(target: Any, items: list[Any]) -> None:
    pairs = [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
    if isinstance(target, dict):
        for k, v in pairs:
            target[_hashable(k)] = v
    elif isinstance(target, Obj):
        target.dictitems.extend(pairs)
    else:
        raise Undecodable(f"SETITEM on {type(target).__name__}")


def render_pickle(data: bytes) -> Any:
    """The value a pickle describes, as plain data and ``Obj``; nothing is imported or
    called. Raises ``Undecodable`` when ``data`` is not a pickle this reads."""
    if len(data) > MAX_PAYLOAD:
        raise Undecodable(f"payload of {len(data)} bytes exceeds {MAX_PAYLOAD}")
    try:
        return _interpret(pickletools.genops(data))
    except Undecodable:
        raise
    except Exception as exc:  # genops' ValueError on a malformed stream, stack underflow
        raise Undecodable(f"not a readable pickle: {type(exc).__name__}: {exc}") from None


def decode(text: str | None, serialization: str | None) -> Decoded | None:
    """A stored payload decoded by its ``serialization``; ``None`` for a NULL column."""
    if text is None:
        return None
    if serialization == PORTABLE_JSON:
        try:
            return Decoded(PORTABLE_JSON, json.loads(text))
        except ValueError:
            return Decoded(PORTABLE_JSON, Obj("undecodable", (_cut(text),)))
    if serialization not in (None, PICKLE):
        return Decoded(serialization, Raw(serialization, text))
    # py_pickle, and NULL (rows written before the column existed: DBOS's default).
    try:
        return Decoded(serialization or PICKLE, _base64_pickle(text))
    except Undecodable as exc:
        return Decoded(
            serialization or PICKLE, Obj("undecodable", (str(exc), f"{len(text)} characters"))
        )


UNNAMED = "unnamed_serializer"
"""What ``decode_unnamed`` calls a serializer the row does not name."""


def decode_unnamed(text: str | None) -> Decoded | None:
    """A value whose row keeps no serializer name (a schedule's context, written by the
    application's serializer): a base64 pickle (DBOS's default) is read as one; anything
    else is some serializer of the application's own, so it is shown raw (``Raw``)."""
    if text is None:
        return None
    try:
        return Decoded(PICKLE, _base64_pickle(text))
    except Undecodable:
        return Decoded(UNNAMED, Raw(UNNAMED, text))


def _base64_pickle(text: str) -> Any:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Undecodable("not base64") from None
    return render_pickle(raw)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... ({len(text)} characters)"


_LEADING = 20
_EXACT_BITS = 1_000_000
"""Up to this many bits an integer's leading digits are exact (one division by a power
of ten: milliseconds); past it only its size is shown."""


def _int_text(n: int) -> str:
    """``n`` in decimal, or its leading digits and digit count when it is longer than
    ``MAX_DIGITS``: ``str`` of an int is quadratic and refused past 4,300 digits, so a
    long one is never converted whole."""
    bits = n.bit_length()
    if bits <= MAX_DIGITS * math.log2(10):
        return str(n)
    sign = "-" if n < 0 else ""
    # From the top 64 bits: the exponent of ten, give or take one at a power of ten.
    exponent = int(math.log10(abs(n) >> (bits - 64)) + (bits - 64) * math.log10(2))
    if bits > _EXACT_BITS:
        return f"{sign}<integer of about {exponent + 1} digits>"
    leading = abs(n) // 10 ** (exponent - _LEADING + 1)
    if leading >= 10**_LEADING:
        leading //= 10
        exponent += 1
    elif leading < 10 ** (_LEADING - 1):
        exponent -= 1
        leading = abs(n) // 10 ** (exponent - _LEADING + 1)
    return f"{sign}{leading}... ({exponent + 1} digits)"


def _float_json(x: float) -> float | str:
    """JSON has no NaN or Infinity: those become the strings Python's ``json`` spells."""
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def to_text(value: Any, depth: int = 0, seen: frozenset[int] = frozenset()) -> str:
    """Python-like text: ``RuntimeError('card declined')``, ``{'ok': True}``."""
    if depth > MAX_DEPTH:
        return "..."
    if isinstance(value, list | tuple | dict | set | frozenset | Obj):
        if id(value) in seen:
            return "<cycle>"
        seen = seen | {id(value)}
    d = depth + 1

    def each(items: Any) -> str:
        return ", ".join(to_text(v, d, seen) for v in items)

    if isinstance(value, Obj):
        parts = [to_text(a, d, seen) for a in value.args]
        parts += [f"{k}={to_text(v, d, seen)}" for k, v in value.kwargs.items()]
        state = value.state
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
            # (__dict__, __slots__ values)
            merged = dict(state[0] or {})
            merged.update(state[1])
            state = merged
        if isinstance(state, dict):
            parts += [f"{k}={to_text(v, d, seen)}" for k, v in state.items()]
        elif state is not None:
            parts.append(f"state={to_text(state, d, seen)}")
        if value.items:
            parts.append(f"items=[{each(value.items)}]")
        if value.dictitems:
            inner = ", ".join(
                f"{to_text(k, d, seen)}: {to_text(v, d, seen)}" for k, v in value.dictitems
            )
            parts.append(f"items={{{inner}}}")
        return _cut(f"{value.name}({', '.join(parts)})")
    if isinstance(value, Global):
        return value.cls
    if isinstance(value, Raw):
        # repr: quoted, with control characters escaped as in any other text.
        return f"{value.serializer}:{value.shown()!r}"
    if isinstance(value, dict):
        inner = ", ".join(f"{to_text(k, d, seen)}: {to_text(v, d, seen)}" for k, v in value.items())
        return _cut("{" + inner + "}")
    if isinstance(value, list):
        return _cut(f"[{each(value)}]")
    if isinstance(value, tuple):
        return _cut(f"({each(value)}{',' if len(value) == 1 else ''})")
    if isinstance(value, set | frozenset):
        items = sorted(to_text(v, d, seen) for v in value)
        body = "{" + ", ".join(items) + "}" if items else "set()"
        return _cut(body if isinstance(value, set) else f"frozenset({body})")
    if isinstance(value, int) and not isinstance(value, bool):
        return _int_text(value)
    return _cut(repr(value))


def to_json(value: Any, depth: int = 0, seen: frozenset[int] = frozenset()) -> Any:
    """A JSON-ready form: plain data as itself (tuples as arrays), bytes as
    ``{"$bytes": base64}``, sets as ``{"$set": [...]}``, an object as
    ``{"$class": dotted name, "args": [...], "kwargs": {...}, "state": ...}``."""
    if depth > MAX_DEPTH:
        return {"$cut": "depth"}
    if isinstance(value, list | tuple | dict | set | frozenset | Obj):
        if id(value) in seen:
            return {"$cycle": True}
        seen = seen | {id(value)}
    d = depth + 1
    if isinstance(value, Obj):
        out: dict[str, Any] = {"$class": value.cls, "text": to_text(value)}
        if value.args:
            out["args"] = [to_json(a, d, seen) for a in value.args]
        if value.kwargs:
            out["kwargs"] = {str(k): to_json(v, d, seen) for k, v in value.kwargs.items()}
        if value.state is not None:
            out["state"] = to_json(value.state, d, seen)
        if value.items:
            out["items"] = [to_json(v, d, seen) for v in value.items]
        if value.dictitems:
            out["dictitems"] = [
                [to_json(k, d, seen), to_json(v, d, seen)] for k, v in value.dictitems
            ]
        return out
    if isinstance(value, Global):
        return {"$global": value.cls}
    if isinstance(value, Raw):
        return {"$serializer": value.serializer, "raw": value.shown(), "length": len(value.text)}
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else to_text(k)): to_json(v, d, seen) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [to_json(v, d, seen) for v in value]
    if isinstance(value, set | frozenset):
        return {"$set": sorted((to_json(v, d, seen) for v in value), key=repr)}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value[:MAX_PAYLOAD]).decode()}
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        text = _int_text(value)
        return value if text[-1].isdigit() else {"$int": text}
    if isinstance(value, float):
        return _float_json(value)
    return value
