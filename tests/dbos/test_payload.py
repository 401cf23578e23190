"""The symbolic pickle renderer: values as data, objects by name, nothing executed."""

from __future__ import annotations

import base64
import collections
import datetime
import decimal
import json
import pickle
import pickletools
import uuid
from pathlib import Path
from typing import Any

import pytest

from qctl.systems.dbos import payload
from qctl.systems.dbos.payload import Obj, Undecodable, decode, render_pickle, to_json, to_text

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


class Order:
    def __init__(self, order_id: int, items: list[str]) -> None:
        self.order_id = order_id
        self.items = items


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self) -> None:
        self.a = 1
        self.b = "two"


class Boom:
    """Unpickling this would run ``os.system`` (writing a marker file)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("proto", PROTOCOLS)
@pytest.mark.parametrize(
    ("value", "text"),
    [
        (RuntimeError("card declined"), "RuntimeError('card declined')"),
        (ValueError("bad", 3), "ValueError('bad', 3)"),
        ({"ok": True, "n": 1.5, "none": None}, "{'ok': True, 'n': 1.5, 'none': None}"),
        ([1, [2, (3,)], "x"], "[1, [2, (3,)], 'x']"),
        ((1, 2, 3, 4), "(1, 2, 3, 4)"),
        ({1, 2}, "{1, 2}"),
        (frozenset({"a"}), "frozenset({'a'})"),
        (b"\x00\xff", "b'\\x00\\xff'"),
        (2**80, str(2**80)),
        (-5, "-5"),
        ("é ünïcode", "'é ünïcode'"),
        (decimal.Decimal("1.50"), "Decimal('1.50')"),
        (uuid.UUID(int=5), "UUID(int=5)"),
        (datetime.date(2026, 1, 2), "date('2026-01-02')"),
        (
            datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC),
            "datetime('2026-01-02T03:04:05.000006+00:00')",
        ),
        (datetime.timedelta(days=1, seconds=2), "timedelta(1, 2, 0)"),
        (collections.OrderedDict(a=1), "OrderedDict(items={'a': 1})"),
    ],
)
def test_values_render_like_repr(value: Any, text: str, proto: int) -> None:
    assert to_text(render_pickle(pickle.dumps(value, protocol=proto))) == text


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_objects_render_with_their_state(proto: int) -> None:
    rendered = render_pickle(pickle.dumps(Order(7, ["a"]), protocol=proto))
    assert isinstance(rendered, Obj)
    assert rendered.cls == f"{__name__}.Order"
    assert to_text(rendered) == "Order(order_id=7, items=['a'])"
    assert to_json(rendered)["state"] == {"order_id": 7, "items": ["a"]}
    if proto >= 2:
        assert to_text(render_pickle(pickle.dumps(Slotted(), protocol=proto))) == (
            "Slotted(a=1, b='two')"
        )


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_a_pickle_that_would_run_code_runs_nothing(tmp_path: Path, proto: int) -> None:
    marker = tmp_path / "ran"
    data = pickle.dumps(Boom(marker), protocol=proto)
    rendered = render_pickle(data)
    assert not marker.exists()
    assert isinstance(rendered, Obj) and rendered.cls in ("posix.system", "nt.system")
    assert to_text(rendered) == f"system('touch {marker}')"
    # ...and through the stored form DBOS writes (base64 of the pickle):
    decoded = decode(base64.b64encode(data).decode(), "py_pickle")
    assert decoded is not None and "system(" in decoded.text()
    assert not marker.exists()


def test_nothing_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A global the pickle names is never looked up: a module that does not exist is
    just a name."""
    import io
    import sys

    data = b"cno_such_mod_x\nCls\n(S'a'\ntR."  # protocol 0: no_such_mod_x.Cls('a')
    pickletools.dis(data, out=io.StringIO())  # a well-formed pickle

    assert to_text(render_pickle(data)) == "Cls('a')"
    assert "no_such_mod_x" not in sys.modules


def test_cycles_and_limits() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert to_text(render_pickle(pickle.dumps(loop))) == "[<cycle>]"
    assert to_json(render_pickle(pickle.dumps(loop))) == [{"$cycle": True}]
    deep: Any = 0
    for _ in range(payload.MAX_DEPTH + 10):
        deep = [deep]
    assert "..." in to_text(render_pickle(pickle.dumps(deep)))
    with pytest.raises(Undecodable):
        render_pickle(b"\x80\x04" + b"N" * 10)  # no STOP
    with pytest.raises(Undecodable):
        render_pickle(b"not a pickle")
    assert len(to_text(render_pickle(pickle.dumps("x" * 50_000)))) < payload.MAX_TEXT + 100


