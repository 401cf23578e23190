"""``AdminStore.live_depths`` on both backends: on a table of ordinary size it is
``kind_depths`` exactly (every state, the oldest pending age) and says nothing is
estimated. The huge-table path (statistics for succeeded and paused) is covered on
PostgreSQL by tests/postgres/test_admin_plans.py."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from qctl_store.types import Depths, JobFilter, JobState, PublishParams, Source
from tests.conformance.helpers import (
    AnyStore,
    dequeue_n,
    enqueue_due,
    lease_one,
    subscribe,
    token,
    unique,
)

Q = Source.QUEUE


def _one_of_each_state(store: AnyStore, kind: str) -> None:
    """Two pending, one scheduled, one active, one dead, one paused, two succeeded."""
    for _ in range(7):
        enqueue_due(store, kind)
    enqueue_due(store, kind, delay=timedelta(hours=1))
    leased = dequeue_n(store, Q, kind, 4)
    for job in leased[:2]:
        store.ack(job.id, token(job))
    store.dead(leased[2].id, token(leased[2]), "boom")
    pending, _ = store.list_jobs(Q, JobFilter(kind=kind, state=JobState.PENDING))
    store.pause_job(Q, pending[0].id)


def test_live_depths_equal_kind_depths_on_an_ordinary_table(store: AnyStore) -> None:
    kind = unique("live")
    _one_of_each_state(store, kind)
    depths, estimated = store.live_depths(Q)
    assert not estimated
    got = depths[kind]
    assert (got.pending, got.scheduled, got.active, got.dead, got.paused, got.succeeded) == (
        2,
        1,
        1,
        1,
        1,
        2,
    )
    assert got.oldest_pending_age > timedelta(0)
    exact = store.kind_depths(Q)[kind]
    assert replace(exact, oldest_pending_age=timedelta(0)) == replace(
        got, oldest_pending_age=timedelta(0)
    )
    assert exact.oldest_pending_age >= got.oldest_pending_age  # read later, so older


def test_live_depths_of_event_deliveries(store: AnyStore) -> None:
    sub = unique("live_sub")
    subscribe(store, sub, f"ev.{sub}")
    store.publish(PublishParams(type=f"ev.{sub}", payload={}))
    store.publish(PublishParams(type=f"ev.{sub}", payload={}))
    lease_one(store, Source.EVENT, sub)
    depths, estimated = store.live_depths(Source.EVENT)
    assert not estimated
    assert (depths[sub].pending, depths[sub].active) == (1, 1)
    assert sub not in store.live_depths(Q)[0]


def test_live_depths_of_an_empty_source(store: AnyStore) -> None:
    depths, estimated = store.live_depths(Source.WORKFLOW)
    assert not estimated
    assert all(isinstance(d, Depths) for d in depths.values())
