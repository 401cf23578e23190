"""What the panes and drill-in screens share: filter bar, focus, back navigation."""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Input

from qctl.tui.app import Guarded, TopScreen
from qctl.tui.widgets import Loader

T = TypeVar("T")


class Pane(Guarded, Loader[T]):
    """A tab's content: a loader with a ``/`` filter bar and tables."""

    BINDINGS = [Binding("slash", "filter", "Filter")]
    filter_text = ""
    filter_hint = "filter (enter to apply, esc to cancel)"

    def compose_filter(self) -> ComposeResult:
        bar = Input(placeholder=self.filter_hint, classes="filter")
        bar.display = False
        yield bar

    def focus_first(self) -> None:
        tables = list(self.query(DataTable))
        if tables:
            tables[0].focus()

    def action_filter(self) -> None:
        bar = self.query_one(".filter", Input)
        bar.value = self.filter_text
        bar.display = True
        bar.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if "filter" not in event.input.classes:
            return
        event.stop()
        self.filter_text = event.value.strip()
        event.input.display = False
        self.focus_first()
        self.filter_changed()

    def on_key(self, event: events.Key) -> None:
        focused = self.screen.focused
        if event.key == "escape" and isinstance(focused, Input) and "filter" in focused.classes:
            event.stop()
            focused.display = False
            self.focus_first()

    def filter_changed(self) -> None:
        self.reload()


class DetailScreen(TopScreen):
    """A drill-in screen: ``esc`` goes back; its loaders refresh like a tab's."""

    BINDINGS = [Binding("escape", "back", "Back")]

    def compose_footer(self) -> ComposeResult:
        yield Footer()

    def action_back(self) -> None:
        self.app.pop_screen()
