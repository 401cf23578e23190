"""The operator-input parsers: exact parses, and for any string either a value or a
clean ParseError (never another exception)."""

from __future__ import annotations

import contextlib
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.core import parse
from qctl.core.parse import ParseError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("15m", timedelta(minutes=15)),
        ("36h", timedelta(hours=36)),
        ("7d", timedelta(days=7)),
        ("2w", timedelta(weeks=2)),
        ("500ms", timedelta(milliseconds=500)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("1d2h3m4s", timedelta(days=1, hours=2, minutes=3, seconds=4)),
        ("1.5h", timedelta(minutes=90)),
        (" 10M ", timedelta(minutes=10)),
        ("0", timedelta(0)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    assert parse.parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "10", "h", "-5m", "5 m", "1x", "1e9s", "m5", "99999999999d"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ParseError):
        parse.parse_duration(text)


def test_a_duration_past_1000_years_is_out_of_range_wherever_it_is_typed() -> None:
    """Parsed once for the command line and the dashboard's prompts alike: an age or a
    delay that would name an instant no clock can hold is one clear error."""
    assert parse.parse_duration("366000d") == timedelta(days=366_000)
    for text in ("366001d", "3000000d", "60000w"):
        with pytest.raises(ParseError, match=r"out of range \(at most 366000 days\)"):
            parse.parse_duration(text)
    with pytest.raises(ParseError, match="out of range"):
        parse.parse_instant("+3000000d")


def test_format_duration() -> None:
    assert parse.format_duration(timedelta(days=1, hours=2, minutes=3)) == "1d2h"
    assert parse.format_duration(timedelta(seconds=45)) == "45s"
    assert parse.format_duration(timedelta(milliseconds=350)) == "350ms"


def test_instants() -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert parse.parse_instant("2026-01-02T03:04:05Z") == now
    assert parse.parse_instant("2026-01-02T04:04:05+01:00") == now
    assert parse.parse_instant("2026-01-02T03:04:05") == now  # no offset: UTC
    assert parse.parse_instant("2026-01-02") == datetime(2026, 1, 2, tzinfo=UTC)
    assert parse.parse_instant("-2h", now) == now - timedelta(hours=2)
    assert parse.parse_instant("+15m", now) == now + timedelta(minutes=15)
    assert parse.parse_instant("now", now) == now
    # unsigned, as every other duration option takes it: that long ago
    assert parse.parse_instant("1d", now) == parse.parse_instant("-1d", now)
    assert parse.parse_instant("1h30m", now) == now - timedelta(minutes=90)
    with pytest.raises(ParseError, match=r"give -15m for before now or \+15m for later"):
        parse.parse_instant("15m", now, ago=False)
    assert parse.parse_instant("+15m", now, ago=False) == now + timedelta(minutes=15)
    for bad in ("", "yesterday", "-2", "2026-13-01", "+"):
        with pytest.raises(ParseError):
            parse.parse_instant(bad, now)


def test_json_and_key_value() -> None:
    assert parse.parse_json('{"a": [1, 2]}') == {"a": [1, 2]}
    for bad in ("{", "NaN", "[Infinity]", "x"):
        with pytest.raises(ParseError):
            parse.parse_json(bad)
    assert parse.parse_key_value("a=b=c") == ("a", "b=c")
    assert parse.parse_key_value("team=") == ("team", "")
    assert parse.parse_meta(["a=1", "b=2", "a=3"]) == {"a": "3", "b": "2"}
    for bad in ("a", "=b", " =b"):
        with pytest.raises(ParseError):
            parse.parse_key_value(bad)


def test_fragment() -> None:
    """A JSON-filter option's values (``--args``): objects, ``KEY=VALUE`` strings and
    ``KEY:=JSON`` values merged, a later key winning; anything else one clean error."""
    given = ['{"a": {"b": [1]}, "n": 1}', "n:=2", "s=x=y", "t := true"]
    assert parse.parse_fragment(given, "--args") == {"a": {"b": [1]}, "n": 2, "s": "x=y", "t": True}
    assert parse.parse_fragment(None, "--args") is None
    for bad in ("[1]", '"a=b"', "7", "{nope", "x", "=v", ":=1", "n:=nope", "n:=NaN"):
        with pytest.raises(ParseError):
            parse.parse_fragment([bad], "--args")


@given(st.lists(st.text(max_size=30), min_size=1, max_size=3))
def test_fragment_never_crashes(items: list[str]) -> None:
    with contextlib.suppress(ParseError):
        assert isinstance(parse.parse_fragment(items, "--meta"), dict)


def test_id_text() -> None:
    ident = uuid.uuid4()
    assert parse.parse_id_text(str(ident)) == ident
    assert parse.parse_id_text(str(ident).upper()) == ident
    assert parse.parse_id_text(ident.hex) == ident
    assert parse.parse_id_text(str(ident)[:13]) == ident.hex[:12]
    for bad in ("abc", "1234567", "zzzzzzzz", "", ident.hex + "0"):
        with pytest.raises(ParseError):
            parse.parse_id_text(bad)


class _Finder:
    def __init__(self, ids: list[uuid.UUID]) -> None:
        self.ids = ids

    def find_ids_by_prefix(self, entity: str, prefix: str, limit: int = 10) -> list[uuid.UUID]:
        return [i for i in self.ids if i.hex.startswith(prefix)][:limit]


def test_resolve_id() -> None:
    a = uuid.UUID("aaaaaaaa-1111-4000-8000-000000000001")
    b = uuid.UUID("aaaaaaaa-2222-4000-8000-000000000002")
    finder = _Finder([a, b])
    assert parse.resolve_id(finder, "job", "aaaaaaaa-1") == a
    with pytest.raises(parse.AmbiguousId, match="ambiguous"):
        parse.resolve_id(finder, "job", "aaaaaaaa")
    with pytest.raises(parse.IdNotFound):
        parse.resolve_id(finder, "job", "bbbbbbbb")
    with pytest.raises(ParseError, match="too short"):
        parse.resolve_id(finder, "job", "aaaa")


ANY_TEXT = st.one_of(
    st.text(),
    st.text(alphabet="0123456789.smhdw-+:TZ ", max_size=30),
    st.text(alphabet="0123456789abcdef-", max_size=40),
)


@given(ANY_TEXT)
def test_duration_never_crashes(text: str) -> None:
    try:
        value = parse.parse_duration(text)
    except ParseError:
        return
    assert value >= timedelta(0)


@given(ANY_TEXT)
def test_instant_never_crashes(text: str) -> None:
    try:
        value = parse.parse_instant(text)
    except ParseError:
        return
    assert value.tzinfo is not None


@given(ANY_TEXT)
def test_id_never_crashes(text: str) -> None:
    try:
        value = parse.parse_id_text(text)
    except ParseError:
        return
    assert isinstance(value, uuid.UUID) or len(value) >= parse.MIN_PREFIX


@given(st.one_of(st.text(), st.text(alphabet='{}[]",:0123456789.eE-+ truefalsn', max_size=40)))
def test_json_never_crashes(text: str) -> None:
    with contextlib.suppress(ParseError):
        parse.parse_json(text)


@given(st.text())
def test_key_value_never_crashes(text: str) -> None:
    try:
        key, value = parse.parse_key_value(text)
    except ParseError:
        return
    assert key and "=" in text and value in text


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(delay=ANY_TEXT, at=ANY_TEXT, payload=st.text(max_size=20), meta=st.text(max_size=10))
def test_cli_edges_fail_cleanly(
    delay: str, at: str, payload: str, meta: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real command: a bad value is exit 2 with one line; a good one reaches
    the read-only refusal (exit 4) without touching any database."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    runner = CliRunner()
    for args in (["--delay", delay], ["--at", at], ["--payload", payload], ["--meta", meta]):
        res = runner.invoke(app, ["--read-only", "jobs", "enqueue", "k", *args])
        assert res.exit_code in (2, 4), (args, res.stderr, res.exception)
        assert res.stdout == "" and res.stderr.count("\n") == 1
        assert "Traceback" not in res.stderr
    assert not (tmp_path / "qctl").exists()
