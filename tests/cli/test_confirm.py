"""The question every confirmation asks names rows (kinds, labels) read from the
database: shown with control characters escaped, as every other database text."""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Run, make_dead


def test_the_question_escapes_database_text(run: Run, st: Any, tty: None) -> None:
    kind = "evil\x1b]0;owned\x07\x1b[2J"
    make_dead(st, kind, 1)
    asked = run("jobs", "retry", "--all-dead", "--kind", kind, input="n\n")
    assert asked.exit_code == 4, asked.stderr
    assert "Retry 1 azync job (1 dead: evil" in asked.stderr
    assert "\x1b" not in asked.stderr and "\x07" not in asked.stderr
