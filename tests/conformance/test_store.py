"""azync's ``RunConformance`` (``driver/drivertest/conformance.go``) on both backends.

One test per checklist bullet, in azync's order (Enqueue, Dequeue, Settlement, Snooze,
RunNow, ReapExpired, PromoteDue, Publish, DeleteSubscriber, Replay, Retain, Admin,
ListJobsOrdering, Vacuums, NukeAll), sharing the module's store like the Go suite. Each
test passes alone and in any order: tests stay apart by unique kinds and subscriber
names; where a call acts on the whole store, the test works where no other test's rows
are (``RETAIN_ERA``) or on a store of its own (``solo_store``).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from qctl_kit.errors import Conflict, NotFound, UniqueViolation
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    Depths,
    DequeueParams,
    EnqueueParams,
    EventFilter,
    JobFilter,
    JobState,
    PublishParams,
    ReplayFilter,
    Source,
)
from tests.conformance.helpers import (
    MINUTE,
    REAP_LEASE,
    REAP_WAIT,
    TICK,
    AnyStore,
    dequeue_n,
    enqueue_due,
    enqueue_spaced,
    host_now,
    job_ids,
    lease_one,
    list_ids,
    subscribe,
    token,
)
from tests.conftest import raw_pg, raw_sqlite

Q = Source.QUEUE
E = Source.EVENT
HOUR = timedelta(hours=1)


def state_of(store: AnyStore, id: uuid.UUID, source: Source = Q) -> JobState:
    return store.get_job(source, id).state


# --- Enqueue -------------------------------------------------------------------------------


def test_enqueue_pending_vs_scheduled(store: AnyStore) -> None:
    pending_id = enqueue_due(store, "enq_ps")
    scheduled = EnqueueParams(kind="enq_ps", payload={}, run_at=host_now() + HOUR)
    assert store.enqueue(scheduled) is True
    assert state_of(store, pending_id) == JobState.PENDING
    assert state_of(store, scheduled.id) == JobState.SCHEDULED


def test_enqueue_dedupe_live_rejects_duplicate(store: AnyStore) -> None:
    first = EnqueueParams(kind="enq_live", payload={}, idempotency_key="k_live")
    assert store.enqueue(first) is True
    second = EnqueueParams(kind="enq_live", payload={}, idempotency_key="k_live")
    assert store.enqueue(second) is False, "a live idempotency key rejects the duplicate"


def test_enqueue_dedupe_ttl_window_survives_ack(store: AnyStore) -> None:
    ttl = timedelta(seconds=30)
    first = EnqueueParams(kind="enq_ttl", payload={}, idempotency_key="k_ttl", idempotency_ttl=ttl)
    assert store.enqueue(first) is True
    job = lease_one(store, Q, "enq_ttl")
    store.ack(job.id, token(job))
    again = EnqueueParams(kind="enq_ttl", payload={}, idempotency_key="k_ttl", idempotency_ttl=ttl)
    assert store.enqueue(again) is False, "the TTL window still holds the key after success"


def test_enqueue_run_at_wins_over_delay(store: AnyStore) -> None:
    p = EnqueueParams(
        kind="enq_runat", payload={}, run_at=host_now() + HOUR, delay=timedelta(milliseconds=1)
    )
    assert store.enqueue(p) is True
    got = store.get_job(Q, p.id)
    assert got.state == JobState.SCHEDULED, "RunAt (far future) wins over Delay"
    assert got.run_at is not None and got.run_at > host_now() + timedelta(minutes=30)


# --- DequeueBatch --------------------------------------------------------------------------


def test_dequeue_order_run_at_then_id(store: AnyStore) -> None:
    base = host_now()
    late, early, mid = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    for id, offset in ((late, -1), (early, -3), (mid, -2)):
        store.enqueue(
            EnqueueParams(id=id, kind="deq_order", payload={}, run_at=base + offset * HOUR)
        )
    leased = dequeue_n(store, Q, "deq_order", 10)
    assert job_ids(leased) == [early, mid, late], "ordered by run_at ascending"


def test_dequeue_only_its_source_and_kind(store: AnyStore) -> None:
    a_id = enqueue_due(store, "deq_iso_a")
    enqueue_due(store, "deq_iso_b")
    leased = dequeue_n(store, Q, "deq_iso_a", 10)
    assert job_ids(leased) == [a_id]
    assert leased[0].kind == "deq_iso_a"

    subscribe(store, "iso_s", "evt.iso")
    delivered = store.publish(PublishParams(type="evt.iso", occurred_at=host_now(), payload={}))
    assert delivered == 1
    assert dequeue_n(store, Q, "iso_s", 10) == [], "a queue dequeue never leases a delivery"
    assert len(dequeue_n(store, E, "iso_s", 10)) == 1, "an event dequeue leases the delivery"


def test_dequeue_attempt_is_1_based(store: AnyStore) -> None:
    enqueue_due(store, "deq_attempt")
    assert lease_one(store, Q, "deq_attempt").attempt == 1


def test_dequeue_lease_token_is_unique_and_non_nil(store: AnyStore) -> None:
    enqueue_due(store, "deq_token")
    enqueue_due(store, "deq_token")
    leased = dequeue_n(store, Q, "deq_token", 2)
    assert len(leased) == 2
    assert leased[0].lease_token is not None and leased[1].lease_token is not None
    assert leased[0].lease_token != leased[1].lease_token, "each lease mints a distinct token"


def test_dequeue_explicit_budget_survives_runtime_override(store: AnyStore) -> None:
    store.enqueue(
        EnqueueParams(kind="deq_bexp", payload={}, max_attempts=7, max_attempts_explicit=True)
    )
    leased = store.dequeue_batch(
        Q,
        DequeueParams(
            kind="deq_bexp", limit=1, lease=MINUTE, default_max_attempts=99, override_default=True
        ),
    )
    assert len(leased) == 1
    assert leased[0].max_attempts == 7, "an explicit budget is pinned against the runtime default"


def test_dequeue_runtime_default_resolves_durably_on_first_lease(store: AnyStore) -> None:
    store.enqueue(EnqueueParams(kind="deq_bovr", payload={}, max_attempts=3))
    first = store.dequeue_batch(
        Q,
        DequeueParams(
            kind="deq_bovr", limit=1, lease=MINUTE, default_max_attempts=42, override_default=True
        ),
    )
    assert len(first) == 1
    assert first[0].max_attempts == 42, "the first lease applies the runtime default"
    store.release(first[0].id, token(first[0]))
    second = store.dequeue_batch(
        Q,
        DequeueParams(
            kind="deq_bovr", limit=1, lease=MINUTE, default_max_attempts=7, override_default=True
        ),
    )
    assert len(second) == 1
    assert second[0].max_attempts == 42, "the resolved budget is durable"


# --- Settlement ----------------------------------------------------------------------------


def test_settlement_ack_retains_succeeded(store: AnyStore) -> None:
    id = enqueue_due(store, "set_ack")
    job = lease_one(store, Q, "set_ack")
    store.ack(job.id, token(job))
    got = store.get_job(Q, id)
    assert got.state == JobState.SUCCEEDED, "an acked job is retained, not deleted"
    assert got.completed_at is not None


def test_settlement_reschedule_parks_scheduled_and_records_history(store: AnyStore) -> None:
    id = enqueue_due(store, "set_resched")
    job = lease_one(store, Q, "set_resched")
    store.reschedule(job.id, token(job), HOUR, "transient")
    got = store.get_job(Q, id)
    assert got.state == JobState.SCHEDULED
    assert got.last_error == "transient"
    attempts = store.job_attempts(Q, id)
    assert [(a.attempt, a.error) for a in attempts] == [(1, "transient")]


def test_settlement_dead_records_final_attempt(store: AnyStore) -> None:
    id = enqueue_due(store, "set_dead")
    job = lease_one(store, Q, "set_dead")
    store.dead(job.id, token(job), "fatal")
    assert state_of(store, id) == JobState.DEAD
    attempts = store.job_attempts(Q, id)
    assert len(attempts) == 1
    assert attempts[0].error == "fatal"


def test_settlement_release_returns_to_pending_attempt_minus_1_without_history(
    store: AnyStore,
) -> None:
    id = enqueue_due(store, "set_release")
    job = lease_one(store, Q, "set_release")
    assert job.attempt == 1
    store.release(job.id, token(job))
    got = store.get_job(Q, id)
    assert got.state == JobState.PENDING
    assert got.attempt == 0, "Release hands back the attempt it did not spend"
    assert store.job_attempts(Q, id) == [], "Release records no attempt history"


def test_settlement_stale_token_is_fenced_on_all_five_transitions(store: AnyStore) -> None:
    id = enqueue_due(store, "set_stale")
    stale = token(lease_one(store, Q, "set_stale", REAP_LEASE))
    time.sleep(REAP_WAIT)
    reaped, _ = store.reap_expired(Q, ["set_stale"], 5)
    assert reaped == 1
    current = lease_one(store, Q, "set_stale")
    assert token(current) != stale

    with pytest.raises(NotFound):
        store.ack(id, stale)
    with pytest.raises(NotFound):
        store.reschedule(id, stale, timedelta(seconds=1), "x")
    with pytest.raises(NotFound):
        store.dead(id, stale, "x")
    with pytest.raises(NotFound):
        store.release(id, stale)
    with pytest.raises(NotFound):
        store.extend_lease(id, stale, timedelta(seconds=1))
    store.ack(id, token(current))  # the current token still owns the job


def test_settlement_extend_lease_renews_the_deadline(store: AnyStore) -> None:
    id = enqueue_due(store, "set_extend")
    job = lease_one(store, Q, "set_extend", timedelta(milliseconds=100))
    store.extend_lease(job.id, token(job), timedelta(seconds=30))
    got = store.get_job(Q, id)
    assert got.lease_until is not None and job.lease_until is not None
    assert got.lease_until > job.lease_until, "the lease deadline moved further out"


# --- Snooze --------------------------------------------------------------------------------


def test_snooze_reschedules_without_consuming_the_attempt(store: AnyStore) -> None:
    id = enqueue_due(store, "snz_basic")
    job = lease_one(store, Q, "snz_basic")
    assert job.attempt == 1
    deadlined = store.snooze(job.id, token(job), HOUR, "budget exceeded")
    assert deadlined is False, "a job without a snooze budget never deadlines"
    got = store.get_job(Q, id)
    assert got.state == JobState.SCHEDULED
    assert got.attempt == 0, "snooze hands back the attempt"
    assert got.run_at is not None and got.run_at > host_now() + timedelta(minutes=30)
    assert store.job_attempts(Q, id) == [], "snooze records no attempt history"


def test_snooze_stale_token_is_fenced(store: AnyStore) -> None:
    id = enqueue_due(store, "snz_fence")
    job = lease_one(store, Q, "snz_fence")
    store.ack(job.id, token(job))
    with pytest.raises(NotFound):
        store.snooze(id, token(job), MINUTE, "budget exceeded")
    assert state_of(store, id) == JobState.SUCCEEDED, "the earlier Ack stands"


def test_snooze_a_zero_delay_is_immediately_due_again(store: AnyStore) -> None:
    id = enqueue_due(store, "snz_due")
    job = lease_one(store, Q, "snz_due")
    store.snooze(job.id, token(job), timedelta(0), "budget exceeded")
    assert store.promote_due(Q, ["snz_due"]) == 1
    again = lease_one(store, Q, "snz_due")
    assert again.id == id
    assert again.attempt == 1, "the snoozed lease never counted"


# --- RunNow --------------------------------------------------------------------------------


def test_run_now_expedites_a_snoozed_job(store: AnyStore) -> None:
    id = enqueue_due(store, "rn_snoozed")
    job = lease_one(store, Q, "rn_snoozed")
    store.snooze(job.id, token(job), HOUR, "budget exceeded")
    assert state_of(store, id) == JobState.SCHEDULED
    store.run_now(Q, id)
    assert state_of(store, id) == JobState.PENDING
    assert lease_one(store, Q, "rn_snoozed").id == id, "immediately leasable"


def test_run_now_is_not_found_for_active_succeeded_pending_and_missing(store: AnyStore) -> None:
    id = enqueue_due(store, "rn_guard")
    job = lease_one(store, Q, "rn_guard")
    with pytest.raises(NotFound):
        store.run_now(Q, id)  # active
    store.ack(job.id, token(job))
    with pytest.raises(NotFound):
        store.run_now(Q, id)  # succeeded
    pending_id = enqueue_due(store, "rn_pending")
    with pytest.raises(NotFound):
        store.run_now(Q, pending_id)
    with pytest.raises(NotFound):
        store.run_now(Q, uuid.uuid4())


# --- ReapExpired ---------------------------------------------------------------------------


def test_reap_expired_lease_returns_to_pending_with_reap_count_plus_1(store: AnyStore) -> None:
    id = enqueue_due(store, "reap_pending")
    lease_one(store, Q, "reap_pending", REAP_LEASE)
    time.sleep(REAP_WAIT)
    assert store.reap_expired(Q, ["reap_pending"], 5) == (1, 0)
    got = store.get_job(Q, id)
    assert got.state == JobState.PENDING
    assert got.reap_count == 1


def test_reap_reaching_max_reaps_kills_to_dead_with_history(store: AnyStore) -> None:
    id = enqueue_due(store, "reap_dead")
    lease_one(store, Q, "reap_dead", REAP_LEASE)
    time.sleep(REAP_WAIT)
    assert store.reap_expired(Q, ["reap_dead"], 1) == (1, 1)
    assert state_of(store, id) == JobState.DEAD
    assert len(store.job_attempts(Q, id)) == 1, "the reap-to-dead transition records an attempt"


def test_reap_a_re_leased_job_is_not_reaped(store: AnyStore) -> None:
    id = enqueue_due(store, "reap_fence")
    lease_one(store, Q, "reap_fence", REAP_LEASE)
    time.sleep(REAP_WAIT)
    reaped, _ = store.reap_expired(Q, ["reap_fence"], 5)
    assert reaped == 1
    live = lease_one(store, Q, "reap_fence")
    again, _ = store.reap_expired(Q, ["reap_fence"], 5)
    assert again == 0, "a re-leased job whose lease has not expired is left alone"
    got = store.get_job(Q, id)
    assert got.state == JobState.ACTIVE
    assert got.lease_token == live.lease_token, "the live lease token is untouched"


# --- PromoteDue ----------------------------------------------------------------------------


def test_promote_due_promotes_only_the_requested_kinds(store: AnyStore) -> None:
    def make_due_scheduled(kind: str) -> uuid.UUID:
        id = enqueue_due(store, kind)
        job = lease_one(store, Q, kind)
        store.reschedule(job.id, token(job), timedelta(0), "park as scheduled")
        assert state_of(store, id) == JobState.SCHEDULED
        return id

    a_id = make_due_scheduled("promo_a")
    b_id = make_due_scheduled("promo_b")
    assert store.promote_due(Q, ["promo_a"]) == 1, "only the requested kind is promoted"
    assert state_of(store, a_id) == JobState.PENDING
    assert state_of(store, b_id) == JobState.SCHEDULED


# --- Publish -------------------------------------------------------------------------------


def test_publish_fan_out_one_delivery_per_subscriber(store: AnyStore) -> None:
    for name in ("fo_a", "fo_b", "fo_c"):
        subscribe(store, name, "evt.fanout")
    p = PublishParams(type="evt.fanout", occurred_at=host_now(), payload={})
    assert store.publish(p) == 3


def test_publish_subscriber_registered_after_publish_receives_nothing(store: AnyStore) -> None:
    subscribe(store, "snap_a", "evt.snap")
    p = PublishParams(type="evt.snap", occurred_at=host_now(), payload={})
    assert store.publish(p) == 1, "only the subscribers at publish time are fanned out"
    subscribe(store, "snap_b", "evt.snap")
    assert dequeue_n(store, E, "snap_b", 10) == []


def test_publish_delivery_job_carries_the_subscriber_kind_and_a_nil_payload(
    store: AnyStore,
) -> None:
    subscribe(store, "pnil_s", "evt.pnil")
    p = PublishParams(type="evt.pnil", occurred_at=host_now(), payload={"a": 1})
    store.publish(p)
    job = lease_one(store, E, "pnil_s")
    assert job.source == Source.EVENT
    assert job.kind == "pnil_s"
    assert job.event_id == p.id
    assert job.payload is None, "the body lives in the ledger, not on the delivery"


def test_publish_dequeue_rehydrates_the_full_event_record(store: AnyStore) -> None:
    subscribe(store, "cmpl_s", "evt.complete")
    occurred = host_now()  # already microsecond precision, like Go's Truncate(µs)
    p = PublishParams(
        type="evt.complete",
        aggregate_type="order",
        aggregate_id="agg-123",
        version=7,
        occurred_at=occurred,
        payload={"k": "v"},
        meta={"m1": "v1"},
    )
    store.publish(p)
    rec = lease_one(store, E, "cmpl_s").event
    assert rec is not None, "the event is rehydrated on dequeue"
    assert rec.id == p.id
    assert rec.type == "evt.complete"
    assert rec.aggregate_type == "order"
    assert rec.aggregate_id == "agg-123"
    assert rec.version == 7
    assert rec.occurred_at == occurred, "OccurredAt round-trips to the microsecond"
    assert rec.payload == {"k": "v"}
    assert rec.meta == {"m1": "v1"}


def test_publish_rehydrated_meta_is_never_nil(store: AnyStore) -> None:
    subscribe(store, "metanil_s", "evt.metanil")
    store.publish(PublishParams(type="evt.metanil", occurred_at=host_now(), payload={}))
    rec = lease_one(store, E, "metanil_s").event
    assert rec is not None
    assert rec.meta == {}
    assert isinstance(rec.meta, dict)


# --- DeleteSubscriber ----------------------------------------------------------------------


def test_delete_subscriber_removes_one_registration(store: AnyStore) -> None:
    for event_type in ("evt.delsub1", "evt.delsub2"):
        subscribe(store, "delsub_a", event_type)
    assert store.delete_subscriber("delsub_a", "evt.delsub1") == 1
    assert store.subscribers("evt.delsub1") == []
    assert len(store.subscribers("evt.delsub2")) == 1, "the other registration survives"


def test_delete_subscriber_no_match_is_a_no_op(store: AnyStore) -> None:
    assert store.delete_subscriber("delsub_never_registered", "evt.delsub1") == 0


def test_delete_subscriber_empty_event_type_removes_every_registration(store: AnyStore) -> None:
    for event_type in ("evt.delsub3", "evt.delsub4"):
        subscribe(store, "delsub_b", event_type)
    assert store.delete_subscriber("delsub_b", "") == 2
    assert store.subscribers("evt.delsub3") == []
    assert store.subscribers("evt.delsub4") == []


# --- Replay --------------------------------------------------------------------------------


@dataclass
class ReplaySetup:
    e1: uuid.UUID
    base: datetime


@pytest.fixture(scope="module")
def replay_setup(store: AnyStore) -> ReplaySetup:
    """Subscribers rp_a and rp_b on evt.replay; e1 at now-2h, e2 an hour later."""
    subscribe(store, "rp_a", "evt.replay")
    subscribe(store, "rp_b", "evt.replay")
    base = host_now() - 2 * HOUR
    e1 = PublishParams(type="evt.replay", occurred_at=base, payload={})
    store.publish(e1)
    store.publish(PublishParams(type="evt.replay", occurred_at=base + HOUR, payload={}))
    return ReplaySetup(e1.id, base)


def test_replay_subscriber_filter_replays_each_matching_event(
    store: AnyStore, replay_setup: ReplaySetup
) -> None:
    assert store.replay(ReplayFilter(subscriber="rp_a")) == 2, "rp_a only, any event type"


def test_replay_limit_caps_ledger_events_not_deliveries(
    store: AnyStore, replay_setup: ReplaySetup
) -> None:
    assert store.replay(ReplayFilter(event_type="evt.replay", limit=1)) == 2, (
        "one ledger event, fanned out to both subscribers"
    )


def test_replay_since_is_inclusive_lower_bound(store: AnyStore, replay_setup: ReplaySetup) -> None:
    since = replay_setup.base + timedelta(minutes=30)
    assert store.replay(ReplayFilter(event_type="evt.replay", since=since)) == 2, "only e2"


def test_replay_until_is_inclusive_upper_bound(store: AnyStore, replay_setup: ReplaySetup) -> None:
    until = replay_setup.base + timedelta(minutes=30)
    assert store.replay(ReplayFilter(event_type="evt.replay", until=until)) == 2, "only e1"


def test_replay_event_id_selects_one_event(store: AnyStore, replay_setup: ReplaySetup) -> None:
    assert store.replay(ReplayFilter(event_id=replay_setup.e1)) == 2


def test_replay_leaves_originals_and_flags_replays(
    store: AnyStore, replay_setup: ReplaySetup
) -> None:
    assert store.replay(ReplayFilter(subscriber="rp_a", event_id=replay_setup.e1)) == 1
    jobs, _ = store.list_jobs(E, JobFilter(kind="rp_a"), 0, 0)
    assert sum(1 for j in jobs if not j.replay) == 2, "the original deliveries are untouched"
    assert any(j.replay for j in jobs), "replayed deliveries are flagged replay=True"


# --- Retain --------------------------------------------------------------------------------


RETAIN_ERA = datetime(2001, 1, 1, tzinfo=UTC)
"""The retain tests' events occur long before every other test's, so a cutoff of theirs
covers no other test's events; retain itself is store-wide."""


