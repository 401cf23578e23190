"""Labels that tell the truth: an event whose deliveries were vacuumed is not called
undispatched (azync keeps no dispatch time, so ``events list --undispatched`` says what
its rows may be), the dashboard's event header counts subscribers, not deliveries, and
an empty ``jobs list --kind`` of a kind that does not exist names it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from qctl.systems.azync.tui.events import event_text
from qctl_store.types import DequeueParams, EventAdminRow, PublishParams, Source, Subscriber
from tests.cli.conftest import Run, enqueue, out_json


def test_undispatched_listing_says_vacuumed_deliveries_look_the_same(
    run: Run, st: Any, kind: str
) -> None:
    etype, sub = f"ev.{kind}", f"sub_{kind}"
    st.register_subscriber(Subscriber(name=sub, event_type=etype))
    p = PublishParams(type=etype, payload={})
    st.publish(p)
    (delivery,) = st.dequeue_batch(Source.EVENT, DequeueParams(kind=sub, limit=1))
    st.ack(delivery.id, delivery.lease_token)
    assert st.vacuum_completed(Source.EVENT, timedelta(microseconds=1)) >= 1
    res = run("events", "list", "--undispatched", "--type", etype, "-o", "json")
    assert [e["id"] for e in out_json(res)] == [str(p.id)]
    assert "deliveries" in res.stderr and "vacuum" in res.stderr


def test_event_header_counts_subscribers_and_never_says_not_dispatched() -> None:
    now = datetime.now(UTC)
    row = EventAdminRow(uuid.UUID(int=1), "t", "", "a", 1, now, now, {}, {}, deliveries=3)
    assert "delivered to 2 subscriber(s): 3 delivery job(s)" in str(event_text(row, now, False, 2))
    row.deliveries, row.dispatched_at = 0, None
    text = str(event_text(row, now, False, 0))
    assert "not dispatched" not in text and "deliveries were vacuumed" in text


def test_jobs_list_of_a_typo_kind_names_it(run: Run, st: Any, kind: str) -> None:
    res = run("jobs", "list", "--kind", f"{kind}_typo", "-o", "json")
    assert res.exit_code == 0 and out_json(res) == []
    assert f"no kind named '{kind}_typo'" in res.stderr
    enqueue(st, kind)
    res = run("jobs", "list", "--kind", kind, "--state", "dead")
    assert res.exit_code == 0 and "no kind named" not in res.stderr, "the kind exists"
