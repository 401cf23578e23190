"""``qctl_kit.decode``: the one decoding path every system's reads use."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qctl_kit import decode
from qctl_kit.decode import FarInstant


def depth(value: Any) -> int:
    n = 0
    while isinstance(value, list | dict) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        n += 1
    return n + isinstance(value, list | dict)


def test_json_of_any_depth_and_integer_length_decodes() -> None:
    assert depth(decode.loads("[" * 100_000 + "]" * 100_000)) == 100_000
    value = decode.loads('{"n": ' + "7" * 5000 + ', "m": [' + "9" * 5000 + "]}")
    assert value == {
        "n": "77777777777777777777…(cut: 5000 digits)",
        "m": ["99999999999999999999…(cut: 5000 digits)"],
    }
    assert decode.loads("-" + "1" * 4301) == "-11111111111111111111…(cut: 4301 digits)"
    assert decode.loads("1" * 4300) == int("1" * 4300)  # the interpreter's limit: exact
    with pytest.raises(ValueError):
        decode.loads("[1,")


def test_a_json_column_never_raises() -> None:
    assert decode.json_value(None) is None
    assert decode.json_value('{"a": 1}') == {"a": 1}
    assert decode.json_value(b'{"a": 1}') == {"a": 1}
    assert decode.json_value("not json") == "not json"
    assert decode.json_value(b"\xff\x00") == "b'\\xff\\x00'"


def test_fold_makes_every_value_strict_json() -> None:
    value = [
        math.nan,
        math.inf,
        -math.inf,
        10**5000,
        {"deep": decode.loads("[" * 3000 + "]" * 3000)},
    ]
    folded = decode.fold(value)
    text = json.dumps(folded, allow_nan=False)
    assert folded[:3] == ["NaN", "Infinity", "-Infinity"]
    assert folded[3] == "10000000000000000000…(cut: 5001 digits)"
    assert depth(json.loads(text)[4]) == decode.JSON_DEPTH - 1
    assert decode.fold(10**4000) == 10**4000  # printable: exact


def test_far_instants_sort_around_every_datetime() -> None:
    now = datetime.now(UTC)
    values: list[Any] = [
        FarInstant("infinity"),
        now,
        FarInstant("-infinity"),
        FarInstant("4714-11-24 00:00:00+00 BC"),
        FarInstant("10000-01-01 00:00:00+00"),
        now - timedelta(days=1),
    ]
    assert [str(v) if isinstance(v, FarInstant) else v for v in sorted(values)][2:4] == [
        now - timedelta(days=1),
        now,
    ]
    assert sorted(values)[0].past and sorted(values)[1].past
    assert not sorted(values)[-1].past and not sorted(values)[-2].past
    assert FarInstant("infinity") > now and now < FarInstant("infinity")


def test_epoch_counts_out_of_range_or_not_numbers() -> None:
    assert decode.from_epoch(None, 1000) is None
    assert decode.from_epoch(86_400_000, 1000) == datetime(1970, 1, 2, tzinfo=UTC)
    assert decode.from_epoch(2**62, 1000) == FarInstant(str(2**62))
    assert decode.from_epoch("infinity", 1_000_000) == FarInstant("infinity")
    start, end = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    assert decode.elapsed(start, end) == timedelta(days=1)
    assert decode.elapsed(start, FarInstant("infinity")) is None


def test_postgres_loaders() -> None:
    import psycopg

    from qctl_kit.postgres.connect import ADAPTERS
    from tests.conftest import PG_DSN, require_pg

    require_pg()
    with psycopg.connect(PG_DSN, context=ADAPTERS) as conn:
        for binary in (False, True):
            row = conn.execute(
                "SELECT 'infinity'::timestamptz, '-infinity'::timestamp,"
                " '10000-01-01'::timestamptz, '2026-01-01'::timestamptz,"
                " %s::jsonb, %s::json",
                ("[" * 3000 + "]" * 3000, '{"n": ' + "7" * 5000 + "}"),
                binary=binary,
            ).fetchone()
            assert row is not None
            assert row[:2] == ("infinity", "-infinity") and isinstance(row[2], FarInstant)
            assert row[3] == datetime(2026, 1, 1, tzinfo=UTC)
            assert depth(row[4]) == 3000 and row[5]["n"].endswith("(cut: 5000 digits)")
