"""Events: the ledger, subscribers, an event's deliveries, and replay."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

from qctl.systems.azync.ops import events as ops_events
from qctl.systems.azync.tui.columns import job_columns
from qctl.systems.azync.tui.jobs import JobDetailScreen
from qctl.systems.azync.tui.overview import ledger_text
from qctl.tui import fmt
from qctl.tui.panes import DetailScreen, Pane, RecordView
from qctl.tui.widgets import Column, cells, flex, refill, table
from qctl_store.types import (
    EventAdminRow,
    EventFilter,
    Job,
    JobSearch,
    OpsStats,
    ReplayFilter,
    Source,
    SubscriberView,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

EVENTS = 100
DELIVERIES = 500
"""An event has one delivery per subscriber plus one per replay: more is not read."""


@dataclass
class EventsData:
    events: list[EventAdminRow]
    total: int
    subscribers: list[SubscriberView]
    ops: OpsStats


NO_DELIVERY = "no delivery"
"""azync keeps no dispatch time: an event without delivery rows had no subscriber when
published (fan-out is part of publishing), or its deliveries were vacuumed since."""


def dispatched(at: datetime | None, now: datetime) -> str | Text:
    """When an event's deliveries were made, or that it has none."""
    return fmt.ago(at, now) if at else Text(NO_DELIVERY, "yellow")


EVENT_COLUMNS: tuple[Column[EventAdminRow], ...] = (
    Column("id", "the event's id (short)", lambda e: fmt.short_id(e.id)),
    flex("type", "the event type", lambda e: e.type),
    flex(
        "aggregate",
        "type/id of what it is about",
        lambda e: f"{e.aggregate_type}/{e.aggregate_id}" if e.aggregate_type else e.aggregate_id,
    ),
    Column("ver", "the aggregate version", lambda e: e.version),
    Column("occurred", "domain time", lambda e: e.occurred_at, time="ago"),
    Column(
        "dispatched",
        "when fanned out (azync keeps no dispatch time: when it occurred), "
        '"no delivery" without delivery rows',
        lambda e: e.dispatched_at,
        time=dispatched,
    ),
    Column(
        "deliveries",
        "its delivery jobs (one per subscriber, one per replay)",
        lambda e: e.deliveries,
    ),
)
SUBSCRIBER = flex("subscriber", "its name (a delivery job's kind)", lambda j: j.kind)
SUBSCRIBER_COLUMNS: tuple[Column[SubscriberView], ...] = (
    flex("event type", "what a subscriber receives", lambda s: s.event_type),
    flex("subscriber", SUBSCRIBER.about, lambda s: s.subscriber),
    Column("max attempts", "per delivery", lambda s: s.max_attempts),
    Column("since", "when it registered", lambda s: s.created_at, time="ago"),
)
DELIVERY_COLUMNS = job_columns(
    Column("job", "the delivery job (short id)", lambda j: fmt.short_id(j.id)),
    SUBSCRIBER,
    tail=(Column("replay", "delivered again by a replay", lambda j: "yes" if j.replay else ""),),
)
"""An event's deliveries, on its detail screen."""