@dataclass
class RetainSetup:
    event: uuid.UUID
    subscriber: str
    cutoff: datetime


@pytest.fixture
def retain_setup(store: AnyStore) -> RetainSetup:
    """One event of the retain era with one pending delivery to a subscriber of its own;
    the cutoff is a minute later. The other retain-era events are left with a pending
    delivery or deleted, so none but this one is retainable before the cutoff."""
    suffix = uuid.uuid4().hex[:8]
    subscriber = f"ret_s_{suffix}"
    subscribe(store, subscriber, f"evt.retain.{suffix}")
    p = PublishParams(type=f"evt.retain.{suffix}", occurred_at=RETAIN_ERA, payload={})
    store.publish(p)
    return RetainSetup(p.id, subscriber, RETAIN_ERA + timedelta(minutes=1))


def test_retain_a_pending_delivery_blocks_retention(
    store: AnyStore, retain_setup: RetainSetup
) -> None:
    assert store.retain(retain_setup.cutoff, 10) == 0, "an in-flight delivery blocks retention"


def test_retain_trims_the_event_once_its_deliveries_are_terminal(
    store: AnyStore, retain_setup: RetainSetup
) -> None:
    delivery = lease_one(store, E, retain_setup.subscriber)
    store.ack(delivery.id, token(delivery))
    assert store.retain(retain_setup.cutoff, 10) == 1, "exactly this event in the whole store"
    with pytest.raises(NotFound):
        store.get_event(retain_setup.event)
    with pytest.raises(NotFound):
        store.get_job(E, delivery.id)  # the delivery cascades with its event


