"""Overview: per-(source, kind) depths (held jobs in the paused column), daily
throughput and the last hour per kind, DAG states, event ledger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from qctl.systems.azync.tui.columns import DAG_COUNT_COLUMNS
from qctl.systems.azync.tui.overview_data import OverviewData, fetch_overview
from qctl.tui import fmt
from qctl.tui.panes import Redrawn
from qctl.tui.widgets import Column, cells, flex, refill, table
from qctl_store.types import (
    DailyCount,
    Depths,
    JobState,
    OpsStats,
    Source,
    estimated_depths,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

SORTS = ["source", "pending", "scheduled", "active", "dead", "paused", "succeeded", "oldest"]
SERIES = ["enqueued", "processed", "failed", "reaped"]
BACKLOG = 8
"""Cells of the largest row's backlog bar: narrow, so that the kind keeps the width."""
CHART_WIDTH = 48
"""The chart panel's width inside its border, before the first layout."""
LIVE_KINDS = 3
"""Kinds drawn in the live chart: the busiest of the last hour."""


@dataclass(frozen=True)
class QueueRow:
    """A (source, kind) of the queues table and what its cells need beside its depths."""

    source: Source
    kind: str
    depths: Depths
    guessed: frozenset[str] = frozenset()
    """Its counts that may be planner estimates (``estimated_depths``), marked ``~``."""
    largest: int = 0
    """The largest row's backlog: the full width of the backlog bars."""

    def count(self, field: str) -> str:
        return f"{'~' if field in self.guessed else ''}{getattr(self.depths, field)}"

    def backlog(self) -> Text:
        d = self.depths
        bar = Text(fmt.bar(d.pending, self.largest, BACKLOG), "cyan")
        bar.append(fmt.bar(d.dead, self.largest, BACKLOG), "red")
        return bar


def _count(
    name: str, about: str, field: str = "", short: str = "", drop: int = 0
) -> Column[QueueRow]:
    """A depth that may be an estimate (``~``)."""
    return Column(name, about, lambda r: r.count(field or name), short=short, drop=drop)


# Where the terminal is narrow every state's count stays, under a short header, and the
# totals, the age and the bar go: the kind gets the width they leave.
QUEUE_COLUMNS: tuple[Column[QueueRow], ...] = (
    Column("source", "queue, event, dag or workflow", lambda r: r.source.value),
    flex("kind", "the job kind", lambda r: r.kind, middle=True),
    _count("pending", "ready to run", short="pend"),
    _count("scheduled", "to run later", short="sched"),
    Column("active", "leased by a worker", lambda r: r.depths.active, short="act"),
    Column("wait", "waiting for a signal", lambda r: r.depths.waiting),
    Column("block", "blocked on DAG dependencies", lambda r: r.depths.blocked, short="blk"),
    _count("uncert", "an operation whose outcome is unknown", "uncertain", short="unc"),
    Column(
        "dead",
        "out of attempts",
        lambda r: Text(r.count("dead"), "bold red" if r.depths.dead else ""),
    ),
    _count("paused", "held", short="paus"),
    _count("succeeded", "done", short="done", drop=3),
    Column(
        "oldest",
        "age of the oldest pending job",
        lambda r: fmt.duration(r.depths.oldest_pending_age) if r.depths.pending else "",
        drop=3,
    ),
    Column(
        "backlog",
        "pending (cyan) and dead (red) beside the largest row",
        QueueRow.backlog,
        drop=4,
    ),
)

DAG_STATE_COLUMNS = (flex("dag", "a DAG name", lambda r: r[0]), *DAG_COUNT_COLUMNS)


def sort_key(column: str, row: QueueRow) -> Any:
    if column == "source":
        return (row.source.value, row.kind)
    if column == "oldest":
        return -row.depths.oldest_pending_age.total_seconds()
    return -getattr(row.depths, column)


def throughput_text(daily: list[DailyCount], width: int = 20) -> Text:
    """Per series: a sparkline ``width`` days long (none at 0), today and the total."""
    text = Text()
    if not daily:
        text.append("no daily stats yet", "dim")
        return text
    styles = {"enqueued": "cyan", "processed": "green", "failed": "red", "reaped": "yellow"}
    last = daily[-1]
    shown = min(width, len(daily))
    # One row per series in fixed columns, 27 cells and the sparkline wide.
    text.append(f"daily throughput, today {last.date:%Y-%m-%d} UTC\n", "bold")
    trend = f"last {shown} day(s)" if width else ""
    text.append(f"{'':10}{trend:<{width}}{'today':>7} {f'{len(daily)}d total':>9}\n", "dim")
    for name in SERIES:
        values = [getattr(c, name) for c in daily]
        text.append(f"{name:>9} ", "bold")
        if width:
            text.append(f"{fmt.sparkline(values, width):<{width}}", styles[name])
        text.append(f" {getattr(last, name):>6} {sum(values):>9}\n")
    return text


