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
opcodes interpreted; rendering walks without recursion, at most ``MAX_DEPTH`` levels,
``MAX_NODES`` values and ``MAX_TEXT`` characters of text (``MAX_JSON`` in JSON), shows a
container it met before by reference (``<list shown above>``) unless it is small, and
never hashes a decoded container (``Key``); past a limit the value is shown as cut
(never an exception).
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import pickletools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from qctl_kit.decode import loads as json_loads

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
    stored: int | None = None
    """The stored text's length when ``text`` is its beginning only."""

    @property
    def length(self) -> int:
        return len(self.text) if self.stored is None else self.stored

    def shown(self) -> str:
        if self.length <= MAX_RAW:
            return self.text
        return self.text[:MAX_RAW] + f"... ({self.length} characters)"


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
    return Obj(name, args, kwargs if isinstance(kwargs, dict) else {})


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


_ATOMS = (str, bytes, int, float, bool, type(None))


class Key:
    """A dict key or set element that is not an atom (a tuple, an object): hashed by
    identity, since ``hash`` of an untrusted tuple can take exponential time (a tuple
    of shared tuples) or overflow the C stack (a deeply nested one)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _hashable(value: Any) -> Any:
    return value if type(value) in _ATOMS else Key(value)


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


def _interpret(
    ops: Iterator[tuple[pickletools.OpcodeInfo, Any, int | None]], cut: bool = False
) -> Any:
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
    if cut and stack:
        return _fold(stack)
    raise Undecodable("no STOP opcode")


def _newobj(cls: Any, args: Any, kwargs: Any) -> Any:
    name = cls.cls if isinstance(cls, Global) else to_text(cls)
    if name in ("builtins.set", "builtins.frozenset", "builtins.object"):
        return _call(cls, args, kwargs)
    args = tuple(args) if isinstance(args, tuple | list) else (args,)
    return Obj(name, args, kwargs if isinstance(kwargs, dict) else {})


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


def render_pickle(data: bytes, stored: int | None = None) -> Any:
    """The value a pickle describes, as plain data and ``Obj``; nothing is imported or
    called. Raises ``Undecodable`` when ``data`` is not a pickle this reads.

    A pickle longer than ``MAX_PAYLOAD``, or of ``stored`` bytes of which ``data`` is a
    prefix, is read up to the end of ``data`` (``MAX_PAYLOAD`` bytes at most): what those
    opcodes built, a string or bytes the cut splits kept up to the cut, is
    ``cut(stored_bytes=..., decoded_bytes=..., value=...)``."""
    stored = len(data) if stored is None else stored
    try:
        if stored == len(data) <= MAX_PAYLOAD:
            return _interpret(pickletools.genops(data))
        value = _interpret(_whole_ops(data[:MAX_PAYLOAD]), cut=True)
    except Undecodable:
        raise
    except Exception as exc:  # genops' ValueError on a malformed stream, stack underflow
        raise Undecodable(f"not a readable pickle: {type(exc).__name__}: {exc}") from None
    return cut_value(value, stored_bytes=stored, decoded_bytes=min(len(data), MAX_PAYLOAD))


def cut_value(value: Any, **sizes: int) -> Obj:
    """A payload too large to read whole: how much is stored and how much was read
    (first, so a cut rendering keeps them), then the part read: ``cut(stored_bytes=...,
    decoded_bytes=..., value=...)``, ``{"$class": "cut", "kwargs": {...}}`` in JSON."""
    return Obj("cut", (), {**sizes, "value": value})


_OPCODES = {op.code.encode("latin-1"): op for op in pickletools.opcodes}
_TEXT_HEADERS = {"SHORT_BINUNICODE": 1, "BINUNICODE": 4, "BINUNICODE8": 8}
_BYTES_HEADERS = {"SHORT_BINBYTES": 1, "BINBYTES": 4, "BINBYTES8": 8, "BYTEARRAY8": 8}


def _whole_ops(data: bytes) -> Iterator[tuple[pickletools.OpcodeInfo, Any, int | None]]:
    """``genops`` over the first bytes of a pickle: the opcodes whole in ``data``, then a
    string or bytes opcode the end of ``data`` splits with the part of it that is there;
    anything else the end splits is left out."""
    stream = io.BytesIO(data)
    ops = pickletools.genops(stream)
    while True:
        start = stream.tell()
        try:
            item = next(ops)
        except StopIteration:
            return
        except ValueError:  # the end of data, inside an opcode or before STOP
            op = _OPCODES.get(data[start : start + 1])
            header = op and (_TEXT_HEADERS.get(op.name) or _BYTES_HEADERS.get(op.name))
            if op is not None and header:
                part = data[start + 1 + header :]
                text = op.name in _TEXT_HEADERS
                yield op, part.decode("utf-8", "ignore") if text else part, start
            return
        yield item


def _fold(stack: list[Any]) -> Any:
    """What a cut pickle's stack holds: the items pushed since each open MARK added to
    the container under it (as APPENDS, SETITEMS, ADDITEMS would), innermost first."""
    while _MARK in stack:
        at = len(stack) - 1 - stack[::-1].index(_MARK)
        items = stack[at + 1 :]
        del stack[at:]
        target = stack[-1] if stack else None
        if isinstance(target, list | Obj):
            _append(target, items)
        elif isinstance(target, dict):
            _setitems(target, items)
        elif isinstance(target, set):
            target.update(_hashable(v) for v in items)
        else:  # a tuple, list or dict built from its items at the end (TUPLE, LIST, DICT)
            stack.append(items)
    return stack[0] if len(stack) == 1 else stack


def decode(
    text: str | None, serialization: str | None, length: int | None = None
) -> Decoded | None:
    """A stored payload decoded by its ``serialization``; ``None`` for a NULL column.
    ``text`` may be the first characters of a stored value ``length`` long (a listing
    reads no more): it is then read as a payload larger than ``MAX_PAYLOAD`` is."""
    if text is None:
        return None
    length = len(text) if length is None else length
    if serialization == PORTABLE_JSON:
        if length > min(len(text), MAX_PAYLOAD):  # JSON read in part is not JSON: its text
            return Decoded(PORTABLE_JSON, cut_value(text[:MAX_PAYLOAD], stored_characters=length))
        try:
            return Decoded(PORTABLE_JSON, json_loads(text))
        except ValueError:
            return Decoded(PORTABLE_JSON, Obj("undecodable", (_cut(text),)))
    stored = None if length == len(text) else length
    if serialization not in (None, PICKLE):
        return Decoded(serialization, Raw(serialization, text, stored))
    if serialization is None and not _is_base64(text[: len(text) // 4 * 4] if stored else text):
        # NULL: rows written before the column existed (DBOS's pickle), and the runs
        # DBOS's scheduler enqueues with the application's serializer
        # (``_enqueue_scheduled_workflow`` of ``dbos/_scheduler.py``): unnamed, as a
        # schedule's context is, and shown raw as ``decode_unnamed`` shows it.
        return Decoded(UNNAMED, Raw(UNNAMED, text, stored))
    # py_pickle, and NULL base64 (a pickle, or what cannot be one: shown as such).
    try:
        return Decoded(serialization or PICKLE, _base64_pickle(text, length))
    except Undecodable as exc:
        return Decoded(
            serialization or PICKLE, Obj("undecodable", (str(exc), f"{length} characters"))
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


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


_B64_PAYLOAD = (MAX_PAYLOAD + 2) // 3 * 4
"""Base64 characters that hold ``MAX_PAYLOAD`` bytes: no more of a larger one is decoded."""


def _base64_pickle(text: str, length: int | None = None) -> Any:
    """A base64 pickle, or the prefix ``text`` of one ``length`` characters long."""
    length = len(text) if length is None else length
    if length == len(text) <= _B64_PAYLOAD:
        part, stored = text, None
    else:  # whole quadruples of the prefix; the size from the length (and padding seen)
        part = text[: min(len(text), _B64_PAYLOAD) // 4 * 4]
        padding = text[-2:].count("=") if length == len(text) else 0
        stored = length // 4 * 3 - padding
    try:
        raw = base64.b64decode(part, validate=True)
    except (binascii.Error, ValueError):
        raise Undecodable("not base64") from None
    return render_pickle(raw, stored)


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


MAX_NODES = 200_000
"""Values (containers and leaves) one rendering visits at most."""
MAX_JSON = MAX_PAYLOAD
"""Characters of text (strings, bytes, names) one JSON rendering carries at most."""
_SMALL = 16
"""A shared container of at most this many values is repeated; a larger one is shown
once and then as a reference."""


class _Node:
    """A container cut to the budget: ``entries`` are ``[tag, key, value]`` with tags
    ``item`` (list, tuple, set), ``pair`` (dict), and for an object ``arg``, ``kw``,
    ``attr`` (its state's keys), ``state``, ``items``, ``dictitems``."""

    __slots__ = ("cls", "cut", "entries", "kind", "size")

    def __init__(self, kind: str, cls: str = "") -> None:
        self.kind = kind
        self.cls = cls
        self.entries: list[list[Any]] = []
        self.cut = False
        self.size = 0


@dataclass(frozen=True)
class _Mark:
    """What stands for a value not shown: cut by depth or size, a cycle, a reference."""

    text: str
    json: Any


_DEPTH = _Mark("...", {"$cut": "depth"})
_SIZE = _Mark("...", {"$cut": "size"})
_CYCLE = _Mark("<cycle>", {"$cycle": True})


@dataclass(frozen=True)
class _Cut:
    """A string or bytes cut to the budget, with its full length."""

    prefix: str | bytes
    length: int


def _entries(value: Any) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield "pair", k, v
    elif isinstance(value, Obj):
        for a in value.args:
            yield "arg", None, a
        for k, v in value.kwargs.items():
            yield "kw", k, v
        state = value.state
        if (
            isinstance(state, tuple)
            and len(state) == 2
            and isinstance(state[0], dict | None)
            and isinstance(state[1], dict)
        ):  # (__dict__, __slots__ values)
            for part in state:
                for k, v in (part or {}).items():
                    yield "attr", k, v
        elif isinstance(state, dict):
            for k, v in state.items():
                yield "attr", k, v
        elif state is not None:
            yield "state", None, state
        for v in value.items:
            yield "items", None, v
        for k, v in value.dictitems:
            yield "dictitems", k, v
    else:
        for v in value:
            yield "item", None, v


_KINDS: dict[type, str] = {
    list: "list", tuple: "tuple", set: "set", frozenset: "frozenset", dict: "dict"
}  # fmt: skip


class _Bounder:
    """Walks a decoded value without recursion into a ``_Node`` tree no deeper than
    ``MAX_DEPTH`` that holds at most ``chars`` characters of text and ``MAX_NODES``
    values: a hostile value costs the budget, never its own size."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.nodes = MAX_NODES
        self.open: set[int] = set()
        self.done: dict[int, _Node] = {}

    def spent(self) -> bool:
        return self.chars <= 0 or self.nodes <= 0

    def text(self, text: str | bytes) -> str | bytes | _Cut:
        room = max(self.chars, 0)
        self.chars -= min(len(text), room) + 2
        return text if len(text) <= room else _Cut(text[:room], len(text))

    def leaf(self, value: Any) -> Any:
        if isinstance(value, str | bytes):
            return self.text(value)
        if isinstance(value, Global):
            name = self.text(value.cls)
            return value if isinstance(name, str) else Global(_text(name))
        if isinstance(value, Raw):
            self.chars -= min(len(value.text), MAX_RAW)
        elif isinstance(value, int) and not isinstance(value, bool):
            self.chars -= min(value.bit_length() // 3, 40)
        else:
            self.chars -= 4
        return value

    def run(self, value: Any) -> Any:
        root: list[Any] = [None, None, None]
        # Frames: [node, its entries, depth, id, budget at start, values to visit]; a
        # frame's values are visited before its next entry, a new frame's first.
        top: list[Any] = [None, iter(()), -1, 0, 0, [(root, 2, value)]]
        stack = [top]
        while stack:
            frame = stack[-1]
            node, it, depth, ident, start, pending = frame
            if not pending:
                step = None if self.spent() else next(it, None)
                if step is None:
                    stack.pop()
                    if node is not None:
                        node.cut = self.spent()
                        node.size = start - self.nodes
                        self.open.discard(ident)
                        self.done[ident] = node
                    continue
                tag, key, child = step
                entry = [tag, None, None]
                node.entries.append(entry)
                pending.append((entry, 2, child))
                if tag in ("pair", "kw", "attr", "dictitems"):
                    pending.append((entry, 1, key))
                continue
            entry, slot, child = pending.pop()
            entry[slot] = self.visit(child, depth + 1, stack)
        return root[2]

    def visit(self, child: Any, depth: int, stack: list[Any]) -> Any:
        self.nodes -= 1
        if isinstance(child, Key):
            child = child.value
        kind = "obj" if isinstance(child, Obj) else _KINDS.get(type(child))
        if kind is None:
            return self.leaf(child)
        ident = id(child)
        if ident in self.open:
            return _CYCLE
        if ident in self.done:
            seen = self.done[ident]
            if seen.size <= _SMALL and not seen.cut:
                self.nodes -= seen.size
                self.chars -= seen.size * 4
                return seen
            what = child.name if isinstance(child, Obj) else kind
            return _Mark(f"<{what} shown above>", {"$ref": f"{what} shown above"})
        if depth > MAX_DEPTH:
            return _DEPTH
        if self.spent():
            return _SIZE
        node = _Node(kind)
        if isinstance(child, Obj):
            node.cls = _text(self.text(child.cls)) if len(child.cls) > MAX_RAW else child.cls
        self.chars -= 2
        self.open.add(ident)
        stack.append([node, _entries(child), depth, ident, self.nodes, []])
        return node


def _text(value: Any) -> str:
    """A leaf of a ``_Node`` tree as text (strings and bytes as ``repr`` shows them)."""
    if isinstance(value, _Cut):
        unit = "characters" if isinstance(value.prefix, str) else "bytes"
        return f"{value.prefix!r}... ({value.length} {unit})"
    if isinstance(value, _Mark):
        return value.text
    if isinstance(value, Global):
        return value.cls
    if isinstance(value, Raw):
        # repr: quoted, with control characters escaped as in any other text.
        return f"{value.serializer}:{value.shown()!r}"
    if isinstance(value, int) and not isinstance(value, bool):
        return _int_text(value)
    return repr(value)


class _Writer:
    """Text written up to ``limit`` characters; what would follow is dropped unwritten."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.left = limit

    def put(self, text: str) -> None:
        if self.left > 0:
            self.parts.append(text[: self.left])
            self.left -= len(text)

    def result(self) -> str:
        text = "".join(self.parts)
        return text if self.left >= 0 else text + "..."


def _write(value: Any, out: _Writer) -> None:
    """Python-like text of a ``_Node`` tree (at most ``MAX_DEPTH`` deep: recursion is
    safe here)."""
    if out.left <= 0:
        return
    if not isinstance(value, _Node):
        out.put(_text(value))
        return
    entries = value.entries
    if value.kind == "obj":
        out.put(value.cls.rpartition(".")[2] + "(")
        groups: dict[str, list[list[Any]]] = {}
        for entry in entries:
            groups.setdefault(entry[0], []).append(entry)
        first = True
        for tag in ("arg", "kw", "attr", "state", "items", "dictitems"):
            if tag not in groups:
                continue
            if tag in ("items", "dictitems"):
                out.put("" if first else ", ")
                out.put("items=[" if tag == "items" else "items={")
                _write_entries(groups[tag], out, False)
                out.put("]" if tag == "items" else "}")
                first = False
                continue
            for _tag, key, item in groups[tag]:
                out.put("" if first else ", ")
                first = False
                if tag == "state":
                    out.put("state=")
                elif tag != "arg":
                    out.put(_key(key))
                    out.put("=")
                _write(item, out)
        if value.cut:
            out.put(", ..." if entries else "...")
        out.put(")")
        return
    if value.kind in ("set", "frozenset"):
        # Sorted by text, as the elements have no order; each is small after the cut.
        texts = []
        for entry in entries:
            item = _Writer(MAX_TEXT)
            _write(entry[2], item)
            texts.append(item.result())
        body = "{" + ", ".join(sorted(texts)) + (", ..." if value.cut else "") + "}"
        body = body if texts or value.cut else "set()"
        out.put(body if value.kind == "set" else f"frozenset({body})")
        return
    brackets = {"list": "[]", "tuple": "()", "dict": "{}"}[value.kind]
    out.put(brackets[0])
    _write_entries(entries, out, value.cut)
    if value.kind == "tuple" and len(entries) == 1 and not value.cut:
        out.put(",")
    out.put(brackets[1])


def _write_entries(entries: list[list[Any]], out: _Writer, cut: bool) -> None:
    for i, (_tag, key, item) in enumerate(entries):
        if i:
            out.put(", ")
        if key is not None or _tag in ("pair", "dictitems"):
            _write(key, out)
            out.put(": ")
        _write(item, out)
    if cut:
        out.put(", ..." if entries else "...")


def to_text(value: Any) -> str:
    """Python-like text: ``RuntimeError('card declined')``, ``{'ok': True}``; at most
    about ``MAX_TEXT`` characters, whatever the value."""
    out = _Writer(MAX_TEXT)
    _write(_Bounder(MAX_TEXT).run(value), out)
    return out.result()


def to_json(value: Any) -> Any:
    """A JSON-ready form: plain data as itself (tuples as arrays), bytes as
    ``{"$bytes": base64}``, sets as ``{"$set": [...]}``, an object as
    ``{"$class": dotted name, "text": ..., "args": [...], "kwargs": {...}, "state": ...}``;
    at most about ``MAX_JSON`` characters of text, whatever the value."""
    texts = _Writer(MAX_JSON)  # the objects' "text", charged to a budget of its own
    return _json(_Bounder(MAX_JSON).run(value), texts)


def _key(value: Any) -> str:
    """A key as a JSON object's key or an attribute's name: strings as they are."""
    if isinstance(value, str):
        return value
    out = _Writer(MAX_RAW)
    _write(value, out)
    return out.result()


def _json(value: Any, texts: _Writer) -> Any:
    if isinstance(value, _Node):
        if value.kind == "obj":
            return _json_obj(value, texts)
        if value.kind == "dict":
            out = {_key(k): _json(v, texts) for _tag, k, v in value.entries}
            if value.cut:
                out["$cut"] = "size"
            return out
        items = [_json(v, texts) for _tag, _k, v in value.entries]
        if value.kind in ("set", "frozenset"):
            return {"$set": sorted(items, key=repr), **({"$cut": "size"} if value.cut else {})}
        return [*items, _SIZE.json] if value.cut else items
    if isinstance(value, _Mark):
        return value.json
    if isinstance(value, _Cut):
        if isinstance(value.prefix, bytes):
            return {"$bytes": base64.b64encode(value.prefix).decode(), "length": value.length}
        return f"{value.prefix}... ({value.length} characters)"
    if isinstance(value, Global):
        return {"$global": value.cls}
    if isinstance(value, Raw):
        return {"$serializer": value.serializer, "raw": value.shown(), "length": value.length}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        text = _int_text(value)
        return value if text[-1].isdigit() else {"$int": text}
    if isinstance(value, float):
        return _float_json(value)
    return value


def _json_obj(node: _Node, texts: _Writer) -> dict[str, Any]:
    limit = min(MAX_TEXT, max(texts.left, 0))
    text = _Writer(limit)
    _write(node, text)
    texts.left -= limit - max(text.left, 0)
    out: dict[str, Any] = {"$class": node.cls, "text": text.result()}
    for tag, key, item in node.entries:
        if tag == "arg":
            out.setdefault("args", []).append(_json(item, texts))
        elif tag in ("kw", "attr"):
            name = "kwargs" if tag == "kw" else "state"
            out.setdefault(name, {})[_key(key)] = _json(item, texts)
        elif tag == "state":
            out["state"] = _json(item, texts)
        elif tag == "items":
            out.setdefault("items", []).append(_json(item, texts))
        else:
            out.setdefault("dictitems", []).append([_json(key, texts), _json(item, texts)])
    if node.cut:
        out["$cut"] = "size"
    return out
