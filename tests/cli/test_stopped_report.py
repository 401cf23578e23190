"""Batched work stopped part-way (an error carrying ``qctl_kit.errors.add_done``: a
vacuum's batched statements) says what it committed and the line that finishes it. The
verb engine's own part-way result is in tests/systems/test_verbs.py; the end-to-end
batched runs are in tests/cli/test_timeouts.py."""

from __future__ import annotations

import json
import sys

import pytest

from qctl.cli.common import reported
from qctl.cli.output import OutputFormat
from qctl_kit.errors import add_done


def _stop_batches() -> None:
    exc = KeyboardInterrupt()  # Ctrl-C after two batches committed
    add_done(exc, rows=300, batches=2)
    raise exc


@pytest.mark.parametrize("fmt", [OutputFormat.JSON, OutputFormat.TABLE])
def test_batched_work_stopped_part_way_says_what_finishes_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    monkeypatch.setattr(sys, "argv", ["qctl", "vacuum", "dead", "--older-than", "7d", "--yes"])
    with pytest.raises(KeyboardInterrupt), reported(fmt, "dead job(s) deleted"):
        _stop_batches()
    batches = capsys.readouterr()
    assert batches.err == (
        "qctl: stopped part-way: done 300 dead job(s) deleted in 2 committed batch(es); they "
        "stay done. To finish, run again: qctl vacuum dead --older-than 7d --yes\n"
    )
    if fmt == OutputFormat.TABLE:
        assert batches.out == ""
        return
    assert json.loads(batches.out) == {
        "stopped": True,
        "count": 300,
        "batches": 2,
        "error": "interrupted",
        "finish_with": "qctl vacuum dead --older-than 7d --yes",
    }
