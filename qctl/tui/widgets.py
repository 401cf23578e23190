"""Shared widgets of the dashboard: status bar, dialogs, help, tables."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input, Label, OptionList, Static
from textual.widgets.data_table import ColumnKey

from qctl.tui import fmt
from qctl.tui.fmt import safe
from qctl.tui.live import DISCONNECTED, LIVE, LOCKED, MANUAL, PAUSED, POLLING
from qctl_kit.dsn import redact

T = TypeVar("T")
R = TypeVar("R")

MODE_STYLES = {
    LIVE: "bold green",
    POLLING: "bold yellow",
    DISCONNECTED: "bold white on red",
    LOCKED: "bold black on yellow",
    PAUSED: "bold black on yellow",
    MANUAL: "bold",
}


LOCATION_MIN = 24
"""The fewest cells the status bar's target keeps beside a detail too long for the line
(an error, which wraps below it)."""


class StatusBar(Static):
    """One line: connection mode (live / polling / disconnected / waiting for a lock /
    paused), target, detail. The target is ``CliContext.describe()``, which already says
    ``[read-only]``; it is cut in its middle to the width the line leaves (a long DSN's
    start and its schema both kept), so that the bar wraps only for an error too long for
    one line, which it shows in full."""

    parts: tuple[str, str, str] = ("", "", "")

    def show(self, mode: str, location: str, detail: str) -> None:
        # Passwords never reach the screen, whoever built the location.
        self.parts = (mode, redact(location), detail)
        self.refresh(layout=True)

    def render(self) -> Text:
        mode, location, detail = self.parts
        head = f" ● {mode or 'connecting'} "
        tail = f"  {detail}" if detail else ""
        width = self.content_size.width or self.app.size.width
        room = width - cell_len(head) - 1 - cell_len(tail)
        if room < min(LOCATION_MIN, cell_len(location)):
            room = width - cell_len(head) - 1  # the detail wraps to the lines below
        text = Text()
        text.append(head, MODE_STYLES.get(mode, "bold"))
        text.append(f" {fmt.middle(location, max(room, 0))}")
        if detail:
            text.append(tail, "red" if mode == DISCONNECTED else "dim")
        return text


class ConfirmDialog(ModalScreen[bool]):
    """Yes/no for a destructive action; ``y``/``enter`` confirm, ``n``/``esc`` decline.
    With ``ask_reason``, an optional reason field (``r`` or a click; enter leaves it for
    the answer), whose text (``reason``) the audit entry keeps as the command line's
    ``--reason``."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
        Binding("r", "reason", "Reason"),
    ]

    def __init__(self, question: str, *, ask_reason: bool = False) -> None:
        super().__init__()
        self.question = question
        self.ask_reason = ask_reason
        self.reason: str | None = None
        """The reason typed, on one line, once answered; None when none was."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            if self.ask_reason:
                yield Label("reason (r; optional, kept in the audit trail):")
                yield Input(id="reason", placeholder="why, e.g. an incident's name")
            with Horizontal(id="buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id == "yes")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#no", Button).focus()  # the answer is still to give

    def action_reason(self) -> None:
        if self.ask_reason:
            self.query_one("#reason", Input).focus()

    def action_answer(self, yes: bool) -> None:
        if self.ask_reason:
            self.reason = " ".join(self.query_one("#reason", Input).value.split()) or None
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


class CommandPrompt(PromptDialog):
    """The ``:`` command line: one field whose words complete from ``complete`` (tab or
    right arrow takes the suggestion); enter submits, esc leaves."""

    def __init__(self, title: str, label: str, complete: Callable[[str], str | None]) -> None:
        super().__init__(title, [])
        self.label = label
        self.complete = complete

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="question")
            yield Label(self.label)
            yield CommandInput(self.complete, id="field-command")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.prevent_default()  # not PromptDialog's handler too: one dismissal
        self.dismiss({"command": event.value})


class CommandInput(Input):
    """The command line's field: tab completes it. Handled by the field itself, in the
    order of the keys typed: a binding of the screen would run ahead of the keys the
    field has not inserted yet (typed faster than the app reads them)."""

    def __init__(self, complete: Callable[[str], str | None], **kwargs: Any) -> None:
        super().__init__(suggester=Completer(complete), **kwargs)
        self.complete = complete

    async def _on_key(self, event: events.Key) -> None:
        if event.key != "tab":
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        suggestion = self.complete(self.value)
        if suggestion:
            self.value = suggestion
            self.cursor_position = len(suggestion)


class Completer(Suggester):
    """An ``Input``'s suggestion from a function of its value (None: none)."""

    def __init__(self, complete: Callable[[str], str | None]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.complete = complete

    async def get_suggestion(self, value: str) -> str | None:
        return self.complete(value)


ALL_STATES = "all"
"""The state picker's choice of every state."""


class StatePicker(ModalScreen[str | None]):
    """Which state a list shows: one of the system's declared ``states``, or all.
    Arrows and enter pick; typing jumps to the first state starting with what was typed;
    esc leaves the list as it was (None)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, states: Sequence[str], current: str | None) -> None:
        super().__init__()
        self.title_text = title
        self.choices = [ALL_STATES, *states]
        self.current = current or ALL_STATES
        self.typed = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="question")
            yield OptionList(*self.choices, id="states")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in self.choices:
            options.highlighted = self.choices.index(self.current)
        options.focus()

    def on_key(self, event: events.Key) -> None:
        if event.character is None or not event.character.isprintable() or event.key == "space":
            return
        event.stop()
        self.typed += event.character.lower()
        found = [i for i, c in enumerate(self.choices) if c.lower().startswith(self.typed)]
        if not found:
            self.typed = event.character.lower()
            found = [i for i, c in enumerate(self.choices) if c.lower().startswith(self.typed)]
        if found:
            self.query_one(OptionList).highlighted = found[0]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[event.option_index])

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


HELP_WIDTH = 88
"""The widest the help's lines are drawn, or the terminal's width less ``HELP_FRAME``
where narrower."""
HELP_FRAME = 6
"""Columns of the help's frame: its border, padding and scrollbar (qctl.tcss)."""
KEY_COLUMN = re.compile(r" *\S.*? {2,}(?=\S)")
"""A help line's key column (``  enter      ``, ``Jobs:      ``): where its words, and
its continuation lines, start."""
FULL = HELP_WIDTH - 20
"""A help line this long was cut where the text was written: the next line, indented to
its continuation, goes on with it."""


def hanging(line: str, width: int) -> int:
    """Where ``line``'s continuations start: under its words after a key column, else
    at its own indent (two, where it has none)."""
    key = KEY_COLUMN.match(line)
    if key and key.end() <= width // 2:
        return key.end()
    return len(line) - len(line.lstrip(" ")) or 2


def hang(text: str, width: int) -> str:
    """The help's ``text`` wrapped at ``width``: its paragraphs (a line, or lines the
    text cut at its own width) filled, each continuation under its first line's words."""
    out: list[str] = []
    paragraph, indent, last = "", 0, ""
    for line in [*text.splitlines(), ""]:
        lead = len(line) - len(line.lstrip(" "))
        if paragraph and line.strip() and lead == indent and len(last) >= FULL:
            paragraph, last = f"{paragraph} {line.strip()}", line
            continue
        if paragraph or out:
            out += textwrap.wrap(
                paragraph,
                max(width, indent + 8),
                subsequent_indent=" " * indent,
                break_on_hyphens=False,
            ) or [""]
        paragraph, indent, last = line.rstrip(), hanging(line, width), line
    return "\n".join(out)


class HelpScreen(ModalScreen[None]):
    """The keys of a dashboard (``?``): the system's help text, wrapped at the width the
    terminal has, scrolled where it is taller (the keys come first)."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(id="help")

    def on_mount(self) -> None:
        self.wrap(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self.wrap(event.size.width)

    def wrap(self, width: int) -> None:
        wrapped = hang(self.text, min(HELP_WIDTH, width - HELP_FRAME))
        self.query_one("#help", Static).update(Text(wrapped))


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a dashboard table, declared once: its header, its cell for a row,
    what it means (the help's Columns section is built from these) and how it takes
    width. A fixed column (a count, a state, a time) is as wide as its widest cell; the
    flexible ones (a kind, a name, an error) share what the terminal has left and cut
    their text with an ellipsis, so that a long kind never pushes a count off the screen.
    """

    name: str
    about: str
    """What the column means, for the help: ``name: about``."""
    get: Callable[[R], Any] | None = None
    """The row's value; None where the pane fills the column itself."""
    flex: bool = False
    middle: bool = False
    """Cut in the middle, keeping both ends (``MiddleCut``): a kind, where two that share
    a long prefix must not look the same."""
    time: Literal["", "ago", "when"] | Callable[[Any, datetime], Any] = ""
    """A value shown against the dashboard's clock: an instant by ``fmt.ago`` or
    ``fmt.when``, or by a function of (value, now) (a lease's time left)."""
    short: str = ""
    """The header where the table is too wide for the terminal ("avail" for
    "available"); empty: ``name`` always."""
    narrow: int = 0
    """The most cells a fixed ``middle`` column takes where the table is too wide (a
    whole id, cut in its middle); 0: its widest cell always."""
    drop: int = 0
    """Where the table is still too wide: 0, always shown; else hidden, the highest
    first (then the rightmost), until the rest fit (``Table.fitting``)."""

    def cell(self, row: R, now: datetime) -> Any:
        value = self.get(row) if self.get is not None else None
        if self.time == "ago":
            return fmt.ago(value, now)
        if self.time == "when":
            return fmt.when(value, now)
        if callable(self.time):
            return self.time(value, now)
        if self.middle and isinstance(value, str):
            return MiddleCut(" ".join(safe(value[:CELL_MAX]).split()), **CELL_TEXT)
        return "" if value is None else value


def flex(
    name: str,
    about: str = "",
    get: Callable[[Any], Any] | None = None,
    *,
    middle: bool = False,
    drop: int = 0,
) -> Column[Any]:
    """A column that shares the width left over (a kind, a name, an error)."""
    return Column(name, about, get, flex=True, middle=middle, drop=drop)


ID_NARROW = 13
"""An id's cells where the table is too wide: both ends of a UUID ("0193a1b2-…4f2e1c")."""


def ident(name: str, about: str, get: Callable[[Any], Any], *, drop: int = 0) -> Column[Any]:
    """A whole id (a UUID, a workflow id): whole where the table fits, else cut in its
    middle to ``ID_NARROW`` cells, both ends kept."""

    def text(row: Any) -> str:
        value = get(row)
        return "" if value is None else str(value)

    return Column(name, about, text, middle=True, narrow=ID_NARROW, drop=drop)


class MiddleCut(Text):
    """A one-line text that a narrower column cuts in its middle, keeping both ends
    ("appro…oved"), where an ellipsis at the end would show ``approval.requested`` and
    ``approval.approved`` alike."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        width = options.max_width
        if self.cell_len <= width:
            yield from super().__rich_console__(console, options)
            return
        cut = Text(fmt.middle(self.plain, width), style=self.style, **CELL_TEXT)
        cut.overflow = "crop"  # a wide character may still overhang: never wrap
        yield from cut.__rich_console__(console, options)


def marked(cell: Any) -> Any:
    """A marked row's first cell: ``●`` before it, cut as the cell was."""
    if isinstance(cell, MiddleCut):
        return MiddleCut(f"● {cell.plain}", **CELL_TEXT)
    return f"● {cell}"


def cells(columns: Sequence[Column[R]], row: R, now: datetime) -> list[Any]:
    """A row's cells, one per declared column."""
    return [c.cell(row, now) for c in columns]


def glossary(title: str, columns: Sequence[Column[Any]]) -> str:
    """``title: name: about; name: about (short when narrow).``: one table's lines of the
    help."""
    return f"{title}: " + "; ".join(said(c) for c in columns) + "."


def said(column: Column[Any]) -> str:
    """A column in the help: ``available: its jobs ready (avail when narrow)``."""
    narrow = f" ({column.short} when narrow)" if column.short else ""
    return f"{column.name}: {column.about}{narrow}"


FLEX_MIN = 8
"""The narrowest a flexible column gets (its header and a few characters)."""
FLEX_WANT = 24
"""The width a flexible column is counted at when a table decides which columns it shows
(``Table.fitting``): a queue's or a kind's name that long is shown whole before a
droppable column is."""


def sort_key(value: Any) -> tuple[int, float, str]:
    """A cell's place in a sorted column: numbers (``1,234`` too) by value, before text,
    text case-insensitively."""
    if isinstance(value, bool | int | float):
        return (0, float(value), "")
    plain = value.plain if isinstance(value, Text) else str(value)
    try:
        return (0, float(plain.replace(",", "").strip()), plain)
    except ValueError:
        return (1, 0.0, plain.lower())


@dataclass(frozen=True)
class Shown:
    """The declared columns a table shows (by index), and whether in their narrow form
    (short headers, ids cut in their middle)."""

    columns: tuple[int, ...] = ()
    narrow: bool = False


def cell_width(value: Any) -> int:
    """The cells a table cell's text takes, whole."""
    return value.cell_len if isinstance(value, Text) else cell_len(str(value))


class Table(DataTable[Any]):
    """A DataTable of declared columns (``Column``) that fits the terminal: its flexible
    columns share the width the fixed ones leave; where even so the columns do not fit,
    ``fitting`` takes their narrow form and hides the droppable ones, so that the key
    column and the counts stay on the screen. Its rows (``fill``) can be sorted by any
    column shown (``next_sort``)."""

    sort_column: str | None = None
    """The key of the column the rows are sorted by; None: in the order read."""
    sort_reverse = False

    def __init__(self, *, declared: Sequence[Column[Any]] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.declared = tuple(declared)
        self.flexible = frozenset(c.name for c in self.declared if c.flex)
        self.shown = Shown()
        self.rows_read: list[tuple[str, list[Any]]] = []
        """The rows last filled: a cell for every declared column."""

    def fitting(self, width: int) -> Shown:
        """The columns shown at ``width``: every one in full where they fit; else in
        their narrow form, less the droppable ones (highest ``drop``, then rightmost,
        first) until the rest fit or none is left to drop. A flexible column counts as
        its widest cell up to ``FLEX_WANT``."""
        every = tuple(range(len(self.declared)))
        if not any(c.short or c.narrow or c.drop for c in self.declared):
            return Shown(every, False)  # one form: nothing to decide
        pad = 2 * self.cell_padding
        widest = [
            max((cell_width(cells[i]) for _, cells in self.rows_read), default=0)
            for i in range(len(self.declared))
        ]

        def need(shown: Sequence[int], narrow: bool) -> int:
            total = 0
            for i in shown:
                c, cell = self.declared[i], widest[i]
                if c.flex:
                    cell = min(cell, FLEX_WANT)
                elif narrow and c.narrow:
                    cell = min(cell, c.narrow)
                total += pad + max(cell_len(self.header(c, narrow)), cell)
            return total

        if need(every, False) <= width:
            return Shown(every, False)
        shown = list(every)
        droppable = sorted((i for i in shown if self.declared[i].drop), reverse=True)
        droppable.sort(key=lambda i: -self.declared[i].drop)
        while droppable and need(shown, True) > width:
            shown.remove(droppable.pop(0))
        return Shown(tuple(shown), True)

    def header(self, column: Column[Any], narrow: bool) -> str:
        name = column.short if narrow and column.short else column.name
        if column.name != self.sort_column:
            return name
        return name + (" ▼" if self.sort_reverse else " ▲")

    def fill(self, rows: list[tuple[str, list[Any]]]) -> None:
        """Show ``rows`` (key, a cell for every declared column) in the columns that fit,
        sorted as chosen, the cursor kept on the same key where it survives."""
        self.rows_read = rows
        self.lay_out(self.fitting(self.width_for_columns()))

    def lay_out(self, shown: Shown) -> None:
        keep, at = selected_key(self), self.cursor_row
        if shown != self.shown or len(self.columns) != len(shown.columns):
            self.shown = shown
            self.clear(columns=True)
            for i in shown.columns:
                c = self.declared[i]
                self.add_column(Text(self.header(c, shown.narrow)), key=c.name)
        else:
            self.clear()
        rows = self.rows_read
        if self.sort_column is not None:
            by = [c.name for c in self.declared].index(self.sort_column)
            rows = sorted(rows, key=lambda r: sort_key(r[1][by]), reverse=self.sort_reverse)
        for key, cells in rows:
            self.add_row(*(cells[i] for i in shown.columns), key=key)
        self.measure()
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep), animate=False)
        elif rows:
            self.move_cursor(row=min(at, len(rows) - 1), animate=False)

    def next_sort(self, reverse: bool) -> None:
        """``reverse``: the other way (by the first column when unsorted); else by the
        next column shown, and after the last, in the order read again. The header's
        arrow says which; the pane draws its rows again."""
        keys = [str(k.value) for k in self.columns]
        if reverse:
            self.sort_reverse = not self.sort_reverse if self.sort_column else True
            self.sort_column = self.sort_column or (keys[0] if keys else None)
        else:
            at = keys.index(self.sort_column) + 1 if self.sort_column in keys else 0
            self.sort_column = keys[at] if at < len(keys) else None
            self.sort_reverse = False
        for i in self.shown.columns:
            c = self.declared[i]
            self.columns[ColumnKey(c.name)].label = Text(self.header(c, self.shown.narrow))

    def sorting(self) -> str:
        """The sort in words, for a pane's bar ("" when the rows are as read)."""
        if self.sort_column is None:
            return ""
        return f"sorted by {self.sort_column} {'▼' if self.sort_reverse else '▲'}"

    def clear(self, columns: bool = False) -> Table:
        super().clear(columns)
        # Measured again from the rows added next (DataTable keeps the widest cell ever
        # shown: one long kind would keep its column wide for good).
        for column in self.columns.values():
            column.content_width = cell_len(column.label.plain)
        return self

    def _update_dimensions(self, new_rows: Any) -> None:
        super()._update_dimensions(new_rows)
        self._fit()
        # Textual keys its rendered cells by an update count that new column widths do
        # not bump: a header painted between add_row and this (idle) update kept the
        # header's narrow widths above the wider rows until the next refill.
        self._update_count += 1

    def _on_resize(self, event: events.Resize) -> None:
        super()._on_resize(event)
        shown = self.fitting(self.width_for_columns())
        if shown != self.shown:
            self.lay_out(shown)
        elif self._fit():
            self._clear_caches()
            self.refresh()

    def measure(self) -> None:
        """Measure the rows just added now, as Textual does when the app is next idle: a
        frame painted in between would draw them at their header's widths."""
        if self._require_update_dimensions:
            self._require_update_dimensions = False
            new_rows = self._new_rows.copy()
            self._new_rows.clear()
            self._update_dimensions(new_rows)

    def width_for_columns(self) -> int:
        """The width the columns share. A table not laid out yet (on a tab shown for the
        first time, or displayed again) is given its first page before its size: it
        takes the width its nearest laid-out container has, less the borders and padding
        in between, so that the first frame is drawn as the next ones (not every flexible
        column at its narrowest, then again when its size arrives)."""
        tall = self.row_count + int(self.show_header)
        bar = self.styles.scrollbar_size_vertical
        region = self.scrollable_content_region
        if region.width:
            # The scrollbar the rows will need (or no longer need) once they are laid out.
            shown = bar if self.show_vertical_scrollbar else 0
            return region.width + shown - (bar if tall > region.height else 0)
        gutter = self.styles.gutter.width
        for node in self.ancestors_with_self[1:]:
            if not isinstance(node, Widget):
                break
            region = node.scrollable_content_region
            if region.width:
                # The rows that will not fit its height leave room for a scrollbar.
                return max(0, region.width - gutter - (bar if tall > region.height else 0))
            gutter += node.styles.gutter.width
        return max(0, self.app.size.width - gutter)

    def _fit(self) -> bool:
        """Cut the ids of a narrow layout to their ``narrow`` width, and give each
        flexible column its share of the width left (water-filling: one narrower than
        its share keeps its width and leaves the rest to the others). Returns whether a
        width changed."""
        changed = False
        if self.shown.narrow:
            for i in self.shown.columns:
                c = self.declared[i]
                column = self.columns.get(ColumnKey(c.name))
                if c.flex or not c.narrow or column is None:
                    continue
                width = min(column.content_width, max(c.narrow, cell_len(column.label.plain)))
                if column.auto_width or column.width != width:
                    column.auto_width, column.width, changed = False, width, True
        flexible = [c for c in self.columns.values() if str(c.key.value) in self.flexible]
        pad = 2 * self.cell_padding
        fixed = sum(c.get_render_width(self) for c in self.columns.values() if c not in flexible)
        left = self.width_for_columns() - fixed - pad * len(flexible)
        pending = sorted(flexible, key=lambda c: c.content_width)
        while pending:
            share = max(FLEX_MIN, left // len(pending))
            column = pending.pop(0)
            width = min(column.content_width, share)
            left -= width
            if column.auto_width or column.width != width:
                column.auto_width, column.width, changed = False, width, True
        if changed:
            width = sum(c.get_render_width(self) for c in self.columns.values())
            self.virtual_size = Size(width + self._row_label_column_width, self.virtual_size.height)
        return changed


def table(widget_id: str, *columns: str | Column[Any]) -> Table:
    """A row-cursor table; ``columns`` are declarations (``Column``, ``flex``) or plain
    headers (fixed width, always shown)."""
    declared = [Column(c, "") if isinstance(c, str) else c for c in columns]
    t = Table(id=widget_id, cursor_type="row", zebra_stripes=True, declared=declared)
    t.shown = Shown(tuple(range(len(declared))))
    for c in declared:
        t.add_column(Text(c.name), key=c.name)
    return t


def selected_key(t: DataTable[Any]) -> str | None:
    if t.row_count == 0:
        return None
    try:
        key = t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value
    except Exception:
        return None
    return key


CELL_MAX = 1000
"""Characters of a text kept for a cell: more than the widest terminal shows (a 5 MB
error is not measured whole on every refresh)."""
CELL_TEXT: dict[str, Any] = {"end": "", "no_wrap": True, "overflow": "ellipsis"}
"""One line, cut with an ellipsis where the column is narrower."""


def table_cell(value: Any) -> Any:
    """A DataTable cell: text as plain ``Text`` with control characters and escape
    sequences escaped (DataTable would read a ``str`` as markup, so a ``[`` in a kind or
    an error could restyle the table); None, a boolean, list or mapping as
    ``fmt.any_text`` writes it; other renderables as they are."""
    if value is None or isinstance(value, bool | list | tuple | dict):
        value = fmt.any_text(value)
    if isinstance(value, str):
        return Text(" ".join(safe(value[:CELL_MAX]).split()), **CELL_TEXT)
    if isinstance(value, Text) and safe(value.plain) != value.plain:
        return Text(" ".join(safe(value.plain).split()), style=value.style, **CELL_TEXT)
    if isinstance(value, Text):
        value.overflow = "ellipsis"
    return value


def refill(t: DataTable[Any], rows: list[tuple[str, list[Any]]]) -> None:
    """Replace a table's rows, keeping the cursor on the same key when it survives."""
    assert isinstance(t, Table), "every dashboard table is made by ``table``"
    t.fill([(key, list(map(table_cell, cells))) for key, cells in rows])