# --- Admin ---------------------------------------------------------------------------------


def test_admin_kind_depths_counts_per_state(store: AnyStore) -> None:
    enqueue_due(store, "adm_depth")
    enqueue_due(store, "adm_depth")
    store.enqueue(EnqueueParams(kind="adm_depth", payload={}, run_at=host_now() + HOUR))
    depths = store.kind_depths(Q)["adm_depth"]
    assert depths.pending == 2
    assert depths.scheduled == 1


def test_admin_kind_depths_reports_the_oldest_pending_age(store: AnyStore) -> None:
    past = host_now() - timedelta(milliseconds=500)
    store.enqueue(EnqueueParams(kind="adm_depth_age", payload={}, run_at=past))
    enqueue_due(store, "adm_depth_age")  # a later due job must not shrink the age
    age = store.kind_depths(Q)["adm_depth_age"].oldest_pending_age
    assert timedelta(milliseconds=400) < age < timedelta(seconds=30)


def test_admin_kind_depths_reports_zero_age_once_nothing_is_pending(store: AnyStore) -> None:
    id = enqueue_due(store, "adm_depth_nopending")
    job = lease_one(store, Q, "adm_depth_nopending")
    assert job.id == id
    store.ack(job.id, token(job))
    depths = store.kind_depths(Q).get("adm_depth_nopending", Depths())  # Go: zero value
    assert depths.oldest_pending_age == timedelta(0)


