"""``qctl queues list`` on both backends: estimated counts are marked (``~N`` in tables,
``"estimated"`` in JSON and CSV) and ``--exact`` takes the exact read instead."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import Depths, Source
from tests.cli.conftest import Run, enqueue, out_json


@pytest.fixture
def estimating(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores answer live_depths as a huge table would: counts flagged as estimates."""
    for cls in (PostgresStore, SqliteStore):
        exact = cls.kind_depths

        def live(self: Any, source: Source, exact: Any = exact) -> tuple[dict[str, Depths], bool]:
            return exact(self, source), True

        monkeypatch.setattr(cls, "live_depths", live)


def _row(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (row,) = [r for r in rows if r["kind"] == kind]
    return row


def test_exact_counts_are_not_marked(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 2)
    row = _row(out_json(run("queues", "list", "-s", "queue", "-o", "json")), kind)
    assert (row["pending"], row["estimated"]) == (2, False)
    table = run("queues", "list", "-s", "queue").stdout
    assert "~" not in table and kind in table


def test_estimated_counts_are_marked(run: Run, st: Any, kind: str, estimating: None) -> None:
    enqueue(st, kind, 2)
    row = _row(out_json(run("queues", "list", "-s", "queue", "-o", "json")), kind)
    assert (row["pending"], row["succeeded"], row["estimated"]) == (2, 0, True)
    (line,) = [ln for ln in run("queues", "list", "-s", "queue").stdout.splitlines() if kind in ln]
    assert line.count("~0") == 2  # succeeded and paused; live states stay plain
    csv_rows = list(csv.DictReader(io.StringIO(run("queues", "list", "-o", "csv").stdout)))
    assert _row(csv_rows, kind)["estimated"] == "true"
    exact = _row(out_json(run("queues", "list", "--exact", "-s", "queue", "-o", "json")), kind)
    assert (exact["pending"], exact["estimated"]) == (2, False)
