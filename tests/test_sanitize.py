"""Text from a database shown escaped on a terminal: the sanitiser itself, and the
dashboard's formatting helpers and table cells that use it."""

from __future__ import annotations

import uuid
from enum import StrEnum

import pytest
from rich.text import Text

from qctl.core.sanitize import sanitize
from qctl.tui import fmt
from qctl.tui.widgets import table_cell

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # writes "evil" to the operator's clipboard
CLEAR = "\x1bc\x1b[2J\x1b[H"  # reset, clear the screen, cursor home
C1_CSI = "\x9b31m"  # the one-byte CSI of C1


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (f"boom{OSC52}", "boom\\x1b]52;c;ZXZpbA==\\x07"),
        (CLEAR, "\\x1bc\\x1b[2J\\x1b[H"),
        (C1_CSI, "\\x9b31m"),
        ("a\x00b\x7fc\rd\x08", "a\\x00b\\x7fc\\x0dd\\x08"),
        ("tab\tnew\nline", "tab\\x09new\\x0aline"),
        ("user\u202egnp.exe", "user\\u202egnp.exe"),  # right-to-left override
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("bad\udcffbyte", "bad\\udcffbyte"),
        ("plain ünïcode ✓ [b]x[/b]", "plain ünïcode ✓ [b]x[/b]"),
    ],
)
def test_sanitize_escapes_controls(raw: str, shown: str) -> None:
    assert sanitize(raw) == shown


def test_multiline_keeps_layout_only() -> None:
    assert sanitize("a\tb\nc\x1b[2J", multiline=True) == "a\tb\nc\\x1b[2J"
    text = "ordinary text"
    assert sanitize(text) is text  # nothing to escape: the same string, no copy


def test_dashboard_helpers_escape() -> None:
    assert fmt.one_line(f"line one\nline two{OSC52}") == "line one line two\\x1b]52;c;ZXZpbA==\\x07"
    assert fmt.safe(f"a\nb{CLEAR}") == "a\nb\\x1bc\\x1b[2J\\x1b[H"
    assert "\x1b" not in fmt.heading(f"name{CLEAR}", uuid.uuid4(), _State.X).plain


class _State(StrEnum):
    X = "running"


def test_table_cells_are_plain_escaped_text() -> None:
    cell = table_cell(f"[reverse]k{OSC52}")
    assert isinstance(cell, Text)
    # A str cell would be read as markup by DataTable: "[reverse]" stays literal text.
    assert cell.plain == "[reverse]k\\x1b]52;c;ZXZpbA==\\x07" and not cell.spans
    styled = table_cell(Text("dead\x1b[2J", "red"))
    assert isinstance(styled, Text)
    assert (styled.plain, str(styled.style)) == ("dead\\x1b[2J", "red")
    clean = Text("ok", "green")
    assert table_cell(clean) is clean
    assert table_cell(3) == 3
