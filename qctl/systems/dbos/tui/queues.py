"""DBOS queues (depths, oldest enqueued, limits) and schedules (with pause, resume and
trigger, as ``qctl schedules`` runs them)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding
from textual.widgets import DataTable

from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.tui import cells
from qctl.tui import fmt
from qctl.tui.panes import ListPane
from qctl.tui.widgets import Column, flex

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database


class QueuesPane(ListPane):
    filter_hint = "filter queue name (substring)"
    table_id = "dbos-queues"
    columns: ClassVar[tuple[Column[reads.QueueStats], ...]] = (
        flex("queue", "a queue's name", lambda q: q["queue_name"]),
        Column("enqueued", "workflows waiting on it", lambda q: q["enqueued"], short="enq"),
        Column("pending", "its workflows running (dequeued)", lambda q: q["pending"], short="pend"),
        Column("delayed", "enqueued to start later", lambda q: q["delayed"], short="delay"),
        Column(
            "oldest enqueued",
            "the age of its oldest enqueued workflow",
            lambda q: q["oldest_enqueued_at"],
            time=cells.ago,
            short="oldest",
        ),
        Column(
            "concurrency",
            "at most this many running at once over every executor",
            lambda q: q["concurrency"],
            short="conc",
            drop=2,
        ),
        Column(
            "worker concurrency",
            "per executor",
            lambda q: q["worker_concurrency"],
            short="per exec",
            drop=3,
        ),
        Column(
            "rate limit",
            "at most this many started per period",
            lambda q: (
                ""
                if q["rate_limit_max"] is None
                else f"{q['rate_limit_max']} per {q['rate_limit_period_sec']:g}s"
            ),
            drop=1,
        ),
    )

    def fetch(self, db: Database) -> list[reads.QueueStats]:
        return reads.queue_stats(db)

    def row_key(self, row: reads.QueueStats) -> str:
        return row["queue_name"]

    def words(self, row: reads.QueueStats) -> tuple[str, ...]:
        return (row["queue_name"],)

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


class SchedulesPane(ListPane):
    BINDINGS = [
        Binding("P", "schedule_pause", "Pause"),
        Binding("U", "schedule_resume", "Resume"),
        Binding("N", "schedule_trigger", "Trigger now"),
    ]
    filter_hint = "filter schedule or workflow name (substring)"
    table_id = "dbos-schedules"
    columns: ClassVar[tuple[Column[reads.Schedule], ...]] = (
        flex("schedule", "its name", lambda s: s["schedule_name"]),
        flex("workflow", "the workflow it enqueues", lambda s: s["workflow_name"]),
        Column("cron", "when it fires (seconds first when six fields)", lambda s: s["schedule"]),
        Column("timezone", "the cron's timezone", lambda s: s["cron_timezone"] or "UTC"),
        Column("status", "ACTIVE, or PAUSED (it does not fire)", lambda s: s["status"]),
        Column(
            "last fired",
            "when it last enqueued its workflow",
            lambda s: s["last_fired_at"],
            time=fired,
        ),
    )

    def fetch(self, db: Database) -> list[reads.Schedule]:
        return reads.list_schedules(db)

    def row_key(self, row: reads.Schedule) -> str:
        return row["schedule_name"]

    def words(self, row: reads.Schedule) -> tuple[str, ...]:
        return (row["schedule_name"], row["workflow_name"])

    def _act(
        self, verb: str, call: Callable[[Database, str, bool], actions.ScheduleOutcome]
    ) -> None:
        name = self.selected("schedule")
        if name is None:
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
