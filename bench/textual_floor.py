"""The least a Textual dashboard costs to start: the floor ``qctl top``'s first frame is
compared with (``bench/tui_bench.py``), as the psycopg floor is for one-shot commands.

One screen of the widgets the overview's first frame shows (a data table of ten rows, a
status line, the footer), no stylesheet of its own and no database: Python's start,
Textual's import, its default stylesheet, first layout and render. With ``--tabs`` the
table sits in the first of six tabs (a ``Tabs`` bar over a ``ContentSwitcher``, the
hidden tabs empty, as ``qctl top`` has them), the floor of a tabbed dashboard.
``updated`` is in its first frame, the word the benchmark waits for in ``qctl top``'s
status bar; ``q`` quits.
"""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import ContentSwitcher, DataTable, Footer, Static, Tab, Tabs

TABS = 6
"""As many tabs as azync's dashboard has."""


class Floor(App[None]):
    BINDINGS = [Binding("q", "quit", "Quit")]

    def __init__(self, tabs: bool) -> None:
        super().__init__()
        self.tabs = tabs

    def compose(self) -> ComposeResult:
        yield Static("updated")
        if self.tabs:
            yield Tabs(*(Tab(f"{i + 1} tab", id=f"tab-{i}") for i in range(TABS)))
            with ContentSwitcher(initial="p0"):
                yield Vertical(DataTable(), id="p0")
                for i in range(1, TABS):
                    yield Vertical(id=f"p{i}")
        else:
            yield DataTable()
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("kind", "pending", "active", "dead")
        for i in range(10):
            table.add_row(f"kind_{i}", i, i, i)


if __name__ == "__main__":
    Floor(tabs="--tabs" in sys.argv[1:]).run()