def test_admin_get_job_missing_is_not_found(store: AnyStore) -> None:
    with pytest.raises(NotFound):
        store.get_job(Q, uuid.uuid4())


def test_admin_retry_job_clears_attempt_and_reap_count(store: AnyStore) -> None:
    id = enqueue_due(store, "adm_retry")
    job = lease_one(store, Q, "adm_retry")
    store.dead(job.id, token(job), "boom")
    store.retry_job(Q, id)
    got = store.get_job(Q, id)
    assert got.state == JobState.PENDING
    assert got.attempt == 0
    assert got.reap_count == 0


def test_admin_pause_and_resume_honor_run_at(store: AnyStore) -> None:
    past_id = enqueue_due(store, "adm_pause")
    future = EnqueueParams(kind="adm_pause", payload={}, run_at=host_now() + HOUR)
    store.enqueue(future)
    store.pause_job(Q, past_id)
    store.pause_job(Q, future.id)
    assert state_of(store, past_id) == JobState.PAUSED
    assert state_of(store, future.id) == JobState.PAUSED
    store.resume_job(Q, past_id)
    store.resume_job(Q, future.id)
    assert state_of(store, past_id) == JobState.PENDING, "a due job resumes to pending"
    assert state_of(store, future.id) == JobState.SCHEDULED, "a future job resumes to scheduled"


