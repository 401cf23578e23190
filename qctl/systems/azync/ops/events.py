"""Event ledger and subscriber verbs of azync (``event/manager.go``): publish,
replay, retain, register and delete subscriptions."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from qctl.core.errors import NoSuchName
from qctl.systems.azync.ops.results import BulkOutcome, Published, ReplayOutcome, SubscriberOutcome
from qctl_store.types import (
    EventFilter,
    JobSearch,
    JobState,
    PublishParams,
    ReplayFilter,
    Source,
    Subscriber,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

DRAINED_STATES = (JobState.PENDING, JobState.SCHEDULED, JobState.PAUSED)
"""A subscriber's deliveries that have not run yet (waiting, waiting to retry, or held):
what azync's ``event/manager.go`` DrainSubscriber deletes."""


def publish(store: ConsoleStore, params: PublishParams) -> Published:
    return Published(params.id, params.type, store.publish(params))


def replay(store: ConsoleStore, flt: ReplayFilter, dry_run: bool = False) -> ReplayOutcome:
    """Re-deliver ledger events to their subscribers. A subscriber or event that does not
    exist is refused (a typo must not read as "0 replayed"). The dry run counts what the
    real run does: the events it re-delivers and the deliveries it creates."""
    event_type = flt.event_type
    if flt.event_id is not None:
        event_type = event_type or store.get_event(flt.event_id).type
    views = store.list_subscriber_views(event_type)
    subs = {v.subscriber for v in views if flt.subscriber in ("", v.subscriber)}
    if flt.subscriber and not subs:
        raise NoSuchName("replay", _no_subscriber(store, flt.subscriber, flt.event_type))
    events, deliveries = store.count_replay(flt)
    if not dry_run:
        deliveries = store.replay(flt)
    return ReplayOutcome(events, len(subs), deliveries, dry_run)


def _no_subscriber(store: ConsoleStore, name: str, event_type: str) -> str:
    if event_type and any(v.subscriber == name for v in store.list_subscriber_views()):
        return f"subscriber {name!r} is not subscribed to {event_type!r}"
    return f"no subscriber named {name!r}"


def retain(store: ConsoleStore, before: datetime, limit: int, dry_run: bool = False) -> BulkOutcome:
    """Delete settled events that occurred before ``before`` (at most ``limit``); a dry
    run counts the events before it (those with unsettled deliveries are kept)."""
    if dry_run:
        _, total = store.list_events(EventFilter(until=before), 0, 1)
        return BulkOutcome("retain", min(total, limit), target="events", dry_run=True)
    return BulkOutcome("retain", store.retain(before, limit), target="events")


def register_subscriber(
    store: ConsoleStore, name: str, event_type: str, max_attempts: int
) -> SubscriberOutcome:
    store.register_subscriber(
        Subscriber(name=name, event_type=event_type, max_attempts=max_attempts)
    )
    return SubscriberOutcome(name, event_type, "register", 1, max_attempts=max_attempts)


def delete_subscriber(
    store: ConsoleStore, name: str, event_type: str = "", drain: bool = False, dry_run: bool = False
) -> SubscriberOutcome:
    """Unsubscribe ``name`` (from ``event_type``, or from everything); with ``drain`` also
    delete its deliveries that have not run yet. An unknown subscriber is refused."""
    subs = [v for v in store.list_subscriber_views(event_type) if v.subscriber == name]
    if not subs:
        raise NoSuchName("delete subscriber", _no_subscriber(store, name, event_type))
    if dry_run:
        pending = (
            sum(
                store.count_jobs(JobSearch(source=Source.EVENT, kind=name, state=s), exact=True)[0]
                for s in DRAINED_STATES
            )
            if drain
            else 0
        )
        return SubscriberOutcome(name, event_type, "delete", len(subs), pending, dry_run=True)
    removed = store.delete_subscriber(name, event_type)
    drained = sum(store.delete_all(Source.EVENT, name, s) for s in DRAINED_STATES) if drain else 0
    return SubscriberOutcome(name, event_type, "delete", removed, drained)
