"""The dashboard's error groups (``g``): failures grouped by error fingerprint
(``qctl.core.triage``), the same read ``qctl jobs errors`` prints. azync shows them in
place of its dead jobs; a system whose jobs tab is one list opens ``ErrorGroupsScreen``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static

from qctl.core.triage import ErrorGroup, ErrorGroups
from qctl.tui.base import Loader, TopScreen, footer
from qctl.tui.widgets import Column, cells, flex, refill, table


def error_group_columns(failures: str, label: str) -> tuple[Column[ErrorGroup], ...]:
    """The groups' table: ``failures`` names what is counted ("dead jobs"), ``label``
    what the groups are split by ("kinds")."""
    return (
        Column("count", f"{failures} with this error", lambda g: g.count),
        flex(
            "error",
            "the error they share, values folded (<n>, <str>, <uuid>, <hex>, <id>)",
            lambda g: g.fingerprint,
        ),
        flex(
            label,
            f"their {label}, with counts",
            lambda g: ", ".join(f"{k} {n}" for k, n in g.ranked_labels()),
        ),
        Column(
            "last failed",
            "when the group's newest failure happened",
            lambda g: g.last_seen,
            time="ago",
        ),
    )


def groups_summary(groups: ErrorGroups, noun: str = "jobs") -> str:
    """As the command line says it: "2 errors over 40 jobs", or over the newest ones read
    when the scan stopped short."""
    n = len(groups.groups)
    read = f"{groups.scanned}" if groups.complete else f"the newest {groups.scanned}"
    return f"{n} error{'' if n == 1 else 's'} over {read} {noun}"


class ErrorGroupsView(Loader[ErrorGroups]):
    """The groups of one read, refreshed like a tab."""

    def __init__(self, read: Callable[[Any], ErrorGroups], columns: tuple[Column[Any], ...]):
        super().__init__()
        self.read, self.columns = read, columns
        self.groups: ErrorGroups | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="error-groups-summary", classes="bar")
            yield table("error-groups", *self.columns)

    def fetch(self, store: Any) -> ErrorGroups:
        return self.read(store)

    def show(self, data: ErrorGroups) -> None:
        self.groups = data
        now = self.top.clock()
        refill(
            self.query_one("#error-groups", DataTable),
            [(str(i), cells(self.columns, g, now)) for i, g in enumerate(data.groups)],
        )
        self.query_one("#error-groups-summary", Static).update(
            Text.assemble(("grouped by error ", "dim"), groups_summary(data))
        )


class ErrorGroupsScreen(TopScreen):
    """``g`` on a jobs tab: its failed jobs grouped by error; enter opens the group's
    newest job (``open_sample``), esc goes back."""

    BINDINGS = [Binding("escape", "back", "Back")]

    def __init__(
        self,
        title: str,
        read: Callable[[Any], ErrorGroups],
        columns: tuple[Column[Any], ...],
        open_sample: Callable[[Any], Screen[None]],
    ) -> None:
        super().__init__()
        self.title_text, self.open_sample = title, open_sample
        self.view = ErrorGroupsView(read, columns)

    def compose(self) -> ComposeResult:
        yield from self.compose_status()
        self.view.border_title = self.title_text
        yield self.view
        yield footer()

    def action_back(self) -> None:
        self.app.pop_screen()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.view.groups is not None:
            group = self.view.groups.groups[int(str(event.row_key.value))]
            self.app.push_screen(self.open_sample(group.newest))