def test_admin_delete_job_never_removes_an_active_job_through_the_wrong_state(
    store: AnyStore,
) -> None:
    id = enqueue_due(store, "adm_del")
    lease_one(store, Q, "adm_del")
    with pytest.raises(NotFound):
        store.delete_job(Q, id, JobState.PENDING)
    assert state_of(store, id) == JobState.ACTIVE


# --- ListJobs ordering ---------------------------------------------------------------------


def test_list_jobs_no_state_filter_orders_by_enqueued_at_descending(store: AnyStore) -> None:
    ids = enqueue_spaced(store, "ord_none", 3)
    assert list_ids(store, Q, "ord_none") == ids[::-1], "newest first"


def test_list_jobs_pending_orders_by_enqueued_at_ascending(store: AnyStore) -> None:
    ids = enqueue_spaced(store, "ord_pending", 3)
    assert list_ids(store, Q, "ord_pending", JobState.PENDING) == ids, "oldest first"


def test_list_jobs_dead_orders_by_enqueued_at_ascending_regardless_of_death_order(
    store: AnyStore,
) -> None:
    ids = enqueue_spaced(store, "ord_dead", 3)
    leased = dequeue_n(store, Q, "ord_dead", 3)
    assert len(leased) == 3
    tokens = {j.id: token(j) for j in leased}
    for i in (2, 0, 1):
        store.dead(ids[i], tokens[ids[i]], "boom")
    assert list_ids(store, Q, "ord_dead", JobState.DEAD) == ids, "enqueue order, not death order"


def _enqueue_run_at_offsets(store: AnyStore, kind: str, pause: bool) -> list[uuid.UUID]:
    """Jobs at +3h, +1h, +2h; returns their ids soonest run_at first."""
    base = host_now()
    ids = {hours: uuid.uuid4() for hours in (3, 1, 2)}
    for hours, id in ids.items():
        store.enqueue(EnqueueParams(id=id, kind=kind, payload={}, run_at=base + hours * HOUR))
        if pause:
            store.pause_job(Q, id)
    return [ids[1], ids[2], ids[3]]


def test_list_jobs_scheduled_orders_by_run_at_ascending(store: AnyStore) -> None:
    expected = _enqueue_run_at_offsets(store, "ord_scheduled", pause=False)
    assert list_ids(store, Q, "ord_scheduled", JobState.SCHEDULED) == expected


def test_list_jobs_paused_orders_by_run_at_ascending(store: AnyStore) -> None:
    expected = _enqueue_run_at_offsets(store, "ord_paused", pause=True)
    assert list_ids(store, Q, "ord_paused", JobState.PAUSED) == expected


def test_list_jobs_active_orders_by_lease_until_ascending(store: AnyStore) -> None:
    for _ in range(3):
        enqueue_due(store, "ord_active")
    by_lease = {
        secs: lease_one(store, Q, "ord_active", timedelta(seconds=secs)).id for secs in (30, 10, 20)
    }
    expected = [by_lease[10], by_lease[20], by_lease[30]]
    assert list_ids(store, Q, "ord_active", JobState.ACTIVE) == expected, "soonest lease first"


def test_list_jobs_succeeded_orders_by_completed_at_descending(store: AnyStore) -> None:
    for _ in range(3):
        enqueue_due(store, "ord_succeeded")
    leased = dequeue_n(store, Q, "ord_succeeded", 3)
    assert len(leased) == 3
    for job in leased:
        store.ack(job.id, token(job))
        time.sleep(TICK)
    expected = job_ids(leased)[::-1]
    assert list_ids(store, Q, "ord_succeeded", JobState.SUCCEEDED) == expected, "latest first"


# --- Vacuums -------------------------------------------------------------------------------


def test_vacuum_stats_retention_zero_is_a_no_op(store: AnyStore) -> None:
    enqueue_due(store, "vac_stats")  # writes a daily stat row
    assert store.vacuum_stats(Q, timedelta(0)) == 0, "a non-positive retention keeps everything"
    assert store.vacuum_stats(Q, timedelta(days=30)) == 0, "today is within any retention"


