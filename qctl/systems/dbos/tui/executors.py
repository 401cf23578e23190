"""DBOS executors (``qctl executors``): their PENDING workflows and latest activity,
and the recovery of a dead one's PENDING workflows (``executors.recover``, as the
command line runs it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable

from qctl.systems.dbos import executors
from qctl.systems.dbos.tui import cells
from qctl.tui import fmt
from qctl.tui.panes import Redrawn
from qctl.tui.widgets import refill, selected_key, table

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database

WINDOW_MS = 3_600_000
"""How far back started and finished workflows are counted (as ``--window 1h``)."""


class ExecutorsPane(Redrawn[list[dict[str, Any]]]):
    BINDINGS = [Binding("X", "executor_recover", "Recover")]
    filter_hint = "filter executor id (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dbos-executors",
            "executor", "pending", "started", "completed", "last active", "versions",
        )  # fmt: skip

    def fetch(self, db: Database) -> list[dict[str, Any]]:
        return executors.list_executors(db, WINDOW_MS)

    def render_data(self) -> None:
        now = self.top.clock()
        needle = self.filter_text.lower()
        refill(
            self.query_one("#dbos-executors", DataTable),
            [
                (
                    e["executor_id"],
                    [
                        cells.value(e["executor_id"]),
                        e["pending"],
                        e["started"],
                        e["completed"],
                        fmt.ago(cells.instant(e["last_active_at"]), now),
                        cells.value(", ".join(e["app_versions"])),
                    ],
                )
                for e in self.data or []
                if needle in e["executor_id"].lower()
            ],
        )

    def action_executor_recover(self) -> None:
        executor_id = selected_key(self.query_one("#dbos-executors", DataTable))
        if executor_id is None:
            self.top.notify("no executor selected", severity="warning")
            return
        self.top.act(
            lambda p: (
                f"re-enqueue {p.count} PENDING workflow(s) of DBOS executor"
                f" {cells.value(executor_id)} (only if it is dead)?"
            ),
            lambda db, dry_run: executors.recover(db, [executor_id], dry_run=dry_run),
            lambda p: f"recovered: {p.count} workflow(s) of {cells.value(executor_id)}",
        )
