"""``replay``'s dry run counts what the real run does (events re-delivered, deliveries
created), in the same fields, on both backends."""

from __future__ import annotations

from typing import Any

from qctl.systems.azync.ops import events as ops_events
from qctl_store.types import PublishParams, ReplayFilter
from tests.conformance.helpers import subscribe, unique


def test_replay_dry_run_counts_the_subscribers_events_and_deliveries(store: Any) -> None:
    mine, other, sub = unique("rp.mine"), unique("rp.other"), unique("rp_sub")
    subscribe(store, sub, mine)
    subscribe(store, unique("rp_else"), other)
    for event_type in (mine, mine, other, other, other):
        store.publish(PublishParams(type=event_type, payload={}))
    # Events of every type exist in the module's database; only the subscriber's count.
    flt = ReplayFilter(subscriber=sub)
    plan = ops_events.replay(store, flt, dry_run=True)
    assert (plan.events, plan.subscribers, plan.deliveries, plan.dry_run) == (2, 1, 2, True)
    done = ops_events.replay(store, flt)
    assert (done.events, done.subscribers, done.deliveries, done.dry_run) == (2, 1, 2, False)