def test_vacuum_expired_idempotency_keys_are_trimmed(store: AnyStore) -> None:
    store.enqueue(
        EnqueueParams(
            kind="vac_idem",
            payload={},
            idempotency_key="k_vac",
            idempotency_ttl=timedelta(milliseconds=30),
        )
    )
    time.sleep(0.120)
    assert store.vacuum_idempotency(Q) >= 1, "the expired reservation is removed"


def test_vacuum_completed_retention_zero_is_a_no_op_and_a_positive_one_trims(
    store: AnyStore,
) -> None:
    id = enqueue_due(store, "vac_done")
    job = lease_one(store, Q, "vac_done")
    store.ack(job.id, token(job))
    assert store.vacuum_completed(Q, timedelta(0)) == 0, "retention 0 keeps succeeded jobs"
    time.sleep(0.050)
    assert store.vacuum_completed(Q, timedelta(milliseconds=1)) >= 1
    with pytest.raises(NotFound):
        store.get_job(Q, id)


# --- NukeAll -------------------------------------------------------------------------------


def test_nuke_all_wipes_the_source_and_leaves_the_ledger(solo_store: AnyStore) -> None:
    store = solo_store
    queue_id = enqueue_due(store, "adm_nuke_q")
    subscribe(store, "nuke_s", "evt.nuke")
    event = PublishParams(type="evt.nuke", occurred_at=host_now(), payload={})
    assert store.publish(event) == 1

    report = store.nuke_all(Q)
    assert report.jobs == 1
    with pytest.raises(NotFound):
        store.get_job(Q, queue_id)
    store.get_event(event.id)  # the ledger is intact
    assert len(dequeue_n(store, E, "nuke_s", 10)) == 1, "event deliveries are intact"


def test_nuke_all_is_one_transaction(solo_store: AnyStore) -> None:
    """As azync's NukeAll (``driver/azyncpgx/store_admin.go``): the jobs, stats and keys
    go together or not at all. Before, the jobs went in batches committed one by one,
    so a failure later left the source half deleted (and readers saw it shrink)."""
    store = solo_store
    ids = [enqueue_due(store, "nuke_tx") for _ in range(3)]
    keyed = EnqueueParams(
        kind="nuke_tx", payload={}, idempotency_key="k", idempotency_ttl=timedelta(hours=1)
    )
    assert store.enqueue(keyed)
    refuse_deleting_keys(store)
    with pytest.raises(Exception, match="refused"):
        store.nuke_all(Q)
    for id in [*ids, keyed.id]:
        assert store.get_job(Q, id).state == JobState.PENDING


def refuse_deleting_keys(store: AnyStore) -> None:
    """A trigger that fails every delete of an idempotency key (the last step of a nuke)."""
    if isinstance(store, PostgresStore):
        with raw_pg(store.schema) as conn:
            conn.execute(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused'; END $$"
            )
            conn.execute(
                "CREATE TRIGGER refuse BEFORE DELETE ON azync_idempotency_keys "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )
        return
    with raw_sqlite(store.path) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE DELETE ON azync_idempotency_keys "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )


# --- Beyond RunConformance: further facts of azync's store (driver/azyncpgx/store_*.go) ----


def test_also_replay_limit_zero_means_the_driver_bound(store: AnyStore) -> None:
    subscribe(store, "also_rp_s", "evt.also_replay")
    for _ in range(3):
        store.publish(PublishParams(type="evt.also_replay", payload={}))
    assert store.replay(ReplayFilter(event_type="evt.also_replay", limit=0)) == 3
    jobs, total = store.list_jobs(E, JobFilter(kind="also_rp_s"), 0, 0)
    assert total == 6
    assert sorted(j.replay for j in jobs) == [False] * 3 + [True] * 3
    assert {j.state for j in jobs} == {JobState.PENDING}, "replays are new pending deliveries"


def test_also_retain_is_oldest_first_strictly_before_and_counts_dead_as_terminal(
    store: AnyStore,
) -> None:
    now = RETAIN_ERA + timedelta(days=1)  # after the other retain tests' cutoffs
    subscribe(store, "also_ret_s", "evt.also_ret_dead")
    dead_event = PublishParams(type="evt.also_ret_dead", occurred_at=now - 4 * HOUR, payload={})
    store.publish(dead_event)
    delivery = lease_one(store, E, "also_ret_s")
    store.dead(delivery.id, token(delivery), "boom")
    no_delivery = PublishParams(type="evt.also_ret_none", occurred_at=now - 3 * HOUR, payload={})
    store.publish(no_delivery)
    recent = PublishParams(type="evt.also_ret_none", occurred_at=now - HOUR, payload={})
    store.publish(recent)
    cutoff = now - timedelta(minutes=90)

    assert store.retain(cutoff, 1) == 1, "limit caps the events trimmed"
    with pytest.raises(NotFound):
        store.get_event(dead_event.id)  # the oldest went first, with its dead delivery
    with pytest.raises(NotFound):
        store.get_job(E, delivery.id)
    assert store.retain(cutoff, 10) == 1, "an event with no deliveries is retainable"
    with pytest.raises(NotFound):
        store.get_event(no_delivery.id)
    store.get_event(recent.id)  # after the cutoff: kept
    assert store.retain(recent.occurred_at, 10) == 0, "before is exclusive"  # type: ignore[arg-type]


def test_also_list_jobs_skipped_orders_by_completed_at_descending(store: AnyStore) -> None:
    for _ in range(3):
        enqueue_due(store, "also_ord_skipped")
    leased = dequeue_n(store, Q, "also_ord_skipped", 3)
    for job in leased:
        store.skip(job.id, token(job), "not needed")
        time.sleep(TICK)
    assert list_ids(store, Q, "also_ord_skipped", JobState.SKIPPED) == job_ids(leased)[::-1]


