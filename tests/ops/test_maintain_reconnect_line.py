"""``maintain``'s lost-connection line: one line, at most about 160 characters of the
cause, cut at a word and marked, whatever libpq's message (several lines, long)."""

from __future__ import annotations

import threading

from qctl.systems.azync.ops import maintain
from qctl_kit.errors import Unavailable

CAUSE = (
    "PostgreSQL at postgresql://qctl@db.internal:5432/prod is unavailable: server closed "
    "the connection unexpectedly\n\tThis probably means the server terminated abnormally\n"
    "\tbefore or while processing the request. connection to server at 10.0.0.7, port "
    "5432 failed: Connection refused Is the server running on that host and accepting "
    "TCP/IP connections?"
)


def test_reconnect_line_is_one_line_cut_at_a_word() -> None:
    stop = threading.Event()
    lines: list[str] = []

    def open_store() -> maintain.ConsoleStore:
        stop.set()  # one failed attempt, then stop
        raise Unavailable(CAUSE)

    maintain.run(open_store, [], 10, 0.01, stop, lines.append, lambda steps: None)
    [line] = lines
    assert "\n" not in line and "\t" not in line
    text = line.removeprefix("maintain: connection lost (").split("); reconnecting in")[0]
    assert text.endswith(" …") and len(text) <= 160, text
    cut = text.removesuffix(" …")
    assert cut.split()[-1] in CAUSE.split(), cut  # a whole word ends it
