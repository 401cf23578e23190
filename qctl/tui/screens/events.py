"""Events: the ledger, subscribers, an event's deliveries, and replay."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

from qctl.tui import fmt
from qctl.tui.screens.base import DetailScreen, Pane
from qctl.tui.screens.overview import ledger_text
from qctl.tui.widgets import Loader, refill, table
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

EVENTS = 100
DELIVERY_SCAN = 500
"""Deliveries are found by scanning each subscriber's newest jobs (no event-id index)."""


@dataclass
class EventsData:
    events: list[EventAdminRow]
    total: int
    subscribers: list[SubscriberView]
    ops: OpsStats


class EventsPane(Pane[EventsData]):
    BINDINGS = [Binding("t", "toggle_undispatched", "Undispatched")]
    filter_hint = "event type (exact)"
    undispatched = False

    def compose(self) -> ComposeResult:
        yield Static(id="events-filter", classes="bar")
        yield from self.compose_filter()
        yield table(
            "events-table", "id", "type", "aggregate", "ver", "occurred", "dispatched", "deliveries"
        )
        with Horizontal(id="events-bottom"):
            yield table("subscribers", "event type", "subscriber", "max attempts", "since")
            yield Static(id="events-ledger")

    def fetch(self, store: Any) -> EventsData:
        f = EventFilter(type=self.filter_text, undispatched=True if self.undispatched else None)
        events, total = store.list_events(f, 0, EVENTS)
        return EventsData(events, total, store.list_subscriber_views(), store.ops_stats())

    def show(self, data: EventsData) -> None:
        now = self.top.clock()
        rows = [
            (
                str(e.id),
                [
                    fmt.short_id(e.id),
                    e.type,
                    f"{e.aggregate_type}/{e.aggregate_id}" if e.aggregate_type else e.aggregate_id,
                    e.version,
                    fmt.ago(e.occurred_at, now),
                    fmt.ago(e.dispatched_at, now) if e.dispatched_at else Text("pending", "yellow"),
                    e.deliveries,
                ],
            )
            for e in data.events
        ]
        refill(self.query_one("#events-table", DataTable), rows)
        subs = [
            (
                f"{s.event_type}\x1f{s.subscriber}",
                [s.event_type, s.subscriber, s.max_attempts, fmt.ago(s.created_at, now)],
            )
            for s in data.subscribers
        ]
        refill(self.query_one("#subscribers", DataTable), subs)
        self.query_one("#events-ledger", Static).update(ledger_text(data.ops))
        self.query_one("#events-filter", Static).update(
            Text.assemble(
                ("type ", "dim"),
                (self.filter_text or "all", "bold"),
                ("  undispatched only " if self.undispatched else "", "bold yellow"),
                (f"   {len(data.events)} of {data.total} events", ""),
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
    subscribers: list[str]


def find_deliveries(store: Any, event: EventAdminRow) -> tuple[list[Job], list[str]]:
    names = [s.name for s in store.subscribers(event.type)]
    found: list[Job] = []
    for name in names:
        jobs = store.search_jobs(JobSearch(source=Source.EVENT, kind=name), limit=DELIVERY_SCAN)
        found.extend(j for j in jobs if j.event_id == event.id)
    return found, names


def event_text(e: EventAdminRow, now: datetime, payload: bool) -> Text:
    t = Text()
    t.append(f"{e.type} ", "bold")
    t.append(f"{e.id}\n", "dim")
    t.append(f"aggregate {e.aggregate_type}/{e.aggregate_id} version {e.version}\n")
    t.append(f"occurred {e.occurred_at:%Y-%m-%d %H:%M:%S} UTC ({fmt.ago(e.occurred_at, now)})\n")
    if e.dispatched_at:
        t.append(f"dispatched {fmt.ago(e.dispatched_at, now)} to {e.deliveries} subscriber(s)\n")
    else:
        t.append("not dispatched yet\n", "yellow")
    if e.meta:
        t.append("meta " + ", ".join(f"{k}={v}" for k, v in sorted(e.meta.items())) + "\n")
    if payload:
        t.append(f"payload {fmt.json_text(e.payload)}\n")
    else:
        t.append("payload hidden (press v to show)\n", "dim")
    return t


class EventView(Loader[EventDetail]):
    def __init__(self, event_id: uuid.UUID) -> None:
        super().__init__()
        self.event_id = event_id
        self.detail: EventDetail | None = None
        self.payload = False

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="event-text")
            yield table("deliveries", "job", "subscriber", "state", "attempt", "replay", "error")

    def fetch(self, store: Any) -> EventDetail:
        event = store.get_event(self.event_id)
        deliveries, names = find_deliveries(store, event)
        return EventDetail(event, deliveries, names)

    def show(self, data: EventDetail) -> None:
        self.detail = data
        self.render_detail()
        rows = [
            (
                str(j.id),
                [
                    fmt.short_id(j.id),
                    j.kind,
                    Text(j.state.value, fmt.state_style(j.state)),
                    f"{j.attempt}/{j.max_attempts}",
                    "yes" if j.replay else "",
                    fmt.one_line(j.last_error, 50),
                ],
            )
            for j in data.deliveries
        ]
        refill(self.query_one("#deliveries", DataTable), rows)

    def render_detail(self) -> None:
        if self.detail is not None:
            self.query_one("#event-text", Static).update(
                event_text(self.detail.event, self.top.clock(), self.payload)
            )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        from qctl.tui.screens.jobs import JobDetailScreen

        event.stop()
        self.app.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))


class EventDetailScreen(DetailScreen):
    BINDINGS = [
        Binding("v", "toggle_payload", "Payload"),
        Binding("R", "event_replay", "Replay"),
    ]

    def __init__(self, event_id: uuid.UUID) -> None:
        super().__init__()
        self.event_id = event_id

    def compose(self) -> ComposeResult:
        yield from self.compose_status()
        yield EventView(self.event_id)
        yield from self.compose_footer()

    def action_toggle_payload(self) -> None:
        view = self.query_one(EventView)
        view.payload = not view.payload
        view.render_detail()

    def action_event_replay(self) -> None:
        event_id = self.event_id
        self.app.act(
            f"replay event {event_id} to every subscriber?",
            lambda s: s.replay(ReplayFilter(event_id=event_id)),
            "replayed: {n} delivery job(s) enqueued",
        )