def test_also_list_jobs_offset_limit_and_total(store: AnyStore) -> None:
    ids = enqueue_spaced(store, "also_page", 4)
    jobs, total = store.list_jobs(Q, JobFilter(kind="also_page"), 1, 2)
    assert total == 4
    assert job_ids(jobs) == [ids[2], ids[1]]
    jobs, total = store.list_jobs(Q, JobFilter(kind="also_page"), -5, 1)
    assert (job_ids(jobs), total) == ([ids[3]], 4), "a negative offset is 0"


def test_also_skip_settles_terminal_and_is_fenced(store: AnyStore) -> None:
    id = enqueue_due(store, "also_skip")
    job = lease_one(store, Q, "also_skip")
    store.skip(job.id, token(job), "nothing to do")
    got = store.get_job(Q, id)
    assert (got.state, got.last_error) == (JobState.SKIPPED, "nothing to do")
    assert got.completed_at is not None
    assert store.job_attempts(Q, id) == []
    with pytest.raises(NotFound):
        store.skip(job.id, token(job), "again")


def test_also_archive_pause_delete_match_their_states(store: AnyStore) -> None:
    pending = enqueue_due(store, "also_admin")
    store.archive_job(Q, pending)
    assert state_of(store, pending) == JobState.DEAD
    assert store.job_attempts(Q, pending) == [], "archive writes no attempt row"
    active = enqueue_due(store, "also_admin_active")
    lease_one(store, Q, "also_admin_active")
    for verb in (store.archive_job, store.pause_job, store.resume_job, store.retry_job):
        with pytest.raises(NotFound):
            verb(Q, active)
    store.delete_job(Q, pending, JobState.DEAD)
    with pytest.raises(NotFound):
        store.get_job(Q, pending)
    with pytest.raises(NotFound):
        store.delete_job(Q, pending, JobState.DEAD)


def test_also_retry_all_dead_with_an_empty_kind_spans_kinds(solo_store: AnyStore) -> None:
    store = solo_store
    ids = []
    for kind in ("also_rad_a", "also_rad_b"):
        ids.append(enqueue_due(store, kind))
        job = lease_one(store, Q, kind)
        store.dead(job.id, token(job), "boom")
    assert store.retry_all_dead(Q, "also_rad_a") == 1
    assert store.retry_all_dead(Q, "") == 1, "the other kind's dead job"
    assert [state_of(store, id) for id in ids] == [JobState.PENDING] * 2


def test_also_daily_stats_count_what_azync_counts(store: AnyStore) -> None:
    kind = "also_stats"
    for _ in range(4):
        enqueue_due(store, kind)
    jobs = dequeue_n(store, Q, kind, 4)
    store.ack(jobs[0].id, token(jobs[0]))
    store.skip(jobs[1].id, token(jobs[1]), "skip")
    store.dead(jobs[2].id, token(jobs[2]), "boom")
    store.reschedule(jobs[3].id, token(jobs[3]), HOUR, "later")
    with pytest.raises(NotFound):  # a fencing miss bumps nothing
        store.ack(jobs[0].id, token(jobs[0]))
    depths, daily = store.stats(Q, kind)
    assert (depths.succeeded, depths.dead, depths.scheduled) == (1, 1, 1)
    totals = [sum(getattr(d, c) for d in daily) for c in ("enqueued", "processed", "failed")]
    assert totals == [4, 2, 2], "enqueued 4; ack and skip processed; dead, reschedule failed"
    subscribe(store, "also_stats_s", "evt.also_stats")
    store.publish(PublishParams(type="evt.also_stats", payload={}))
    assert sum(d.enqueued for d in store.stats(E, "also_stats_s")[1]) == 0, "publish is not"


def test_also_reap_kill_records_why_and_clears_the_lease(store: AnyStore) -> None:
    id = enqueue_due(store, "also_reap_kill")
    lease_one(store, Q, "also_reap_kill", REAP_LEASE)
    time.sleep(REAP_WAIT)
    assert store.reap_expired(Q, ["also_reap_kill"], 1) == (1, 1)
    got = store.get_job(Q, id)
    assert (got.last_error, got.reap_count) == ("lease expired 1 times", 1)
    assert got.failed_at is not None
    assert (got.lease_token, got.lease_until) == (None, None)
    assert [(a.attempt, a.error) for a in store.job_attempts(Q, id)] == [
        (1, "lease expired 1 times")
    ]
    assert store.reap_expired(Q, [], 1) == (0, 0), "no kinds, nothing to do"


def test_also_lease_fields_are_set_on_dequeue_and_cleared_on_release(store: AnyStore) -> None:
    id = enqueue_due(store, "also_lease")
    job = lease_one(store, Q, "also_lease")
    assert job.started_at is not None and job.lease_until is not None
    assert store.get_job(Q, id).max_attempts_explicit, "the first lease pins the budget"
    store.release(job.id, token(job))
    got = store.get_job(Q, id)
    assert (got.lease_token, got.lease_until) == (None, None)
    assert got.run_at is not None and got.run_at <= host_now() + timedelta(seconds=5)


def test_also_retry_job_clears_the_failure(store: AnyStore) -> None:
    id = enqueue_due(store, "also_retry")
    job = lease_one(store, Q, "also_retry")
    store.dead(job.id, token(job), "boom")
    store.retry_job(Q, id)
    got = store.get_job(Q, id)
    assert (got.last_error, got.failed_at, got.started_at) == ("", None, None)
    assert len(store.job_attempts(Q, id)) == 1, "the history is kept"
    with pytest.raises(NotFound):
        store.retry_job(Q, id)  # pending now, not dead


def _settled_with_key(store: AnyStore, kind: str, key: str, settle: str) -> None:
    assert store.enqueue(EnqueueParams(kind=kind, payload={}, idempotency_key=key))
    job = lease_one(store, Q, kind)
    if settle == "ack":
        store.ack(job.id, token(job))
    elif settle == "dead":
        store.dead(job.id, token(job), "boom")
    else:
        store.skip(job.id, token(job), "skip")


