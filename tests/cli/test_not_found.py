"""An id that names nothing, typed whole or as a prefix, on every azync noun with a
``show``: one line in the wording every system uses, exit 3 (not found)."""

from __future__ import annotations

import uuid

import pytest

from tests.cli.conftest import Run


@pytest.mark.parametrize("noun", ["job", "dag", "event", "workflow"])
def test_show_of_an_unknown_id_says_no_such(noun: str, run: Run) -> None:
    whole = str(uuid.uuid4())
    prefix = whole[:8]
    shown = run(f"{noun}s", "show", whole)
    assert (shown.exit_code, shown.stderr) == (3, f"qctl: error: no {noun} '{whole}'\n")
    shown = run(f"{noun}s", "show", prefix)
    assert (shown.exit_code, shown.stderr) == (
        3,
        f"qctl: error: no {noun} id starts with '{prefix}'\n",
    )
