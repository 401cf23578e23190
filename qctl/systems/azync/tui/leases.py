"""Leases: the active jobs, soonest expiry first, with lease age, time to expiry and
reap counts, and per kind how many leases are out, overdue and reaped (the kinds whose
workers lose their leases most)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from qctl.systems.azync.tui.columns import JOB_ATTEMPT, JOB_KIND, JOB_SOURCE
from qctl.systems.azync.tui.jobs import JobDetailScreen
from qctl.tui import fmt
from qctl.tui.panes import Redrawn
from qctl.tui.widgets import Column, cells, flex, refill, table
from qctl_kit.throughput import ThroughputCount
from qctl_store.types import Job, JobSearch, JobState, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

LEASES = 200
"""Active jobs read per source, soonest expiry first (the active index's order)."""
WINDOW = timedelta(hours=1)


@dataclass
class KindLeases:
    source: Source
    kind: str
    active: int = 0
    overdue: int = 0
    """Leases past their expiry that the reaper has not taken back yet."""
    reaps: int = 0
    """Reaps the active jobs went through (their ``reap_count``)."""
    killed: int = 0
    """Jobs of the kind the reaper killed in the last hour."""


@dataclass
class LeasesData:
    jobs: list[Job]
    now: datetime
    kinds: list[KindLeases] = field(default_factory=list)


def lease_kinds(
    jobs: list[Job], killed: dict[tuple[Source, str], int], now: datetime
) -> list[KindLeases]:
    """Per (source, kind): leases out, overdue and reaps, most troubled first."""
    out: dict[tuple[Source, str], KindLeases] = {}
    for key, n in killed.items():
        out.setdefault(key, KindLeases(*key)).killed = n
    for j in jobs:
        k = out.setdefault((j.source, j.kind), KindLeases(j.source, j.kind))
        k.active += 1
        k.overdue += int(j.lease_until is not None and j.lease_until < now)
        k.reaps += j.reap_count
    return sorted(out.values(), key=lambda k: (-(k.killed + k.overdue + k.reaps), k.kind))


def fetch_leases(store: ConsoleStore, now: datetime) -> LeasesData:
    jobs: list[Job] = []
    killed: dict[tuple[Source, str], int] = {}
    for source in Source:
        jobs += store.search_jobs(JobSearch(source=source, state=JobState.ACTIVE), limit=LEASES)
        points: list[ThroughputCount] = store.throughput(source, WINDOW, WINDOW)
        for p in points:
            if p.reaped:
                killed[(source, p.kind)] = killed.get((source, p.kind), 0) + p.reaped
    jobs.sort(key=lambda j: (j.lease_until or now, str(j.id)))
    return LeasesData(jobs, now, lease_kinds(jobs, killed, now))


def expires(lease_until: datetime | None, now: datetime) -> str | Text:
    """Time left on a lease, or how long it is overdue."""
    left = lease_until - now if lease_until else None
    if left is not None and left < timedelta(0):
        return Text(f"overdue {fmt.duration(-left)}", "bold red")
    return fmt.duration(left)


LEASE_COLUMNS: tuple[Column[Job], ...] = (
    Column("id", "the job's id (short)", lambda j: fmt.short_id(j.id)),
    JOB_SOURCE,
    JOB_KIND,
    Column("leased", "since the lease was taken", lambda j: j.started_at, time="ago"),
    Column("expires", "time left, or overdue", lambda j: j.lease_until, time=expires),
    Column(
        "reaps",
        "times its lease expired before",
        lambda j: Text(str(j.reap_count), "yellow") if j.reap_count else "0",
    ),
    JOB_ATTEMPT,
)
KIND_LEASE_COLUMNS: tuple[Column[KindLeases], ...] = (
    Column("source", JOB_SOURCE.about, lambda k: k.source.value),
    flex("kind", JOB_KIND.about, lambda k: k.kind, middle=True),
    Column("active", "leases out now", lambda k: k.active),
    Column("overdue", "leases past their expiry, not yet reaped", lambda k: k.overdue),
    Column("reaps", "reaps its active jobs went through", lambda k: k.reaps),
    Column("killed 1h", "jobs the reaper killed in the last hour", lambda k: k.killed),
)


class LeasesPane(Redrawn[LeasesData]):
    filter_hint = "kind (substring)"
    tables = (("Leases", LEASE_COLUMNS), ("Leases per kind", KIND_LEASE_COLUMNS))

    def compose(self) -> ComposeResult:
        yield Static(id="leases-bar", classes="bar")
        yield from self.compose_filter()
        yield table("lease-jobs", *LEASE_COLUMNS)
        yield table("lease-kinds", *KIND_LEASE_COLUMNS)

    def fetch(self, store: ConsoleStore) -> LeasesData:
        return fetch_leases(store, self.top.clock())

    def render_data(self) -> None:
        data = self.data
        if data is None:
            return
        needle = self.filter_text.lower()
        now = data.now
        rows = [
            (str(j.id), cells(LEASE_COLUMNS, j, now)) for j in data.jobs if needle in j.kind.lower()
        ]
        refill(self.query_one("#lease-jobs", DataTable), rows)
        kinds = [
            (f"{k.source.value}\x1f{k.kind}", cells(KIND_LEASE_COLUMNS, k, now))
            for k in data.kinds
            if needle in k.kind.lower()
        ]
        refill(self.query_one("#lease-kinds", DataTable), kinds)
        overdue = sum(k.overdue for k in data.kinds)
        self.query_one("#leases-bar", Static).update(
            Text.assemble(
                ("active leases ", "dim"),
                (str(len(data.jobs)), "bold"),
                ("   overdue ", "dim"),
                (str(overdue), "bold red" if overdue else ""),
            )
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "lease-jobs":
            self.top.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))