@pytest.mark.parametrize(("settle", "frees"), [("ack", True), ("dead", True), ("skip", False)])
def test_also_live_key_is_held_until_succeeded_or_dead(
    store: AnyStore, settle: str, frees: bool
) -> None:
    kind = f"also_key_{settle}"
    _settled_with_key(store, kind, "k", settle)
    again = store.enqueue(EnqueueParams(kind=kind, payload={}, idempotency_key="k"))
    assert again is frees, "skipped still holds the live key (azync's index predicate)"


def test_also_an_expired_ttl_key_can_be_claimed_again(store: AnyStore) -> None:
    ttl = timedelta(milliseconds=30)
    p = EnqueueParams(kind="also_ttl", payload={}, idempotency_key="k", idempotency_ttl=ttl)
    assert store.enqueue(p)
    job = lease_one(store, Q, "also_ttl")
    store.ack(job.id, token(job))
    time.sleep(0.100)
    again = EnqueueParams(kind="also_ttl", payload={}, idempotency_key="k", idempotency_ttl=ttl)
    assert store.enqueue(again) is True
    other_kind = EnqueueParams(
        kind="also_ttl_other", payload={}, idempotency_key="k", idempotency_ttl=HOUR
    )
    assert store.enqueue(other_kind) is True, "keys are per kind"


def test_also_deliveries_take_the_subscriber_budget(store: AnyStore) -> None:
    subscribe(store, "also_budget_s", "evt.also_budget", max_attempts=5)
    store.publish(PublishParams(type="evt.also_budget", payload={}))
    leased = store.dequeue_batch(
        E,
        DequeueParams(kind="also_budget_s", limit=1, default_max_attempts=9, override_default=True),
    )
    assert [(j.max_attempts, j.replay) for j in leased] == [(5, False)]
    subscribe(store, "also_budget_s", "evt.also_budget", max_attempts=2)  # an upsert
    assert [s.max_attempts for s in store.subscribers("evt.also_budget")] == [2]


def test_also_events_admin_views(store: AnyStore) -> None:
    subscribe(store, "also_ev_s", "evt.also_ev")
    base = host_now() - timedelta(minutes=37)  # no other test publishes at this offset
    old = PublishParams(type="evt.also_ev", occurred_at=base, payload={"n": 1}, meta={"m": "1"})
    new = PublishParams(type="evt.also_ev2", occurred_at=base + timedelta(minutes=1), payload=[])
    store.publish(old)
    store.publish(new)

    got = store.get_event(old.id)
    assert (got.type, got.payload, got.meta, got.deliveries) == (
        "evt.also_ev",
        {"n": 1},
        {"m": "1"},
        1,
    )
    assert got.dispatched_at == got.occurred_at == base, "dispatched when it has deliveries"
    undelivered = store.get_event(new.id)
    assert (undelivered.deliveries, undelivered.dispatched_at, undelivered.payload) == (0, None, [])

    window = EventFilter(since=base, until=base + timedelta(minutes=1))
    rows, total = store.list_events(window, 0, 0)
    assert ([r.id for r in rows], total) == ([new.id, old.id], 2), "newest first"
    assert [r.id for r in store.list_events(EventFilter(type="evt.also_ev"), 0, 0)[0]] == [old.id]
    undispatched = EventFilter(since=base, until=base + timedelta(minutes=1), undispatched=True)
    assert [r.id for r in store.list_events(undispatched, 0, 0)[0]] == [new.id]
    with pytest.raises(NotFound):
        store.get_event(uuid.uuid4())


def test_also_delete_all_and_vacuum_dead_are_scoped(store: AnyStore) -> None:
    kind = "also_scoped"
    keep = enqueue_due(store, kind)
    dead_ids = []
    for _ in range(2):
        dead_ids.append(enqueue_due(store, kind, run_at=host_now() - HOUR))
        job = lease_one(store, Q, kind)
        store.dead(job.id, token(job), "boom")
    enqueue_due(store, "also_scoped_other")
    assert store.vacuum_dead(Q, kind, HOUR) == 0, "enqueued just now: younger than an hour"
    assert store.vacuum_dead(Q, kind, timedelta(0)) == 2
    assert list_ids(store, Q, kind) == [keep]
    assert store.delete_all(Q, kind, JobState.PENDING) == 1
    assert list_ids(store, Q, kind) == []
    assert len(list_ids(store, Q, "also_scoped_other")) == 1


def test_also_a_repeated_id_is_a_unique_violation_and_writes_nothing(store: AnyStore) -> None:
    job = EnqueueParams(kind="also_dup_id", payload={})
    assert store.enqueue(job)
    with pytest.raises(UniqueViolation) as raised:
        store.enqueue(EnqueueParams(kind="also_dup_id", payload={"second": True}, id=job.id))
    assert isinstance(raised.value, Conflict), "a unique violation is a Conflict"
    assert [j.payload for j in store.list_jobs(Q, JobFilter(kind="also_dup_id"), 0, 0)[0]] == [{}]

    subscribe(store, "also_dup_s", "evt.also_dup")
    event = PublishParams(type="evt.also_dup", payload={})
    assert store.publish(event) == 1
    with pytest.raises(UniqueViolation):
        store.publish(PublishParams(type="evt.also_dup", payload={}, id=event.id))
    assert store.list_jobs(E, JobFilter(kind="also_dup_s"), 0, 0)[1] == 1, "no second fan-out"


def test_also_nuke_all_reports_jobs_stats_and_keys(solo_store: AnyStore) -> None:
    store = solo_store
    p = EnqueueParams(kind="also_nuke", payload={}, idempotency_key="k", idempotency_ttl=HOUR)
    assert store.enqueue(p)
    report = store.nuke_all(Q)
    assert (report.jobs, report.stats, report.keys) == (1, 1, 1)
    assert store.list_jobs(Q, JobFilter(), 0, 0) == ([], 0)
    again = EnqueueParams(kind="also_nuke", payload={}, idempotency_key="k", idempotency_ttl=HOUR)
    assert store.enqueue(again) is True, "the TTL reservations went too"
