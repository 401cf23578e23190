"""What the panes and drill-in screens share: filter bar, focus, back navigation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static

from qctl.core.parse import parse_pair
from qctl.core.verbs import Selection, Verb
from qctl.tui.base import Guarded, Loader, TopScreen, footer
from qctl.tui.widgets import (
    ALL_STATES,
    Column,
    StatePicker,
    Table,
    cells,
    marked,
    refill,
    selected_key,
    table,
)
from qctl_kit.errors import InvalidInput

T = TypeVar("T")


class Pane(Guarded, Loader[T]):
    """A tab's content: a loader with a ``/`` filter bar and tables."""

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        # Off the footer (the help says them), as the Jobs footer must fit 120 columns.
        Binding("o", "sort_next", "Sort", show=False),
        Binding("O", "sort_reverse", "Reverse sort", show=False),
    ]
    filter_text = ""
    filter_hint = "filter (enter to apply, esc to cancel)"
    tables: ClassVar[tuple[tuple[str, Sequence[Column[Any]]], ...]] = ()
    """For the help: each table the tab shows (its drill-in screens' too) as (title,
    columns), beside ``ListPane.columns``."""

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
        """Esc in the filter bar leaves it as it was; on the list, it lets an applied
        filter go (k9s's esc)."""
        if event.key != "escape":
            return
        focused = self.screen.focused
        if isinstance(focused, Input) and "filter" in focused.classes:
            event.stop()
            focused.display = False
            self.focus_first()
        elif self.filter_text and not isinstance(focused, Input):
            event.stop()
            self.filter_text = ""
            self.filter_changed()

    def filter_changed(self) -> None:
        self.reload()

    def sorted_table(self) -> Table | None:
        """The table ``o``/``O`` sort: the focused one, else the pane's first."""
        focused = self.screen.focused
        if isinstance(focused, Table) and focused in self.query(Table):
            return focused
        tables = list(self.query(Table))
        return tables[0] if tables else None

    def action_sort_next(self) -> None:
        """``o``: sort the rows shown by the next column (k9s's column sort)."""
        self._sort(False)

    def action_sort_reverse(self) -> None:
        """``O``: the other way."""
        self._sort(True)

    def _sort(self, reverse: bool) -> None:
        t = self.sorted_table()
        if t is None:
            return
        t.next_sort(reverse)
        self.redraw()
        self.top.notify(t.sorting() or "in the order read")

    def redraw(self) -> None:
        """Draw the rows again (a new sort): read again, where a pane keeps no rows."""
        self.reload()


class StatePicked:
    """A list of the rows in one of its system's states, or in all (``t``: the state
    picker, ``:jobs dead``): ``states`` are the states the system's package declares,
    ``state`` the one shown (None: all), made from the picked name by ``state_type``."""

    STATE_BINDING = Binding("t", "pick_state", "State")
    states: ClassVar[Sequence[str]] = ()
    state_type: ClassVar[type[Any]] = str
    state_word: ClassVar[str] = "state"
    """What the system calls it (DBOS: status)."""
    state: Any = None
    app: Any

    def action_pick_state(self) -> None:
        def picked(choice: str | None) -> None:
            if choice is not None:
                self.pick_state(None if choice == ALL_STATES else choice)

        shown = None if self.state is None else str(self.state)
        title = f"show the rows in which {self.state_word}"
        self.app.push_screen(StatePicker(title, self.states, shown), picked)

    def pick_state(self, state: str | None) -> None:
        """Show the rows in ``state`` (one of ``states``; None: every state)."""
        self.state = None if state is None else type(self).state_type(state)
        self.state_changed()

    def picked(self) -> list[str] | None:
        """The states to read (None: every state)."""
        return None if self.state is None else [str(self.state)]

    def state_changed(self) -> None:
        """Read again, from the first page where the list has pages."""
        if isinstance(self, MarkedPages):
            self.restart()
        elif isinstance(self, Loader):
            self.reload()


class Redrawn(Pane[T]):
    """A pane that keeps its last load (``data``) and draws it again when the ``/``
    filter changes, without reading again."""

    data: T | None = None

    def show(self, data: T) -> None:
        self.data = data
        self.render_data()

    def filter_changed(self) -> None:
        self.render_data()

    def redraw(self) -> None:
        self.render_data()

    def render_data(self) -> None:
        raise NotImplementedError


