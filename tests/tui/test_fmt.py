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
