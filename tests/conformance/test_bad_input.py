"""Bad input is rejected at the API edge on both backends: each case raises
``InvalidInput`` with a message naming the offending parameter, and writes nothing
(every job, event, subscriber and daily counter of the store is the same afterwards)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from qctl_kit.errors import InvalidInput, NotFound
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import (
    JSON,
    DequeueParams,
    EnqueueParams,
    EventFilter,
    Job,
    JobFilter,
    PublishParams,
    Source,
    Subscriber,
)
from tests.conformance.helpers import (
    AnyStore,
    enqueue_due,
    lease_one,
    subscribe,
    token,
    unique,
)
from tests.conftest import PG_DSN, require_pg

NEG = timedelta(seconds=-1)
NAIVE = datetime(2030, 1, 1, 12, 0, 0)  # no tzinfo: ambiguous, must be refused

Call = Callable[[], object]


@dataclass
class Case:
    """``setup`` runs (and may write) before the snapshot; it returns the bad call."""

    setup: Callable[[AnyStore], Call]
    match: str
    """Case-insensitive regex the message must match: it names the parameter."""


def _leased(store: AnyStore) -> Job:
    kind = unique("bad_leased")
    enqueue_due(store, kind)
    return lease_one(store, Source.QUEUE, kind)


def _enqueue(**params: object) -> Callable[[AnyStore], Call]:
    def setup(store: AnyStore) -> Call:
        fields = {"kind": unique("bad_enq"), **params}
        p = EnqueueParams(**fields)  # type: ignore[arg-type]
        return lambda: store.enqueue(p)

    return setup


def _publish(**params: object) -> Callable[[AnyStore], Call]:
    def setup(store: AnyStore) -> Call:
        fields = {"type": unique("evt.bad"), **params}
        if fields["type"]:
            subscribe(store, unique("bad_sub"), str(fields["type"]))  # so a delivery would show
        p = PublishParams(**fields)  # type: ignore[arg-type]
        return lambda: store.publish(p)

    return setup


def _settle(call: Callable[[AnyStore, Job], object]) -> Callable[[AnyStore], Call]:
    def setup(store: AnyStore) -> Call:
        job = _leased(store)
        return lambda: call(store, job)

    return setup


def _dequeue(**params: object) -> Callable[[AnyStore], Call]:
    def setup(store: AnyStore) -> Call:
        fields = {"kind": unique("bad_deq"), **params}
        if str(fields["kind"]).strip():
            enqueue_due(store, str(fields["kind"]))  # so a lease would show
        p = DequeueParams(**fields)  # type: ignore[arg-type]
        return lambda: store.dequeue_batch(Source.QUEUE, p)

    return setup


def _call(fn: Callable[[AnyStore], object]) -> Callable[[AnyStore], Call]:
    return lambda store: lambda: fn(store)


def _nested(depth: int) -> JSON:
    doc: JSON = []
    for _ in range(depth):
        doc = [doc]
    return doc


class Unserialisable:
    """A plain object: JSON has no form for it."""


NON_JSON: dict[str, JSON] = {
    "set": {1, 2},
    "object": Unserialisable(),
    "nan": math.nan,
    "nested_nan": {"x": [1.0, math.inf]},
}

CASES: dict[str, Case] = {
    # empty kinds and names
    "enqueue_empty_kind": Case(_enqueue(kind=""), "kind"),
    "enqueue_blank_kind": Case(_enqueue(kind="   "), "kind"),
    "dequeue_empty_kind": Case(_dequeue(kind=""), "kind"),
    "publish_empty_type": Case(_publish(type=""), "type"),
    "subscriber_empty_name": Case(
        _call(lambda s: s.register_subscriber(Subscriber(name="", event_type="evt.x"))), "name"
    ),
    "subscriber_empty_event_type": Case(
        _call(lambda s: s.register_subscriber(Subscriber(name=unique("s"), event_type=""))),
        "type",
    ),
    # limits out of range
    "dequeue_limit_too_large": Case(_dequeue(limit=10**9), "limit"),
    "dequeue_limit_not_int": Case(_dequeue(limit="5"), "limit"),
    # negative durations
    "enqueue_negative_delay": Case(_enqueue(delay=NEG), "delay"),
    "enqueue_negative_ttl": Case(_enqueue(idempotency_key="k_neg", idempotency_ttl=NEG), "ttl"),
    "dequeue_negative_lease": Case(_dequeue(lease=NEG), "lease"),
    "reschedule_negative_delay": Case(
        _settle(lambda s, j: s.reschedule(j.id, token(j), NEG, "x")), "delay"
    ),
    "snooze_negative_delay": Case(
        _settle(lambda s, j: s.snooze(j.id, token(j), NEG, "x")), "delay"
    ),
    "extend_lease_negative": Case(
        _settle(lambda s, j: s.extend_lease(j.id, token(j), NEG)), "lease"
    ),
    "vacuum_completed_negative_retention": Case(
        _call(lambda s: s.vacuum_completed(Source.QUEUE, NEG)), "retention"
    ),
    "vacuum_stats_negative_retention": Case(
        _call(lambda s: s.vacuum_stats(Source.QUEUE, NEG)), "retention"
    ),
    "vacuum_dead_negative_age": Case(
        _call(lambda s: s.vacuum_dead(Source.QUEUE, "", NEG)), "older|retention|age"
    ),
    # naive datetimes
    "enqueue_naive_run_at": Case(_enqueue(run_at=NAIVE), "run_at|timezone"),
    "publish_naive_occurred_at": Case(_publish(occurred_at=NAIVE), "occurred_at|timezone"),
    "retain_naive_before": Case(_call(lambda s: s.retain(NAIVE, 10)), "before|timezone"),
    # payloads JSON cannot carry
    **{
        f"enqueue_payload_{name}": Case(_enqueue(payload=value), "payload|json")
        for name, value in NON_JSON.items()
    },
    **{
        f"publish_payload_{name}": Case(_publish(payload=value), "payload|json")
        for name, value in NON_JSON.items()
    },
    "enqueue_meta_not_strings": Case(_enqueue(meta={"n": 1}), "meta"),
    "enqueue_meta_not_a_dict": Case(_enqueue(meta=[("a", "b")]), "meta must map"),
    "enqueue_meta_empty_not_a_dict": Case(_enqueue(meta=""), "meta must map"),
    "enqueue_negative_max_attempts": Case(_enqueue(max_attempts=-1), "max_attempts must not"),
    "enqueue_max_attempts_bool": Case(_enqueue(max_attempts=True), "max_attempts must be an int"),
    "enqueue_max_attempts_too_large": Case(_enqueue(max_attempts=2**31), "max_attempts .*range"),
    "enqueue_tab_only_kind": Case(_enqueue(kind="\t\n"), "kind must be a non-empty"),
    # too much for one change hint (PostgreSQL's NOTIFY payload): checked before the insert
    "enqueue_kind_too_long": Case(_enqueue(kind="k" * 4000), "kind is too long"),
    "publish_type_too_long": Case(
        _call(lambda s: s.publish(PublishParams(type="e" * 4000))), "event type is too long"
    ),
    "enqueue_nested_too_deeply": Case(_enqueue(payload=_nested(100_000)), "nested too deeply"),
    # out of range for a column or for an instant
    "enqueue_delay_out_of_range": Case(_enqueue(delay=timedelta(days=10**6)), "delay"),
    "publish_version_out_of_int64": Case(_publish(version=2**63), "version"),
    # text without a UTF-8 form (a lone surrogate, as bytes decoded with surrogateescape give)
    "enqueue_kind_not_unicode": Case(_enqueue(kind="k\udcff"), "kind is not valid unicode"),
    "enqueue_payload_not_unicode": Case(_enqueue(payload={"a": "\ud800"}), "payload is not valid"),
    "enqueue_meta_not_unicode": Case(_enqueue(meta={"a": "\ud800"}), "meta is not valid unicode"),
    "enqueue_key_not_unicode": Case(_enqueue(idempotency_key="\udcff"), "idempotency key"),
    "publish_payload_not_unicode": Case(_publish(payload=["\ud800"]), "payload is not valid"),
    "dead_error_not_unicode": Case(
        _settle(lambda s, j: s.dead(j.id, token(j), "boom \udcff")), "text argument is not valid"
    ),
    # wrong argument types
    "enqueue_idempotency_key_not_string": Case(_enqueue(idempotency_key=5), "idempotency key"),
    "promote_due_kinds_a_string": Case(
        _call(lambda s: s.promote_due(Source.QUEUE, "email")), "kinds must be a list"
    ),
    "vacuum_dead_kind_not_string": Case(
        _call(lambda s: s.vacuum_dead(Source.QUEUE, 5, timedelta(0))), "kind must be a string"
    ),
}


def snapshot(store: AnyStore) -> object:
    """Everything a write could change, in a comparable form."""
    jobs = {
        source: sorted(
            (str(j.id), j.state, j.attempt, j.run_at, j.lease_until, j.lease_token, j.last_error)
            for j in store.list_jobs(source, JobFilter(), 0, 0)[0]
        )
        for source in (Source.QUEUE, Source.EVENT)
    }
    events = sorted(str(e.id) for e in store.list_events(EventFilter(), 0, 0)[0])
    subs = sorted((v.subscriber, v.event_type) for v in store.list_subscriber_views())
    daily = [
        (d.date, d.enqueued, d.processed, d.failed, d.reaped)
        for source in (Source.QUEUE, Source.EVENT)
        for d in store.all_daily(source)
    ]
    return jobs, events, subs, daily


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_input_is_rejected_and_writes_nothing(store: AnyStore, case: str) -> None:
    spec = CASES[case]
    bad_call = spec.setup(store)
    before = snapshot(store)
    with pytest.raises(InvalidInput, match=f"(?i){spec.match}"):
        bad_call()
    assert snapshot(store) == before, "a rejected call must not write anything"


def test_a_rejected_settlement_leaves_the_lease_usable(store: AnyStore) -> None:
    """A rejected settlement does not consume the lease: the owner can still ack."""
    job = _leased(store)
    with pytest.raises(InvalidInput):
        store.snooze(job.id, token(job), NEG, "x")
    store.ack(job.id, token(job))


@pytest.mark.parametrize(
    "field", ["schema", "notify_channel", "migrations_table"], ids=lambda f: str(f)
)
def test_config_identifiers_must_be_plain(field: str) -> None:
    with pytest.raises(InvalidInput, match=r"(?i)identifier"):
        Config(**{field: "x; drop"})  # type: ignore[arg-type]


def test_a_bad_schema_name_never_reaches_the_database(backend: str) -> None:
    """Both backends refuse the configuration before opening anything."""
    if backend == "postgres":
        require_pg()
        with pytest.raises(InvalidInput, match=r"(?i)schema"):
            PostgresStore(PG_DSN, Config(schema='x"; DROP SCHEMA public; --'))
    else:
        with pytest.raises(InvalidInput, match=r"(?i)schema"):
            SqliteStore(":memory:", Config(schema="x; drop"))


def test_edge_values_azync_accepts_are_not_invalid_input(store: AnyStore) -> None:
    """Zero limits and retentions are azync's documented no-ops, and a missing id is
    NotFound: none of them is a bad request."""
    assert store.dequeue_batch(Source.QUEUE, DequeueParams(kind=unique("k"), limit=0)) == []
    assert store.vacuum_completed(Source.QUEUE, timedelta(0)) == 0
    assert store.vacuum_stats(Source.QUEUE, timedelta(0)) == 0
    assert store.retain(datetime.now(UTC), 0) == 0
    with pytest.raises(NotFound):
        store.get_job(Source.QUEUE, uuid.uuid4())
