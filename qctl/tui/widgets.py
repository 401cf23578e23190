"""Shared widgets of the dashboard: status bar, dialogs, help, tables."""

from __future__ import annotations

from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, Static

from qctl.tui.fmt import safe
from qctl.tui.live import DISCONNECTED, LIVE, LOCKED, MANUAL, PAUSED, POLLING

T = TypeVar("T")

MODE_STYLES = {
    LIVE: "bold green",
    POLLING: "bold yellow",
    DISCONNECTED: "bold white on red",
    LOCKED: "bold black on yellow",
    PAUSED: "bold black on yellow",
    MANUAL: "bold",
}


class StatusBar(Static):
    """One line: connection mode (live / polling / disconnected / waiting for a lock /
    paused), target, error.
    The target is ``CliContext.describe()``, which already says ``[read-only]``."""

    def show(self, mode: str, location: str, detail: str) -> None:
        text = Text()
        text.append(f" ● {mode or 'connecting'} ", MODE_STYLES.get(mode, "bold"))
        text.append(f" {location}")
        if detail:
            text.append(f"  {detail}", "red" if mode == DISCONNECTED else "dim")
        self.update(text)


class ConfirmDialog(ModalScreen[bool]):
    """Yes/no for a destructive action; ``y``/``enter`` confirm, ``n``/``esc`` decline."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class PromptDialog(ModalScreen[dict[str, str] | None]):
    """A few text fields (e.g. a signal's name and payload); enter submits, esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, fields: list[tuple[str, str, str]]) -> None:
        """``fields``: (name, label, default)."""
        super().__init__()
        self.title_text = title
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="question")
            for name, label, default in self.fields:
                yield Label(label)
                yield Input(value=default, id=f"field-{name}")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        if event.input is not inputs[-1]:
            inputs[inputs.index(event.input) + 1].focus()
            return
        values = {name: self.query_one(f"#field-{name}", Input).value for name, *_ in self.fields}
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChoiceDialog(ModalScreen[str | None]):
    """Pick one of a few choices by its first letter (e.g. complete / fail / retry)."""

    def __init__(self, question: str, choices: list[str]) -> None:
        super().__init__()
        self.question = question
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            with Horizontal(id="buttons"):
                for c in self.choices:
                    yield Button(f"{c} ({c[0]})", id=f"choice-{c}")
                yield Button("cancel (esc)", variant="primary", id="choice-")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "").removeprefix("choice-") or None)

    def on_key(self, event: Any) -> None:
        if event.key == "escape":
            self.dismiss(None)
            return
        for c in self.choices:
            if event.key == c[0]:
                self.dismiss(c)
                return


class HelpScreen(ModalScreen[None]):
    """The keys of a dashboard (``?``): the system's help text."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        # Scrolls where the terminal is shorter than the text (the keys come first).
        with VerticalScroll(id="dialog"):
            yield Static(self.text, id="help", markup=False)


class Table(DataTable[Any]):
    def _update_dimensions(self, new_rows: Any) -> None:
        super()._update_dimensions(new_rows)
        # Textual keys its rendered cells by an update count that new column widths do
        # not bump: a header painted between add_row and this (idle) update kept the
        # header's narrow widths above the wider rows until the next refill.
        self._update_count += 1


def table(widget_id: str, *columns: str) -> DataTable[Any]:
    t = Table(id=widget_id, cursor_type="row", zebra_stripes=True)
    for c in columns:
        t.add_column(c, key=c)
    return t


def selected_key(t: DataTable[Any]) -> str | None:
    if t.row_count == 0:
        return None
    try:
        key = t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value
    except Exception:
        return None
    return key


def table_cell(value: Any) -> Any:
    """A DataTable cell: text as plain ``Text`` with control characters and escape
    sequences escaped (DataTable would read a ``str`` as markup, so a ``[`` in a kind or
    an error could restyle the table); other renderables as they are."""
    if isinstance(value, str):
        return Text(" ".join(safe(value).split()), end="", no_wrap=True)
    if isinstance(value, Text) and safe(value.plain) != value.plain:
        return Text(" ".join(safe(value.plain).split()), style=value.style, end="", no_wrap=True)
    return value


def refill(t: DataTable[Any], rows: list[tuple[str, list[Any]]]) -> None:
    """Replace a table's rows, keeping the cursor on the same key when it survives."""
    keep = selected_key(t)
    row_index = t.cursor_row
    t.clear()
    for key, cells in rows:
        t.add_row(*map(table_cell, cells), key=key)
    keys = [k for k, _ in rows]
    if keep in keys:
        t.move_cursor(row=keys.index(keep), animate=False)
    elif rows:
        t.move_cursor(row=min(row_index, len(rows) - 1), animate=False)
