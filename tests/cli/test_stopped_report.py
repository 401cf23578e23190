"""A bulk run stopped part-way reports in one shape however it worked: target by target
(``qctl.core.bulk.Stopped``, DBOS's, dispatch's and hopper's verbs) or in azync's
batches (an error carrying ``qctl_store.errors.add_done``). The end-to-end runs are in
tests/cli/test_timeouts.py (batches), tests/dispatch/test_actions.py and
tests/dbos/test_bulk_report.py (target by target)."""

from __future__ import annotations

import json
import sys

import pytest

from qctl.cli.common import reported
from qctl.cli.output import OutputFormat
from qctl.core import bulk
from qctl_store.errors import add_done

KEYS = ["stopped", "count", "batches", "results", "skipped", "failed", "not_tried", "finish_with"]


def _stop_targets() -> None:
    bulk.each(["a", "b", "c"], lambda t: {"id": t} if t != "b" else 1 / 0, str)


def _stop_batches() -> None:
    exc = KeyboardInterrupt()  # Ctrl-C after two batches committed
    add_done(exc, rows=300, batches=2)
    raise exc


@pytest.mark.parametrize("fmt", [OutputFormat.JSON, OutputFormat.TABLE])
def test_both_ways_of_working_stop_in_one_shape(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    monkeypatch.setattr(sys, "argv", ["qctl", "jobs", "retry", "--all", "--yes"])
    with pytest.raises(ZeroDivisionError), reported(fmt):
        _stop_targets()
    targets = capsys.readouterr()
    with pytest.raises(KeyboardInterrupt), reported(fmt, "job(s) retried"):
        _stop_batches()
    batches = capsys.readouterr()
    assert targets.err == (
        "qctl: stopped part-way: done 1, skipped 0, failed at b (division by zero), "
        "not tried 1: c\n"
    )
    assert batches.err == (
        "qctl: stopped part-way: done 300 job(s) retried in 2 committed batch(es); they "
        "stay done. To finish, run again: qctl jobs retry --all --yes\n"
    )
    if fmt == OutputFormat.TABLE:
        assert targets.out == batches.out == ""
        return
    assert json.loads(targets.out) == {
        "stopped": True,
        "count": 1,
        "batches": None,
        "results": [{"id": "a"}],
        "skipped": [],
        "failed": {"id": "b", "error": "division by zero"},
        "not_tried": ["c"],
        "finish_with": None,
    }
    assert json.loads(batches.out) == {
        "stopped": True,
        "count": 300,
        "batches": 2,
        "results": [],
        "skipped": [],
        "failed": {"id": None, "error": "interrupted"},
        "not_tried": [],
        "finish_with": "qctl jobs retry --all --yes",
    }
    assert list(json.loads(targets.out)) == list(json.loads(batches.out)) == KEYS
