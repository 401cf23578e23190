"""Text from a database, made safe to put on a terminal.

Job errors, kinds, meta, event types and names are written by whoever writes the jobs.
Printed raw, a control character or an escape sequence in them acts on the operator's
terminal (ESC c clears it, OSC 52 writes the clipboard, a CSI moves the cursor over
earlier output). ``sanitize`` shows every such character escaped (``\\x1b``, ``\\u202e``),
which also disarms the sequence it introduces: what follows the introducer is printable.
Tables, CSV and the dashboard use it; JSON output stays exact.
"""

from __future__ import annotations

import re

_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline), DEL and C1 (CSI, OSC, ...)
    "\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff"  # invisible and bidi controls
    "\ud800-\udfff"  # lone surrogates (undecodable bytes): not printable at all
)
_ANY = re.compile(f"[{_UNSAFE}\t\n]")
_KEEP_LAYOUT = re.compile(f"[{_UNSAFE}]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def sanitize(text: str, *, multiline: bool = False) -> str:
    """``text`` with control characters, escape-sequence introducers, bidi overrides
    and invisible characters shown escaped. ``multiline`` keeps tabs and newlines (a
    detail view); otherwise they are escaped too (one table cell, one line)."""
    pattern = _KEEP_LAYOUT if multiline else _ANY
    return pattern.sub(_escaped, text) if pattern.search(text) else text
