"""qctl_kit.sqlite.jsonb: SQLite's JSONB read, spliced and written without SQLite 3.45."""

from __future__ import annotations

import json
import sqlite3

import pytest

from qctl_kit.sqlite import jsonb

# {"mode":"ok"} as SQLite 3.51 writes it (River's args through riversqlite).
MODE_OK = b"\x8cGmode'ok"


def test_reads_what_sqlite_writes() -> None:
    assert jsonb.to_text(MODE_OK) == '{"mode":"ok"}'
    assert jsonb.to_text(b"\x0b") == "[]"
    assert jsonb.to_text(b"\x0c") == "{}"


@pytest.mark.parametrize(
    "text",
    [
        '{"a":[1,2.5,"x\\ny",{"k":[null,true,false]}],"b":{}}',
        "[]",
        json.dumps({"x": "y" * 300}, separators=(",", ":")),
    ],
)
def test_json_text_round_trips(text: str) -> None:
    assert jsonb.to_text(jsonb.from_json(text)) == text


def test_any_depth_without_recursion() -> None:
    deep = "[" * 5000 + "1" + "]" * 5000
    assert jsonb.to_text(jsonb.from_json(deep)) == deep


def test_numbers_keep_their_text_and_json5_reads_as_sqlite_renders_it() -> None:
    big = "[1e400,123456789012345678901234567890]"
    assert jsonb.to_text(jsonb.from_json(big)) == big
    assert jsonb.to_text(jsonb.element(jsonb.INT5, b"-0x1F")) == "-31"
    assert jsonb.to_text(jsonb.element(jsonb.FLOAT5, b".5")) == "0.5"
    assert jsonb.to_text(jsonb.element(jsonb.TEXTRAW, b'a"b')) == '"a\\"b"'


@pytest.mark.parametrize("bad", [b"", b"\x0c\x01", b"\x1b", b"\x13ab", b"\x0f", b"\x00\x00"])
def test_malformed_bytes_are_refused(bad: bytes) -> None:
    with pytest.raises(ValueError):
        jsonb.to_text(bad)


def test_set_and_remove_a_key_keep_every_other_byte() -> None:
    at = jsonb.text_element("2026-01-01T00:00:00Z")
    added = jsonb.set_key(MODE_OK, "$.cancel_attempted_at", at)
    assert json.loads(jsonb.to_text(added)) == {
        "mode": "ok",
        "cancel_attempted_at": "2026-01-01T00:00:00Z",
    }
    assert jsonb.remove_key(added, "$.cancel_attempted_at") == MODE_OK
    replaced = jsonb.set_key(added, '$."mode"', jsonb.text_element("no"))
    assert json.loads(jsonb.to_text(replaced))["mode"] == "no"
    assert jsonb.set_key(b"\x0b", "$.k", at) == b"\x0b"  # not an object: unchanged
    with pytest.raises(ValueError):
        jsonb.remove_key(MODE_OK, "$.a.b")


def test_installed_functions_answer_as_sqlite_does() -> None:
    conn = sqlite3.connect(":memory:")
    assert jsonb.install(conn, (3, 40, 1))
    assert not jsonb.install(sqlite3.connect(":memory:"), jsonb.NATIVE)
    [(text, length, blob, removed, broken)] = conn.execute(
        "SELECT json(?1), json_array_length(json(?2)), jsonb_set(?1, '$.n', 'v'),"
        " jsonb_remove(jsonb_set('{\"n\":1}', '$.x', 2), '$.n'), json(?3)",
        (MODE_OK, jsonb.from_json("[1,2]"), b"\x1b"),
    ).fetchall()
    assert (text, length, broken) == ('{"mode":"ok"}', 2, b"\x1b")
    assert json.loads(jsonb.to_text(blob)) == {"mode": "ok", "n": "v"}
    assert jsonb.to_text(removed) == '{"x":2}'