class EventsPane(Pane[EventsData]):
    BINDINGS = [Binding("t", "toggle_undispatched", "No deliveries")]
    filter_hint = "event type (exact)"
    undispatched = False
    tables = (
        ("Events", EVENT_COLUMNS),
        ("Subscribers", SUBSCRIBER_COLUMNS),
        ("Event detail, deliveries", DELIVERY_COLUMNS),
    )

    def compose(self) -> ComposeResult:
        yield Static(id="events-filter", classes="bar")
        yield from self.compose_filter()
        yield table("events-table", *EVENT_COLUMNS)
        with Horizontal(id="events-bottom"):
            yield table("subscribers", *SUBSCRIBER_COLUMNS)
            yield Static(id="events-ledger")

    def fetch(self, store: ConsoleStore) -> EventsData:
        f = EventFilter(type=self.filter_text, undispatched=True if self.undispatched else None)
        events, total = store.list_events(f, 0, EVENTS)
        return EventsData(events, total, store.list_subscriber_views(), store.ops_stats())

    def show(self, data: EventsData) -> None:
        now = self.top.clock()
        rows = [(str(e.id), cells(EVENT_COLUMNS, e, now)) for e in data.events]
        refill(self.query_one("#events-table", DataTable), rows)
        subs = [
            (f"{s.event_type}\x1f{s.subscriber}", cells(SUBSCRIBER_COLUMNS, s, now))
            for s in data.subscribers
        ]
        refill(self.query_one("#subscribers", DataTable), subs)
        self.query_one("#events-ledger", Static).update(ledger_text(data.ops))
        self.query_one("#events-filter", Static).update(
            Text.assemble(
                ("type ", "dim"),
                (self.filter_text or "all", "bold"),
                ("  without deliveries only" if self.undispatched else "", "dim bold yellow"),
                ("   shown ", "dim"),
                f"{len(data.events)} of {data.total} events",
            )
        )

    def action_toggle_undispatched(self) -> None:
        self.undispatched = not self.undispatched
        self.reload()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "events-table":
            self.app.push_screen(EventDetailScreen(uuid.UUID(str(event.row_key.value))))


@dataclass
class EventDetail:
    event: EventAdminRow
    deliveries: list[Job]


def event_text(e: EventAdminRow, now: datetime, payload: bool, subscribers: int) -> Text:
    """The event's header; ``subscribers``: how many its deliveries go to (a replay adds
    a delivery, not a subscriber)."""
    t = Text()
    t.append(f"{fmt.safe(e.type)} ", "bold")
    t.append(f"{e.id}\n", "dim")
    t.append(f"aggregate {fmt.safe(f'{e.aggregate_type}/{e.aggregate_id}')} version {e.version}\n")
    t.append(f"occurred {fmt.full(e.occurred_at, now)}\n")
    if e.deliveries:
        t.append(f"delivered to {subscribers} subscriber(s): {e.deliveries} delivery job(s)\n")
    else:
        t.append(
            "no delivery rows: no subscriber when published, or its deliveries were vacuumed\n",
            "yellow",
        )
    if e.meta:
        meta = ", ".join(f"{k}={v}" for k, v in sorted(e.meta.items()))
        t.append(f"meta {fmt.safe(meta)}\n")
    if payload:
        t.append(f"payload {fmt.json_text(e.payload)}\n")
    else:
        t.append("payload hidden (press v to show)\n", "dim")
    return t


class EventView(RecordView[EventDetail]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="event-text")
            yield table("deliveries", *DELIVERY_COLUMNS)

    def fetch(self, store: ConsoleStore) -> EventDetail:
        search = JobSearch(source=Source.EVENT, event_id=self.record_id)
        return EventDetail(
            store.get_event(self.record_id), store.search_jobs(search, limit=DELIVERIES)
        )

    def render_detail(self) -> None:
        data = self.detail
        if data is None:
            return
        now = self.top.clock()
        self.query_one("#event-text", Static).update(
            event_text(data.event, now, self.payload, len({j.kind for j in data.deliveries}))
        )
        rows = [(str(j.id), cells(DELIVERY_COLUMNS, j, now)) for j in data.deliveries]
        deliveries = self.query_one("#deliveries", DataTable)
        deliveries.border_title = f"deliveries: {len(rows)}"
        refill(deliveries, rows)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))


class EventDetailScreen(DetailScreen):
    BINDINGS = [
        Binding("v", "toggle_payload", "Payload"),
        Binding("R", "event_replay", "Replay"),
    ]

    def view(self) -> EventView:
        return EventView(self.record_id)

    def action_event_replay(self) -> None:
        event_id = self.record_id
        self.top.act(
            lambda plan: f"replay event {event_id} to its {plan.subscribers} subscriber(s)?",
            lambda store, dry_run: ops_events.replay(
                store, ReplayFilter(event_id=event_id), dry_run
            ),
            lambda done: f"replayed: {done.deliveries} delivery job(s) enqueued",
        )
