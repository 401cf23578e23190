"""DBOS queues (depths, oldest enqueued, limits) and schedules (with pause, resume and
trigger, as ``qctl schedules`` runs them)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable

from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.tui import cells
from qctl.tui import fmt
from qctl.tui.panes import Redrawn
from qctl.tui.widgets import refill, selected_key, table

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database


class QueuesPane(Redrawn[list[reads.QueueStats]]):
    filter_hint = "filter queue name (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dbos-queues",
            "queue", "enqueued", "pending", "delayed", "oldest enqueued", "concurrency",
            "worker concurrency", "rate limit",
        )  # fmt: skip

    def fetch(self, db: Database) -> list[reads.QueueStats]:
        return reads.queue_stats(db)

    def render_data(self) -> None:
        now = self.top.clock()
        needle = self.filter_text.lower()
        refill(
            self.query_one("#dbos-queues", DataTable),
            [
                (
                    q["queue_name"],
                    [
                        q["queue_name"],
                        q["enqueued"],
                        q["pending"],
                        q["delayed"],
                        fmt.ago(cells.instant(q["oldest_enqueued_at"]), now),
                        "" if q["concurrency"] is None else q["concurrency"],
                        "" if q["worker_concurrency"] is None else q["worker_concurrency"],
                        ""
                        if q["rate_limit_max"] is None
                        else f"{q['rate_limit_max']} per {q['rate_limit_period_sec']:g}s",
                    ],
                )
                for q in self.data or []
                if needle in q["queue_name"].lower()
            ],
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        from qctl.systems.dbos.tui.workflows import WorkflowsPane

        event.stop()
        self.screen.action_show_tab("workflows")  # type: ignore[attr-defined]
        self.screen.query_one(WorkflowsPane).open_with(f"queue={event.row_key.value}")


def fired(text: str | None, now: datetime) -> str:
    """``last_fired_at`` (DBOS writes an ISO 8601 text) as the dashboard's times."""
    if not text:
        return ""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return fmt.one_line(text, 40)
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    return f"{fmt.when(at, now)} ({fmt.ago(at, now)})"


class SchedulesPane(Redrawn[list[reads.Schedule]]):
    BINDINGS = [
        Binding("P", "schedule_pause", "Pause"),
        Binding("U", "schedule_resume", "Resume"),
        Binding("N", "schedule_trigger", "Trigger now"),
    ]
    filter_hint = "filter schedule or workflow name (substring)"

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table(
            "dbos-schedules", "schedule", "workflow", "cron", "timezone", "status", "last fired"
        )

    def fetch(self, db: Database) -> list[reads.Schedule]:
        return reads.list_schedules(db)

    def render_data(self) -> None:
        now = self.top.clock()
        needle = self.filter_text.lower()
        refill(
            self.query_one("#dbos-schedules", DataTable),
            [
                (
                    s["schedule_name"],
                    [
                        s["schedule_name"],
                        s["workflow_name"],
                        s["schedule"],
                        s["cron_timezone"] or "UTC",
                        s["status"],
                        fired(s["last_fired_at"], now),
                    ],
                )
                for s in self.data or []
                if needle in f"{s['schedule_name']} {s['workflow_name']}".lower()
            ],
        )

    def _act(
        self, verb: str, call: Callable[[Database, str, bool], actions.ScheduleOutcome]
    ) -> None:
        name = selected_key(self.query_one("#dbos-schedules", DataTable))
        if name is None:
            self.top.notify("no schedule selected", severity="warning")
            return
        self.top.act(
            lambda p: f"{verb} {p.status} DBOS schedule {name}?",
            lambda db, dry_run: call(db, name, dry_run),
            lambda p: (
                f"{verb}: {name}" + (f" ({', '.join(p.workflow_ids)})" if p.workflow_ids else "")
            ),
        )

    def action_schedule_pause(self) -> None:
        self._act("pause", actions.pause_schedule)

    def action_schedule_resume(self) -> None:
        self._act("resume", actions.resume_schedule)

    def action_schedule_trigger(self) -> None:
        self._act("trigger", actions.trigger_schedule)