def test_decode_by_serialization() -> None:
    assert decode(None, "py_pickle") is None
    portable = decode('{"name":"Error","message":"declined"}', "portable_json")
    assert portable is not None and portable.json() == {"name": "Error", "message": "declined"}
    # NULL serialization is DBOS's default serializer: a base64 pickle.
    legacy = decode(base64.b64encode(pickle.dumps([1, 2])).decode(), None)
    assert legacy is not None and legacy.value == [1, 2] and legacy.serialization == "py_pickle"
    broken = decode("%%% not base64", "py_pickle")
    assert broken is not None and broken.text().startswith("undecodable(")
    assert json.dumps(to_json(render_pickle(pickle.dumps({b"k": {1, 2}}))))


def test_a_custom_serializer_is_shown_raw_never_decoded(tmp_path: Path) -> None:
    """A serializer qctl does not know wrote it: the stored text, named by its
    serializer, even when it is a pickle that would run code (only that serializer may
    read it), cut at MAX_RAW characters, control characters escaped in text."""
    hostile = base64.b64encode(pickle.dumps(Boom(tmp_path / "ran"))).decode()
    shown = decode(hostile, "acme_msgpack")
    assert shown is not None and shown.serialization == "acme_msgpack"
    assert shown.text() == f"acme_msgpack:{hostile!r}"
    assert shown.json() == {"$serializer": "acme_msgpack", "raw": hostile, "length": len(hostile)}
    assert not (tmp_path / "ran").exists()
    long = decode("\x1b[2J" + "x" * 5000, "acme")
    assert long is not None
    assert long.text().startswith("acme:'\\x1b[2J") and long.text().endswith("characters)'")
    assert len(long.json()["raw"]) < payload.MAX_RAW + 40 and long.json()["length"] == 5004

    # A row that names no serializer (a schedule's context): a pickle is read as one,
    # anything else shown raw.
    pickled = payload.decode_unnamed(base64.b64encode(pickle.dumps({"k": 1})).decode())
    assert pickled is not None and (pickled.serialization, pickled.value) == ("py_pickle", {"k": 1})
    other = payload.decode_unnamed('{"k": 1}')
    assert other is not None and other.text() == "unnamed_serializer:'{\"k\": 1}'"
    assert payload.decode_unnamed(None) is None


def test_a_pickle_inside_a_pickle_is_read_symbolically(tmp_path: Path) -> None:
    """``pickle.loads(<bytes>)`` inside a pickle (how qctl's schedule triggers embed a
    stored context) is read the same way, a few levels deep, never run."""
    inner = pickle.dumps(Boom(tmp_path / "ran"))

    class Embed:
        def __init__(self, data: bytes) -> None:
            self.data = data

        def __reduce__(self) -> tuple[Any, ...]:
            return (pickle.loads, (self.data,))

    assert to_text(render_pickle(pickle.dumps([Embed(inner)]))).startswith("[system('touch ")
    assert not (tmp_path / "ran").exists()
    deep = pickle.dumps(1)
    for _ in range(payload.MAX_NESTED + 2):
        deep = pickle.dumps(Embed(deep))
    assert "loads(b'" in to_text(render_pickle(deep))


def test_shared_references_cycles_and_depth_are_bounded() -> None:
    """Shared containers are shown once and then by reference (small ones repeated),
    dict keys and set elements are never hashed, and depth is cut, without recursion."""
    from tests.dbos.test_hostile_payloads import HOSTILE_PICKLES

    for data in HOSTILE_PICKLES.values():
        value = render_pickle(data)
        assert len(to_text(value)) < payload.MAX_TEXT + 100
        assert len(json.dumps(to_json(value))) < 3 * payload.MAX_PAYLOAD
    small = [1, 2]
    assert to_text(render_pickle(pickle.dumps([small, small]))) == "[[1, 2], [1, 2]]"
    big = list(range(100))
    shown = to_text(render_pickle(pickle.dumps({"a": big, "b": big})))
    assert shown.endswith(", 99], 'b': <list shown above>}")
    assert to_json(render_pickle(pickle.dumps([big, big])))[1] == {"$ref": "list shown above"}
    keyed = to_text(render_pickle(payload_key_tuple()))
    assert keyed == "{(1, (2, 3)): 'v'}"


def payload_key_tuple() -> bytes:
    """``{(1, (2, 3)): 'v'}``: a tuple key, read without hashing it."""
    return pickle.dumps({(1, (2, 3)): "v"})


def test_deep_portable_json_is_cut_not_a_recursion_error() -> None:
    deep = decode("[" * 100_000 + "1" + "]" * 100_000, "portable_json")
    assert deep is not None
    assert deep.text().startswith("[[[[") and "..." in deep.text()
    assert "$cut" in json.dumps(deep.json())
    flat = decode('{"a": [1, 2.5, "x\\n", true, null, {"b": -3e2}]}', "portable_json")
    assert flat is not None and flat.value == {"a": [1, 2.5, "x\n", True, None, {"b": -300.0}]}
