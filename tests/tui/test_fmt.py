"""Durations the dashboards show (DBOS's workflow and step times, azync's ages)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from qctl.systems.dbos.tui.cells import took
from qctl.tui import fmt


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.25, "0.25s"),
        (9.0, "9s"),
        (12.34, "12.3s"),
        (59.95, "59s"),
        (42.0, "42s"),
        (61.5, "1m01s"),
        (-12.5, "-12.5s"),
        (7322, "2h02m"),
    ],
)
def test_below_a_minute_keeps_the_fraction(seconds: float, shown: str) -> None:
    assert fmt.duration(seconds) == shown
    assert fmt.duration(timedelta(seconds=seconds)) == shown


def test_dbos_step_time_from_epoch_ms() -> None:
    assert took(1_000, 13_345) == "12.3s"
    assert took(1_000, 1_250) == "0.25s"


def test_one_way_to_write_a_value_in_cells_and_details() -> None:
    """Booleans as yes or no, lists and mappings as JSON (as the command line writes
    them), never Python's ``False`` or ``['a']``."""
    from qctl.tui.widgets import table_cell

    assert [fmt.any_text(v) for v in (True, False, None, 3, "a\x1b")] == [
        "yes",
        "no",
        "",
        "3",
        "a\\x1b",
    ]
    assert fmt.any_text(["qctl-demo-stand-in-1"]) == '["qctl-demo-stand-in-1"]'
    assert [table_cell(v).plain for v in (False, ["demo"], {"n": 1})] == [
        "no",
        '["demo"]',
        '{"n": 1}',
    ]
    record = {"id": 7, "tags": ["demo"], "paused": False, "args": "x", "none": None, "e": []}
    assert fmt.record_lines(record, json_keys=("args",)) == [
        "id: 7",
        'tags: ["demo"]',
        "paused: no",
        'args: "x"',
    ]