def matches(needle: str, *values: str) -> bool:
    """Every word of a ``/`` filter is part of one of ``values`` (case-insensitive)."""
    return all(any(w in v.lower() for v in values) for w in needle.lower().split())


class ContainsFiltered:
    """A job list whose ``/`` filter also takes ``COLUMN.KEY=VALUE`` words (a string;
    ``COLUMN.KEY:=JSON`` any JSON value), COLUMN one of ``contains_columns`` (River's
    args and metadata): the jobs read are those whose column contains every such key,
    as the command line's ``--args`` selects them; the other words are matched in the
    rows read, as on every list."""

    contains_columns: ClassVar[tuple[str, ...]] = ()
    contains: Mapping[str, dict[str, Any]] = {}  # replaced, never changed
    """The objects the last read asked for, per column."""
    words_left = ""
    """The filter's other words."""
    filter_text: str
    app: Any
    data: Sequence[Any] | None
    reload: Callable[[], None]
    render_data: Callable[[], None]
    words: Callable[[Any], Sequence[str]]

    def filter_changed(self) -> None:
        objects: dict[str, dict[str, Any]] = {}
        left = []
        try:
            for word in self.filter_text.split():
                column, dot, pair = word.partition(".")
                if dot and column in self.contains_columns and "=" in pair:
                    key, value = parse_pair(pair, word)
                    objects.setdefault(column, {})[key] = value
                else:
                    left.append(word)
        except InvalidInput as exc:
            self.app.notify(str(exc), severity="error")
            return
        self.words_left = " ".join(left)
        if objects != self.contains:
            self.contains = objects
            self.reload()
        else:
            self.render_data()

    def shown(self) -> list[Any]:
        return [r for r in self.data or [] if matches(self.words_left, *self.words(r))]


