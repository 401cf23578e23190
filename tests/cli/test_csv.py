"""``-o csv`` against formula injection, on both backends: a kind or an error that a
spreadsheet would evaluate gets a leading ``'``, numbers stay numbers, and
``QCTL_CSV_RAW=1`` writes the text as stored."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from qctl.cli.output import OutputFormat, emit_rows
from tests.cli.conftest import Run, make_dead

HOSTILE = ["=cmd|' /C calc'!A0", "=1+2", "+SUM(1,2)", "@SUM(A1)", "\t=1+1", "-2+3"]


@pytest.fixture(scope="module")
def hostile(st: Any) -> list[str]:
    """One dead job per hostile text, as its kind and as its error."""
    for text in HOSTILE:
        make_dead(st, text, error=text)
    return HOSTILE


def dead_rows(run: Run) -> dict[str, dict[str, str]]:
    result = run("jobs", "list", "--state", "dead", "-o", "csv")
    assert result.exit_code == 0, result.stderr
    return {row["kind"]: row for row in csv.DictReader(io.StringIO(result.stdout))}


def test_csv_neutralises_cells_a_spreadsheet_would_evaluate(run: Run, hostile: list[str]) -> None:
    rows = dead_rows(run)
    assert set(rows) == {f"'{text}" for text in hostile}
    for text in hostile:
        assert rows[f"'{text}"]["last_error"] == f"'{text}"
        assert rows[f"'{text}"]["attempt"] == "1"


def test_csv_raw_keeps_the_text_as_stored(
    run: Run, hostile: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QCTL_CSV_RAW", "1")
    rows = dead_rows(run)
    assert set(rows) == set(hostile)
    assert all(rows[text]["last_error"] == text for text in hostile)


def test_numbers_are_never_prefixed() -> None:
    out = io.StringIO()
    rows = [{"count": -5, "ratio": -1.5, "text": "-5", "safe": "5-1"}]
    emit_rows(rows, ["count", "ratio", "text", "safe"], OutputFormat.CSV, out=out)
    assert out.getvalue() == "count,ratio,text,safe\n-5,-1.5,'-5,5-1\n"


def test_a_bad_csv_raw_value_is_a_usage_error(
    run: Run, hostile: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QCTL_CSV_RAW", "maybe")
    result = run("jobs", "list", "-o", "csv")
    assert result.exit_code == 2
    assert "QCTL_CSV_RAW='maybe' is not a boolean" in result.stderr
