"""DBOS executors (``qctl executors``): their PENDING workflows and latest activity,
and the recovery of a dead one's PENDING workflows (``executors.recover``, as the
command line runs it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding

from qctl.systems.dbos import executors
from qctl.systems.dbos.tui import cells
from qctl.tui.panes import ListPane
from qctl.tui.widgets import Column, flex

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database

WINDOW_MS = 3_600_000
"""How far back started and finished workflows are counted (as ``--window 1h``)."""


class ExecutorsPane(ListPane):
    BINDINGS = [Binding("X", "executor_recover", "Recover")]
    filter_hint = "filter executor id (substring)"
    table_id = "dbos-executors"
    columns: ClassVar[tuple[Column[executors.Executor], ...]] = (
        flex(
            "executor",
            "the executor_id its workflows carry (DBOS keeps no list of executors, nor a"
            " heartbeat)",
            lambda e: cells.value(e["executor_id"]),
        ),
        Column("pending", "its PENDING workflows", lambda e: e["pending"]),
        Column("started", "workflows it started in the last hour", lambda e: e["started"]),
        Column("completed", "workflows it finished in the last hour", lambda e: e["completed"]),
        Column(
            "last active",
            "the last time it started or finished one (idle long with pending workflows:"
            " likely dead)",
            lambda e: e["last_active_at"],
            time=cells.ago,
        ),
        flex(
            "versions",
            "the application versions of its workflows",
            lambda e: cells.value(", ".join(e["app_versions"])),
        ),
    )

    def fetch(self, db: Database) -> list[executors.Executor]:
        return executors.list_executors(db, WINDOW_MS)

    def row_key(self, row: executors.Executor) -> str:
        return str(row["executor_id"])

    def words(self, row: executors.Executor) -> tuple[str, ...]:
        return (row["executor_id"],)

    def action_executor_recover(self) -> None:
        executor_id = self.selected("executor")
        if executor_id is None:
            return
        last: dict[str, int | None] = {}  # read with the plan, shown in the question

        def recover(db: Database, dry_run: bool) -> executors.RecoveryOutcome:
            if dry_run:
                last.update(executors.last_active(db, [executor_id], WINDOW_MS))
            return executors.recover(db, [executor_id], dry_run=dry_run)

        self.top.act(
            lambda p: (
                f"re-enqueue {p.count} PENDING workflow(s) of DBOS executor"
                f" {cells.value(executor_id)} ({executors.activity(last.get(executor_id))};"
                " only if it is dead)?"
            ),
            recover,
            lambda p: f"recovered: {p.count} workflow(s) of {cells.value(executor_id)}",
        )
