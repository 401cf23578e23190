"""``qctl top`` on a DBOS system database.

DBOS sends no notification when a workflow's status changes, so the dashboard polls:
every ``interval`` seconds the visible tab reloads with the indexed reads of
``qctl.systems.dbos.reads`` (never a scan of the whole history), in a worker thread,
and the status bar says "polling". Tabs: an overview (per workflow name, the statuses
of what finished in the last hour and of what is in flight; per queue its depths; the
latest errors), the workflow browser (newest first; ``enter`` opens a workflow with its
step timeline and child workflows), queues and schedules. Actions (cancel, resume,
delete) are ``qctl.systems.dbos.actions``, behind confirmation, hidden and refused with
``--read-only``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from qctl.sanitize import sanitize
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.database import Database
from qctl.tui.widgets import ConfirmDialog, HelpScreen, refill, selected_key, table

WRITES = {"cancel", "resume", "delete"}
"""Actions that write: hidden and refused read-only."""
HELP = """\
qctl top: DBOS system database (polling)

  tabs       Overview, Workflows, Queues, Schedules: the mouse or the arrows
  enter      open the selected workflow: its steps and child workflows
  esc / q    back (from a workflow)                  r     refresh now
  q          quit (top level)                        ?     this help

Overview:  per workflow name, its statuses in the last hour and in flight;
           per queue its depths; the latest errors
Workflows: newest first

Actions on the selected workflow of the Workflows tab (confirmed; hidden with
--read-only):
  C cancel   R resume   D delete
"""
PAGE = 200


def _at(ms: Any) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(int(ms) / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def clean(text: str) -> Text:
    """Database text drawn literally: escaped by ``qctl.sanitize`` (line breaks kept),
    and a ``Text``, so never read as markup."""
    return Text(sanitize(text, multiline=True))


def _text(value: Any) -> Text:
    """A cell: decoded payloads by their text, database text made safe to draw."""
    if value is None:
        return Text("")
    text = value.text() if hasattr(value, "text") and callable(value.text) else str(value)
    return Text(sanitize(text[:120]))


class WorkflowScreen(Screen[None]):
    """One workflow: its fields, the step timeline and its child workflows."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("q", "app.pop_screen", "Back")]

    def __init__(self, db: Database, workflow_id: str) -> None:
        super().__init__()
        self.db = db
        self.workflow_id = workflow_id

    def compose(self) -> ComposeResult:
        yield Static(id="wf-head")
        yield table("wf-steps", "step", "function", "started", "ms", "output / error", "child")
        yield table("wf-children", "child workflow", "name", "status")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="detail")
    def load(self) -> None:
        wf = reads.get_workflow(self.db, self.workflow_id)
        steps = reads.list_steps(self.db, self.workflow_id)
        children = reads.related(self.db, "parent_workflow_id", self.workflow_id)
        self.app.call_from_thread(self.show, wf, steps, children)

    def show(self, wf: dict[str, Any], steps: list[Any], children: list[Any]) -> None:
        lines = [
            f"{wf['workflow_id']}  {wf['name']}  {wf['status']}",
            f"queue {wf['queue_name'] or '-'}  executor {wf['executor_id'] or '-'}  "
            f"version {wf['app_version'] or '-'}  recovery attempts {wf['recovery_attempts']}",
            f"created {_at(wf['created_at'])}  completed {_at(wf['completed_at'])}  "
            f"timeout {wf['workflow_timeout_ms'] or '-'} ms  deadline "
            f"{_at(wf['workflow_deadline_epoch_ms']) or '-'}",
            f"parent {wf['parent_workflow_id'] or '-'}  forked from {wf['forked_from'] or '-'}",
            f"input  {_text(wf['input']).plain}",
            f"output {_text(wf['output']).plain}"
            if wf["output"]
            else f"error  {_text(wf['error']).plain}",
        ]
        self.query_one("#wf-head", Static).update(clean("\n".join(str(x) for x in lines)))
        rows = []
        for s in steps:
            took = (
                str(s["completed_at_epoch_ms"] - s["started_at_epoch_ms"])
                if s["completed_at_epoch_ms"] and s["started_at_epoch_ms"]
                else ""
            )
            rows.append(
                (
                    str(s["function_id"]),
                    [
                        s["function_id"],
                        _text(s["function_name"]),
                        _at(s["started_at_epoch_ms"]),
                        took,
                        _text(s["error"] or s["output"]),
                        _text(s["child_workflow_id"]),
                    ],
                )
            )
        refill(self.query_one("#wf-steps", DataTable), rows)
        refill(
            self.query_one("#wf-children", DataTable),
            [
                (c["workflow_id"], [_text(c["workflow_id"]), _text(c["name"]), c["status"]])
                for c in children
            ],
        )


