"""Overview of a DBOS system database: per workflow name and per queue the workflows in
flight now and those finished in the last hour, by status; workflows completed per
minute over the last hour; the latest errors. One read (``reads.overview``), each part
over an index DBOS has; the minutes already counted are kept between polls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from qctl.systems.dbos import reads
from qctl.systems.dbos.tui import cells
from qctl.tui import fmt, widgets
from qctl.tui.panes import Redrawn
from qctl.tui.widgets import Column, flex, refill, table
from qctl_kit.throughput import ThroughputCount

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database

WINDOW = timedelta(hours=1)
BUCKET = timedelta(minutes=1)
CHART_ROWS = 4
CHART_WIDTH = 61
"""The sparklines' widest, in cells (a minute each, for the hour)."""
"""Series drawn in the chart: every workflow, then the busiest names."""
ALL = "all"


@dataclass
class OverviewData:
    now: datetime
    read: reads.Overview


@dataclass(frozen=True)
class Counted:
    """A row of the per-name or per-queue table: its workflows per status and, for a
    queue, when its oldest enqueued one was created."""

    name: str
    counts: Mapping[str, int]
    oldest_enqueued_at: int | None = None


def count(status: str, header: str, when: str) -> Column[Counted]:
    """A status's count (blank for none), coloured as the status."""
    return Column(
        header,
        f"{status} workflows {when}",
        lambda r: (
            Text(str(r.counts[status]), cells.STATUS_STYLES[status]) if r.counts.get(status) else ""
        ),
    )


COUNTS = (
    count("PENDING", "pending", "now"),
    count("ENQUEUED", "enqueued", "now"),
    count("DELAYED", "delayed", "now"),
    count("SUCCESS", "success", "finished in the last hour"),
    count("ERROR", "error", "finished in the last hour"),
    count("CANCELLED", "cancelled", "finished in the last hour"),
    count("MAX_RECOVERY_ATTEMPTS_EXCEEDED", "max-recovery", "finished in the last hour"),
)
NAME_COLUMNS = (flex("workflow", "a workflow name (its function)", lambda r: r.name), *COUNTS)
QUEUE_COLUMNS: tuple[Column[Counted], ...] = (
    flex(
        "queue",
        "a queue name (DBOS's internal queue runs resumed and forked ones)",
        lambda r: r.name,
    ),
    *COUNTS,
    Column(
        "oldest enqueued",
        "the age of its oldest enqueued workflow",
        lambda r: r.oldest_enqueued_at,
        time=cells.ago,
    ),
)
ERROR_COLUMNS: tuple[Column[reads.LatestError], ...] = (
    Column("latest errors", "a failed workflow's id", lambda e: e["workflow_id"]),
    flex("name", "its workflow", lambda e: e["name"]),
    Column("created", "when it started", lambda e: e["created_at"], time=cells.when),
    flex("error", "its error, decoded", lambda e: cells.value(e["error"])),
)


def chart_series(read: reads.Overview, now: datetime) -> dict[str, list[ThroughputCount]]:
    """Per minute of the window, workflows completed (SUCCESS) and failed (ERROR): for
    every workflow together (``all``) and per name; minutes without any are zeros."""
    start = now - WINDOW
    first = int(start.timestamp() * 1000) // int(BUCKET.total_seconds() * 1000)
    minutes = int(WINDOW / BUCKET) + 1
    series: dict[str, list[ThroughputCount]] = {}

    def points(label: str) -> list[ThroughputCount]:
        if label not in series:
            series[label] = [ThroughputCount(label, start + i * BUCKET) for i in range(minutes)]
        return series[label]

    for row in read["throughput"]:
        i = int(row["bucket"]) // int(BUCKET.total_seconds() * 1000) - first
        if not 0 <= i < minutes or row["status"] not in ("SUCCESS", "ERROR"):
            continue
        for label in (ALL, str(row["name"])):
            point = points(label)[i]
            if row["status"] == "SUCCESS":
                point.processed += int(row["n"])
            else:
                point.failed += int(row["n"])
    return series


class OverviewPane(Redrawn[OverviewData]):
    filter_hint = "filter workflow name or queue (substring)"
    tables = (
        ("Overview", NAME_COLUMNS),
        ("Overview per queue", QUEUE_COLUMNS),
        ("Overview errors", ERROR_COLUMNS),
    )

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table("dbos-names", *NAME_COLUMNS)
        yield table("dbos-queue-counts", *QUEUE_COLUMNS)
        with Horizontal(id="dbos-ov-bottom"):
            yield Static(id="dbos-throughput")
            yield table("dbos-errors", *ERROR_COLUMNS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        window, bucket = (int(d.total_seconds() * 1000) for d in (WINDOW, BUCKET))
        self.finished = reads.FinishedWindow(window, bucket)
        """Kept across refreshes: each poll reads the last minutes, not the hour."""
        self.actions_seen = 0

    def fetch(self, db: Database) -> OverviewData:
        if self.top.actions_done != self.actions_seen:
            # A delete, resume or rewind changes minutes already counted.
            self.actions_seen = self.top.actions_done
            self.finished.clear()
        now = self.top.clock()
        return OverviewData(now, reads.overview(db, int(now.timestamp() * 1000), self.finished))

    def render_data(self) -> None:
        if self.data is None:
            return
        read, now = self.data.read, self.data.now
        needle = self.filter_text.lower()
        names = self.query_one("#dbos-names", DataTable)
        refill(
            names,
            [
                (name, widgets.cells(NAME_COLUMNS, Counted(name, counts), now))
                for name, counts in sorted(read["by_name"].items())
                if needle in name.lower()
            ],
        )
        names.border_title = "per workflow name: in flight now, finished in the last hour" + (
            f"  filter: {self.filter_text}" if self.filter_text else ""
        )
        oldest = {q["queue_name"]: q["oldest_enqueued_at"] for q in read["queues"] if q["enqueued"]}
        queue_names = sorted(set(read["by_queue"]) | {q["queue_name"] for q in read["queues"]})
        queues = self.query_one("#dbos-queue-counts", DataTable)
        refill(
            queues,
            [
                (
                    name,
                    widgets.cells(
                        QUEUE_COLUMNS,
                        Counted(name, read["by_queue"].get(name, {}), oldest.get(name)),
                        now,
                    ),
                )
                for name in queue_names
                if needle in name.lower()
            ],
        )
        queues.border_title = "per queue: in flight now, finished in the last hour"
        # The sparklines take what the panel has beside the label and the numbers.
        panel = self.query_one("#dbos-throughput", Static)
        room = min(CHART_WIDTH, (panel.content_size.width or CHART_WIDTH + 21) - 21)
        chart = fmt.live_text(
            chart_series(read, now),
            width=room if room >= fmt.SPARK_MIN else 0,
            rows=CHART_ROWS,
            what="completed",
        )
        panel.update(chart)
        errors = self.query_one("#dbos-errors", DataTable)
        refill(
            errors,
            [(e["workflow_id"], widgets.cells(ERROR_COLUMNS, e, now)) for e in read["errors"]],
        )

    def on_resize(self) -> None:
        self.render_data()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        from qctl.systems.dbos.tui.workflows import WorkflowDetailScreen, WorkflowsPane

        event.stop()
        key = str(event.row_key.value)
        if event.data_table.id == "dbos-errors":
            self.top.push_screen(WorkflowDetailScreen(key))
            return
        words = key if event.data_table.id == "dbos-names" else f"queue={key}"
        self.screen.action_show_tab("workflows")  # type: ignore[attr-defined]
        self.screen.query_one(WorkflowsPane).open_with(words)
