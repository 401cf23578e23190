"""What the panes and drill-in screens share: filter bar, focus, back navigation."""

from __future__ import annotations

from typing import Any, TypeVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input

from qctl.tui.base import Guarded, Loader, TopScreen, footer

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


class RecordView(Loader[T]):
    """A drill-in screen's content: one record (job, event, DAG run, execution) by id.
    ``render_detail`` draws ``detail``, the last load, again on demand (``v``)."""

    payload = False
    """Whether the record's payload is shown."""

    def __init__(self, record_id: Any) -> None:
        """``record_id``: a UUID on azync, a workflow id (any string) on DBOS."""
        super().__init__()
        self.record_id = record_id
        self.detail: T | None = None

    def show(self, data: T) -> None:
        self.detail = data
        self.render_detail()

    def render_detail(self) -> None:
        raise NotImplementedError


class DetailScreen(TopScreen):
    """A drill-in screen over one record: ``esc`` goes back; its view refreshes like a tab."""

    BINDINGS = [Binding("escape", "back", "Back")]

    def __init__(self, record_id: Any) -> None:
        super().__init__()
        self.record_id = record_id

    def view(self) -> RecordView[Any]:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        yield from self.compose_status()
        yield self.view()
        yield footer()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_toggle_payload(self) -> None:
        view = self.query_one(RecordView)
        view.payload = not view.payload
        view.render_detail()