class DbosTop(App[None]):
    CSS_PATH = "qctl.tcss"
    TITLE = "qctl top (DBOS)"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("r", "refresh", "Refresh"),
        Binding("question_mark", "help", "Help"),
        Binding("enter", "open", "Open", show=False),
        Binding("C", "cancel", "Cancel"),
        Binding("R", "resume", "Resume"),
        Binding("D", "delete", "Delete"),
    ]

    def __init__(self, db: Database, location: str, read_only: bool, interval: float) -> None:
        super().__init__()
        self.db = db
        self.location = location
        self.read_only = read_only
        self.interval = interval
        self.updated = ""
        self.failure = ""

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with TabbedContent(id="tabs"):
            with TabPane("Overview", id="overview"):
                yield table("ov-names", "workflow", *reads.STATUSES)
                yield table("ov-errors", "latest errors", "name", "created", "error")
            with TabPane("Workflows", id="workflows"):
                yield table("wf-list", *reads.LIST_COLUMNS)
            with TabPane("Queues", id="queues"):
                yield table(
                    "q-list", "queue", "enqueued", "pending", "delayed", "oldest enqueued",
                    "concurrency", "worker concurrency", "rate limit",
                )  # fmt: skip
            with TabPane("Schedules", id="schedules"):
                yield table("s-list", "schedule", "workflow", "cron", "status", "last fired")
        yield Footer(compact=True, show_command_palette=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in WRITES and self.read_only)

    def on_mount(self) -> None:
        self.show_status()
        self.set_interval(self.interval, self.action_refresh)
        self.action_refresh()

    def show_status(self) -> None:
        mode = (
            f"disconnected: {self.failure}" if self.failure else f"polling every {self.interval:g}s"
        )
        ro = "  [read-only]" if self.read_only else ""
        self.query_one("#status", Static).update(
            clean(f"DBOS  {self.location}  {mode}  updated {self.updated}{ro}")
        )

    def on_tabbed_content_tab_activated(self) -> None:
        self.action_refresh()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(HELP))

    def action_refresh(self) -> None:
        self.load(self.query_one("#tabs", TabbedContent).active)

    @work(thread=True, exclusive=True, group="load")
    def load(self, tab: str) -> None:
        try:
            if tab == "overview":
                data: Any = reads.overview(self.db, int(time.time() * 1000))
            elif tab == "workflows":
                data = reads.list_workflows(self.db, reads.WorkflowFilter(), PAGE)
            elif tab == "queues":
                data = reads.queue_stats(self.db)
            else:
                data = reads.list_schedules(self.db)
        except Exception as exc:  # shown, retried at the next poll
            self.app.call_from_thread(self.failed, str(exc).splitlines()[0])
            return
        self.app.call_from_thread(self.show, tab, data)

    def failed(self, message: str) -> None:
        self.failure = message
        self.show_status()

    def show(self, tab: str, data: Any) -> None:
        self.failure = ""
        self.updated = datetime.now(UTC).strftime("%H:%M:%S")
        self.show_status()
        if tab == "overview":
            refill(
                self.query_one("#ov-names", DataTable),
                [
                    (name, [_text(name), *(counts.get(s, "") for s in reads.STATUSES)])
                    for name, counts in sorted(data["by_name"].items())
                ],
            )
            refill(
                self.query_one("#ov-errors", DataTable),
                [
                    (
                        e["workflow_id"],
                        [
                            _text(e["workflow_id"]),
                            _text(e["name"]),
                            _at(e["created_at"]),
                            _text(e["error"]),
                        ],
                    )
                    for e in data["errors"]
                ],
            )
        elif tab == "workflows":
            refill(
                self.query_one("#wf-list", DataTable),
                [
                    (
                        r["workflow_id"],
                        [
                            _at(r[c]) if c in ("created_at", "completed_at") else _text(r[c])
                            for c in reads.LIST_COLUMNS
                        ],
                    )
                    for r in data
                ],
            )
        elif tab == "queues":
            now = time.time() * 1000
            refill(
                self.query_one("#q-list", DataTable),
                [
                    (
                        q["queue_name"],
                        [
                            _text(q["queue_name"]),
                            q["enqueued"],
                            q["pending"],
                            q["delayed"],
                            ""
                            if q["oldest_enqueued_at"] is None
                            else f"{(now - q['oldest_enqueued_at']) / 1000:.0f}s",
                            _text(q["concurrency"]),
                            _text(q["worker_concurrency"]),
                            ""
                            if q["rate_limit_max"] is None
                            else f"{q['rate_limit_max']}/{q['rate_limit_period_sec']}s",
                        ],
                    )
                    for q in data
                ],
            )
        else:
            refill(
                self.query_one("#s-list", DataTable),
                [
                    (
                        s["schedule_name"],
                        [
                            _text(s["schedule_name"]),
                            _text(s["workflow_name"]),
                            _text(s["schedule"]),
                            s["status"],
                            _text(s["last_fired_at"]),
                        ],
                    )
                    for s in data
                ],
            )

    def _selected(self) -> str | None:
        if self.query_one("#tabs", TabbedContent).active != "workflows":
            return None
        return selected_key(self.query_one("#wf-list", DataTable))

    def action_open(self) -> None:
        wf_id = self._selected()
        if wf_id:
            self.push_screen(WorkflowScreen(self.db, wf_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "wf-list" and event.row_key.value:
            self.push_screen(WorkflowScreen(self.db, str(event.row_key.value)))

    def _act(self, action: str) -> None:
        wf_id = self._selected()
        if not wf_id or self.read_only:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_action_worker(action, wf_id)

        self.push_screen(ConfirmDialog(f"{action.capitalize()} DBOS workflow {wf_id}?"), answered)

    @work(thread=True, group="act")
    def run_action_worker(self, action: str, wf_id: str) -> None:
        call: dict[str, Callable[[Database, str], actions.WorkflowOutcome]] = {
            "cancel": actions.cancel,
            "resume": actions.resume,
            "delete": actions.delete,
        }
        try:
            outcome = call[action](self.db, wf_id)
            message = f"{action}: {outcome.workflow_id} (was {outcome.status})"
        except Exception as exc:
            message = f"{action} failed: {str(exc).splitlines()[0]}"
        self.app.call_from_thread(self.notify, clean(message).plain, markup=False)
        self.app.call_from_thread(self.action_refresh)

    def action_cancel(self) -> None:
        self._act("cancel")

    def action_resume(self) -> None:
        self._act("resume")

    def action_delete(self) -> None:
        self._act("delete")


def run(db: Database, location: str, read_only: bool, interval: float) -> None:
    DbosTop(db, location, read_only, interval).run()
