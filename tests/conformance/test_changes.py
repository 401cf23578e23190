"""azync's ``RunChangeNotifierConformance`` (``driver/drivertest/watch_conformance.go``) on
both backends, plus the
stream rules every consumer relies on (poll-only, close, many subscribers).

Each test opens its own subscription and closes it. Assertions drain the stream until a
predicate matches (``CHANGE_WAIT`` each): extra hints, resets and unrelated traffic are
all allowed, a stream that ends while waiting fails.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from qctl_kit.errors import Unavailable
from qctl_kit.streams import Subscription
from qctl_store.types import (
    Change,
    ChangeEntity,
    DAGDep,
    DAGParams,
    DAGState,
    JobState,
    PublishParams,
    Source,
)
from tests.conformance.helpers import (
    AnyStore,
    await_change,
    enqueue_due,
    host_now,
    is_reset,
    lease_one,
    subscribe,
    token,
    unique,
    wf_task,
)
from tests.conftest import StoreFactory


def test_initial_reset(changes: Subscription[Change]) -> None:
    first = await_change(changes, "the initial reset", lambda c: True)
    assert first.entity == ChangeEntity.RESET
    assert first.at is not None and first.id is None


def test_job_lifecycle(store: AnyStore, live: Subscription[Change]) -> None:
    kind = unique("chg_lifecycle")
    id = enqueue_due(store, kind)
    pending = await_change(
        live, "the pending hint", lambda c: c.entity == ChangeEntity.JOB and c.id == id
    )
    assert pending.source == Source.QUEUE
    assert pending.kind == kind
    assert pending.state == JobState.PENDING
    assert pending.at is not None and not pending.bulk

    job = lease_one(store, Source.QUEUE, kind)
    await_change(live, "the active hint", lambda c: c.id == id and c.state == JobState.ACTIVE)
    # A lease heartbeat changes no state and announces nothing; the ack does.
    store.extend_lease(id, token(job), timedelta(minutes=2))
    store.ack(id, token(job))
    hint = await_change(live, "the next hint for the job", lambda c: c.id == id)
    assert hint.state == JobState.SUCCEEDED


def test_event_append_and_delivery(store: AnyStore, live: Subscription[Change]) -> None:
    sub_name, event_type = unique("chg_sub"), unique("evt.chg")
    subscribe(store, sub_name, event_type)
    p = PublishParams(type=event_type, payload={}, occurred_at=host_now())
    assert store.publish(p) == 1

    event = await_change(
        live,
        "the ledger-append hint",
        lambda c: c.entity == ChangeEntity.EVENT and c.id == p.id,
    )
    assert event.kind == event_type
    assert event.source is None and event.state == ""

    delivery = await_change(
        live,
        "the delivery-job hint",
        lambda c: c.entity == ChangeEntity.JOB and c.source == Source.EVENT and c.kind == sub_name,
    )
    assert delivery.state == JobState.PENDING


def test_dag_create(store: AnyStore, live: Subscription[Change]) -> None:
    name = unique("chg-dag")
    p = DAGParams(
        name=name,
        tasks=[wf_task("first", unique("chg.dag.first")), wf_task("second", unique("chg.dag.2"))],
        deps=[DAGDep(task_key="second", depends_on_key="first")],
    )
    inserted, _ = store.create_dag(p)
    assert inserted

    header = await_change(
        live, "the DAG header hint", lambda c: c.entity == ChangeEntity.DAG and c.id == p.id
    )
    assert header.kind == name
    assert header.state == DAGState.RUNNING
    assert header.source is None

    task = await_change(
        live,
        "the root task hint",
        lambda c: c.entity == ChangeEntity.JOB and c.dag_id == p.id and c.task_key == "first",
    )
    assert task.source == Source.DAG
    assert task.state == JobState.PENDING

    blocked = await_change(
        live,
        "the blocked task hint",
        lambda c: c.entity == ChangeEntity.JOB and c.dag_id == p.id and c.task_key == "second",
    )
    assert blocked.state == JobState.BLOCKED

    # Cancelling changes the header's state (and cancel_requested): another hint.
    store.cancel_dag(p.id)
    await_change(
        live,
        "the cancelled header hint",
        lambda c: c.entity == ChangeEntity.DAG and c.id == p.id and c.state == DAGState.CANCELLED,
    )


def test_many_subscribers_each_get_every_hint(store: AnyStore) -> None:
    subs = [store.changes() for _ in range(8)]
    try:
        for sub in subs:
            assert sub is not None
            await_change(sub, "the opening reset", is_reset)
        id = enqueue_due(store, unique("chg_fanout"))
        for sub in subs:
            assert sub is not None
            await_change(sub, "the fanned-out hint", lambda c: c.id == id)
    finally:
        for sub in subs:
            if sub is not None:
                sub.close()


def test_closed_subscription_ends_iteration(store: AnyStore) -> None:
    sub = store.changes()
    assert sub is not None
    sub.close()
    assert list(sub) == []


def test_poll_only_has_no_stream(store_factory: StoreFactory) -> None:
    s = store_factory(poll_only=True)
    assert s.changes() is None
    assert s.wake() is None


def test_close_ends_streams(store_factory: StoreFactory) -> None:
    s = store_factory()
    sub = s.changes()
    assert sub is not None
    await_change(sub, "the opening reset", is_reset)
    s.close()
    assert sub.get(timeout=1) is None and sub.closed
    with pytest.raises(Unavailable):
        s.changes()


def test_hints_from_another_store_session(store: AnyStore, store_factory: StoreFactory) -> None:
    # A second store on the same database (another session/connection) is seen too.
    other = store_factory()
    watcher = store.changes()
    assert watcher is not None
    try:
        await_change(watcher, "the opening reset", is_reset)
        id = enqueue_due(other, unique("chg_other"))
        await_change(watcher, "the other session's hint", lambda c: c.id == id)
    finally:
        watcher.close()