def ledger_text(ops: OpsStats) -> Text:
    text = Text()
    text.append("event ledger\n", "bold")
    # azync's "undispatched": events with no delivery row, which vacuumed deliveries
    # leave too (azync keeps no dispatch time), so not an alarm.
    text.append(f"  no delivery  {ops.undispatched}\n", "yellow" if ops.undispatched else "")
    text.append(f"  events 24h   {ops.total_24h}\n")
    text.append(f"  types 24h    {ops.types_24h}\n")
    text.append(f"  subscribers  {ops.subscribers}")
    return text


class OverviewPane(Redrawn[OverviewData]):
    BINDINGS = [Binding("o", "sort", "Sort")]
    filter_hint = "filter source or kind (substring)"
    sort_column = "source"
    tables = (("Overview", QUEUE_COLUMNS), ("Overview, DAG states", DAG_STATE_COLUMNS))

    def compose(self) -> ComposeResult:
        yield from self.compose_filter()
        yield table("queues", *QUEUE_COLUMNS)
        with Horizontal(id="overview-bottom"):
            yield Static(id="throughput")
            yield table("dag-states", *DAG_STATE_COLUMNS)
            yield Static(id="ledger")

    def fetch(self, store: ConsoleStore) -> OverviewData:
        return fetch_overview(store)

    def render_data(self) -> None:
        data = self.data
        if data is None:
            return
        needle = self.filter_text.lower()
        now = self.top.clock()
        found = [r for r in data.depths if needle in f"{r[0].value} {r[1]}".lower()]
        largest = max([d.pending + d.scheduled + d.active + d.dead for *_, d in found] + [0])
        rows = [
            QueueRow(
                source,
                kind,
                d,
                frozenset(estimated_depths(d, source) if source in data.estimated else ()),
                largest,
            )
            for source, kind, d in found
        ]
        rows.sort(key=lambda r: sort_key(self.sort_column, r))
        queues = self.query_one("#queues", DataTable)
        refill(
            queues, [(f"{r.source.value}\x1f{r.kind}", cells(QUEUE_COLUMNS, r, now)) for r in rows]
        )
        queues.border_title = (
            f"queues (sorted by {self.sort_column})"
            + (f"  filter: {self.filter_text}" if self.filter_text else "")
            + ("  ~ estimated" if data.estimated else "")
        )
        dag_rows = [
            (name, cells(DAG_STATE_COLUMNS, (name, counts), now))
            for name, counts in sorted(data.dag_counts.items())
            if needle in name.lower()
        ]
        refill(self.query_one("#dag-states", DataTable), dag_rows)
        # The sparklines take what the panel has beside the numbers (27 and 21 cells).
        room = self.query_one("#throughput", Static).content_size.width or CHART_WIDTH
        daily, live = min(20, room - 27), min(26, room - 21)
        chart = throughput_text(data.daily, daily if daily >= fmt.SPARK_MIN else 0)
        chart.append_text(
            fmt.live_text(data.live, live if live >= fmt.SPARK_MIN else 0, LIVE_KINDS)
        )
        self.query_one("#throughput", Static).update(chart)
        self.query_one("#ledger", Static).update(ledger_text(data.ops))

    def on_resize(self) -> None:
        self.render_data()

    def _depths(self, source: Source, kind: str) -> Depths | None:
        rows = self.data.depths if self.data else []
        return next((d for s, k, d in rows if (s, k) == (source, kind)), None)

    def action_sort(self) -> None:
        self.sort_column = SORTS[(SORTS.index(self.sort_column) + 1) % len(SORTS)]
        self.render_data()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        column = str(event.column_key.value)
        if column in SORTS:
            self.sort_column = column
            self.render_data()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        from qctl.systems.azync.tui.dags import DagsPane
        from qctl.systems.azync.tui.jobs import JobsPane

        event.stop()
        key = str(event.row_key.value)
        if event.data_table.id == "queues":
            source, kind = key.split("\x1f", 1)
            depths = self._depths(Source(source), kind)
            state = JobState.DEAD if depths and depths.dead else JobState.PENDING
            self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
            self.screen.query_one(JobsPane).open_with(Source(source), kind, state)
        else:
            self.screen.action_show_tab("dags")  # type: ignore[attr-defined]
            self.screen.query_one(DagsPane).open_with(key)
