"""The overview's data, read without Textual: ``qctl top`` starts this read in a thread
while Textual is still being imported (``qctl.tui.preload``), so the first frame can show
it at once."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from qctl_kit.throughput import ThroughputCount
from qctl_store.types import DAGState, DailyCount, Depths, OpsStats, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

LIVE_WINDOW = timedelta(hours=1)
LIVE_BUCKET = timedelta(minutes=1)


@dataclass
class OverviewData:
    depths: list[tuple[Source, str, Depths]]
    daily: list[DailyCount]
    dag_counts: dict[str, dict[DAGState, int]] = field(default_factory=dict)
    ops: OpsStats = field(default_factory=OpsStats)
    estimated: set[Source] = field(default_factory=set)
    """Sources whose depths may hold planner estimates (huge tables; which counts:
    ``estimated_depths``)."""
    live: dict[str, list[ThroughputCount]] = field(default_factory=dict)
    """The last hour per minute of each active kind (``source:kind`` beyond the queue)."""


def fetch_overview(store: ConsoleStore) -> OverviewData:
    depths: list[tuple[Source, str, Depths]] = []
    estimated: set[Source] = set()
    per_day: dict[datetime, DailyCount] = {}
    live: dict[str, list[ThroughputCount]] = {}
    # live depths, not kind_depths: the refresh path must never count a huge succeeded
    # state row by row (it reads the partial indexes and estimates); every source's in
    # one read.
    for source, (by_kind, is_estimate) in store.sources_depths(list(Source)).items():
        if is_estimate:
            estimated.add(source)
        for kind, d in sorted(by_kind.items()):
            depths.append((source, kind, d))
        for c in store.all_daily(source):
            acc = per_day.setdefault(c.date, DailyCount(date=c.date))
            acc.enqueued += c.enqueued
            acc.processed += c.processed
            acc.failed += c.failed
            acc.reaped += c.reaped
        for point in store.throughput(source, LIVE_WINDOW, LIVE_BUCKET):
            label = point.kind if source == Source.QUEUE else f"{source.value}:{point.kind}"
            live.setdefault(label, []).append(point)
    dag_counts = store.dag_name_state_counts() if hasattr(store, "dag_name_state_counts") else {}
    daily = [per_day[d] for d in sorted(per_day)]
    return OverviewData(depths, daily, dag_counts, store.ops_stats(), estimated, live)