class ListPane(Redrawn[Sequence[Any]]):
    """A tab that is one table of rows, declared: ``columns`` give its header, its cells
    and the help's lines; ``fetch`` reads the rows; ``row_key`` keys them (the cursor
    stays on a key across refreshes); ``words`` are what the ``/`` filter matches.

    Rows can be marked (``MARK_BINDINGS``): space marks the row under the cursor, ``*``
    every row the filter shows (again: clears); ``act_on`` runs a declared verb on the
    marks, or on the row under the cursor when none are marked."""

    table_id: ClassVar[str]
    columns: ClassVar[tuple[Column[Any], ...]]
    marked: dict[str, None]
    """Keys of the marked rows, in the order marked."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marked = {}

    def row_key(self, row: Any) -> str:
        raise NotImplementedError

    def words(self, row: Any) -> Sequence[str]:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        if isinstance(self, StatePicked):
            yield Static(classes="bar state-bar")
        yield from self.compose_filter()
        yield table(self.table_id, *self.columns)

    def shown(self) -> list[Any]:
        return [r for r in self.data or [] if matches(self.filter_text, *self.words(r))]

    def render_data(self) -> None:
        now = self.top.clock()
        rows = []
        for r in self.shown():
            key, row = self.row_key(r), cells(self.columns, r, now)
            if key in self.marked:
                row[0] = marked(row[0])
            rows.append((key, row))
        refill(self.query_one(f"#{self.table_id}", DataTable), rows)
        if isinstance(self, StatePicked):
            bar = Text.assemble((f"{self.state_word} ", "dim"), (str(self.state or "all"), "bold"))
            sorting = self.query_one(f"#{self.table_id}", Table).sorting()
            if sorting:
                bar.append(f"  {sorting}", "dim")
            self.query_one(".state-bar", Static).update(bar)

    def action_toggle_mark(self) -> None:
        """Space: mark or unmark the row under the cursor, then move to the next one."""
        t = self.query_one(f"#{self.table_id}", DataTable)
        key = selected_key(t)
        if key is None:
            return
        if self.marked.pop(key, "absent") == "absent":
            self.marked[key] = None
        at = t.cursor_row
        self.render_data()
        t.move_cursor(row=min(at + 1, t.row_count - 1))

    def action_mark_shown(self) -> None:
        """``*``: mark every row the filter shows, or clear the marks."""
        self.marked = {} if self.marked else {self.row_key(r): None for r in self.shown()}
        self.render_data()

    def act_on(self, verb: Verb[Any], what: str) -> None:
        """``verb`` on the marked rows, or on the row under the cursor (``what`` names it
        when there is none); the marks are cleared once it ran."""
        if self.marked:
            selection = Selection.of_ids(list(self.marked), by="marks")
        else:
            key = self.selected(what)
            if key is None:
                return
            selection = Selection.of_ids([key])
        self.top.act_verb(verb, selection, self._unmark)

    def _unmark(self) -> None:
        self.marked = {}
        self.render_data()

    def open_with(self, text: str) -> None:
        """Show the rows ``text`` (``/`` words) matches, once the tab has read."""
        self.filter_text = text
        self.reload()

    def selected(self, what: str) -> str | None:
        """The key of the row under the cursor; None (and a notice naming ``what``)
        on an empty table."""
        key = selected_key(self.query_one(f"#{self.table_id}", DataTable))
        if key is None:
            self.top.notify(f"no {what} selected", severity="warning")
        return key


MARK_BINDINGS = [
    Binding("space", "toggle_mark", "Mark", show=False),
    Binding("asterisk", "mark_shown", "Mark all shown", show=False),
]
"""``ListPane``'s marking keys, for its subclasses' ``BINDINGS``."""

PAGE_BINDINGS = [
    Binding("n", "next_page", "Page", key_display="n/b"),
    Binding("b", "prev_page", "Previous page", show=False),
    Binding("space", "toggle_mark", "Mark", show=False),
    Binding("asterisk", "mark_matching", "Mark all matching", show=False),
]
"""``MarkedPages``' keys, for its subclasses' ``BINDINGS`` (where their footer wants them)."""


class MarkedPages(Pane[T]):
    """A pane of keyset pages whose rows can be marked across pages: space marks the row
    under the cursor and moves on, ``*`` marks every row the filter matches (again:
    clears); the verbs then act on the marks. ``page`` is the page on screen (its
    ``next_cursor`` is where the next one starts), ``cursors`` where each page shown so
    far starts. Subclasses bind its keys (``PAGE_BINDINGS``)."""

    table_id = ""
    page: Any = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cursors: list[Any] = [None]
        self.marked: dict[Any, Any] = {}
        """Rows marked with space, by ``row_key``."""
        self.all_marked = False
        """``*``: every row matching the filter is marked (the verbs act on the filter)."""

    def page_rows(self) -> list[Any]:
        raise NotImplementedError

    def row_key(self, row: Any) -> Any:
        raise NotImplementedError

    def is_marked(self, row: Any) -> bool:
        return self.all_marked or self.row_key(row) in self.marked

    def clear_marks(self) -> None:
        self.marked.clear()
        self.all_marked = False

    def restart(self) -> None:
        """From the first page, nothing marked."""
        self.cursors = [None]
        self.clear_marks()
        self.reload()

    def redraw(self) -> None:
        if self.page is not None:
            self.show(self.page)

    def current_row(self) -> Any:
        """The row under the cursor, by its key (the table may be sorted)."""
        key = selected_key(self.query_one(f"#{self.table_id}", DataTable))
        rows = self.page_rows() if self.page is not None else []
        return next((r for r in rows if str(self.row_key(r)) == key), None)

    def action_toggle_mark(self) -> None:
        """Space: mark or unmark the row, then move to the next one."""
        row = self.current_row()
        if row is None:
            return
        if self.all_marked:  # from "everything matching" to a hand-picked set
            self.all_marked = False
            self.marked = {self.row_key(r): r for r in self.page_rows()}
        if self.marked.pop(self.row_key(row), None) is None:
            self.marked[self.row_key(row)] = row
        t = self.query_one(f"#{self.table_id}", DataTable)
        at = t.cursor_row
        self.show(self.page)
        t.move_cursor(row=min(at + 1, t.row_count - 1))

    def action_mark_matching(self) -> None:
        """``*``: mark every row the filter matches (on every page), or clear the marks."""
        self.all_marked = not self.all_marked
        self.marked.clear()
        if self.page is not None:
            self.show(self.page)

    def action_next_page(self) -> None:
        if self.page is not None and self.page.next_cursor is not None:
            self.cursors.append(self.page.next_cursor)
            self.reload()

    def action_prev_page(self) -> None:
        if len(self.cursors) > 1:
            self.cursors.pop()
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
