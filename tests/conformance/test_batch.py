"""The batch extension (``BatchStore``) on both backends: ``enqueue_many`` and
``enqueue_many_tx`` behave as ``enqueue`` repeated in input order inside one transaction
(live-key and TTL dedupe within and across batches, the backend clock, stats, one wake
per kind), and ``ack_many`` fences every job on its own token."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import psycopg
import pytest

from qctl_kit.errors import InvalidInput, NotFound, ReadOnly
from qctl_store import contract
from qctl_store.postgres import PostgresStore
from qctl_store.types import EnqueueParams, Job, JobState, Source
from tests.conformance.helpers import (
    MINUTE,
    AnyStore,
    dequeue_n,
    enqueue_due,
    host_now,
    token,
    unique,
)
from tests.conftest import PG_DSN, StoreFactory

HOUR = timedelta(hours=1)

pg_only = pytest.mark.parametrize("backend", ["postgres"], indirect=True)
"""search_path and NOTIFY are PostgreSQL's (SQLite wakes come from its change log)."""


def enqueued(store: AnyStore, kind: str) -> int:
    return sum(d.enqueued for d in store.stats(Source.QUEUE, kind)[1])


def processed(store: AnyStore, kind: str) -> int:
    return sum(d.processed for d in store.stats(Source.QUEUE, kind)[1])


def state_of(store: AnyStore, id: uuid.UUID) -> JobState:
    return store.get_job(Source.QUEUE, id).state


def missing(store: AnyStore, id: uuid.UUID) -> bool:
    try:
        store.get_job(Source.QUEUE, id)
    except NotFound:
        return True
    return False


@contextmanager
def caller_tx(store: AnyStore, commit: bool = True) -> Iterator[object]:
    """The application's own connection with a transaction open on it (PostgreSQL:
    default search_path; SQLite: ``BEGIN IMMEDIATE`` on the same file)."""
    if isinstance(store, PostgresStore):
        with psycopg.connect(PG_DSN) as pg:
            yield pg
            if commit:
                pg.commit()
            else:
                pg.rollback()
        return
    lite = sqlite3.connect(store.path, isolation_level=None)
    try:
        lite.execute("BEGIN IMMEDIATE")
        yield lite
        lite.execute("COMMIT" if commit else "ROLLBACK")
    finally:
        lite.close()


def keyed_batch(kind: str) -> list[EnqueueParams]:
    """Every dedupe case in one batch: live keys repeated, TTL keys repeated, a live key
    after and before a TTL key of the same name, keyless jobs, delays and run_at."""
    now = host_now()

    def job(key: str = "", ttl: timedelta = timedelta(0), **kw: object) -> EnqueueParams:
        return EnqueueParams(kind=kind, idempotency_key=key, idempotency_ttl=ttl, **kw)  # type: ignore[arg-type]

    return [
        job("live"),
        job("live"),
        job(),
        job("ttl", HOUR),
        job("ttl", HOUR),
        job("ttl"),  # live dedupe against the TTL job's live row
        job("mixed"),
        job("mixed", HOUR),  # claims the window, then meets the live row
        job("mixed", HOUR),
        job("sched", delay=HOUR),
        job("sched", HOUR),
        job(run_at=now - MINUTE),
        job(run_at=now + HOUR),
    ]


def test_the_backends_implement_the_batch_extension(store: AnyStore) -> None:
    assert isinstance(store, contract.BatchStore)


def test_enqueue_many_inserts_in_order_with_pending_and_scheduled(store: AnyStore) -> None:
    kind = unique("bm_plain")
    now = host_now()
    ps = [
        EnqueueParams(kind=kind, payload={"n": 1}),
        EnqueueParams(kind=kind, payload={"n": 2}, delay=HOUR),
        EnqueueParams(kind=kind, payload={"n": 3}, run_at=now - MINUTE),
        EnqueueParams(kind=kind, payload={"n": 4}, run_at=now + HOUR, meta={"a": "b"}),
    ]
    assert store.enqueue_many(ps) == [True] * 4
    jobs = {p.id: store.get_job(Source.QUEUE, p.id) for p in ps}
    assert [jobs[p.id].state for p in ps] == [
        JobState.PENDING,
        JobState.SCHEDULED,
        JobState.PENDING,
        JobState.SCHEDULED,
    ]
    assert [jobs[p.id].payload for p in ps] == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]
    assert jobs[ps[3].id].meta == {"a": "b"}
    assert jobs[ps[3].id].run_at == ps[3].run_at
    # delay resolves on the backend clock, which is close to the host's here
    assert abs(jobs[ps[1].id].run_at - (now + HOUR)) < MINUTE
    assert enqueued(store, kind) == 4
    depths = store.kind_depths(Source.QUEUE)[kind]
    assert (depths.pending, depths.scheduled) == (2, 2)


def test_a_batch_dedupes_like_one_enqueue_after_another(store: AnyStore) -> None:
    batch_kind, single_kind = unique("bm_batch"), unique("bm_single")
    flags = store.enqueue_many(keyed_batch(batch_kind))
    one_by_one = [store.enqueue(p) for p in keyed_batch(single_kind)]
    assert flags == one_by_one
    assert flags[:9] == [True, False, True, True, False, False, True, False, False]
    assert flags[9:] == [True, False, True, True]
    assert enqueued(store, batch_kind) == flags.count(True) == enqueued(store, single_kind)
    a = store.kind_depths(Source.QUEUE)[batch_kind]
    b = store.kind_depths(Source.QUEUE)[single_kind]
    assert (a.pending, a.scheduled) == (b.pending, b.scheduled) == (5, 2)


def test_dedupe_holds_across_batches_and_frees_a_live_key_when_it_ends(store: AnyStore) -> None:
    kind = unique("bm_across")
    first = store.enqueue_many(keyed_batch(kind))
    again = store.enqueue_many(keyed_batch(kind))
    # Every keyed job meets the first batch's live row or TTL claim; keyless ones go in.
    assert again == [False] * 2 + [True] + [False] * 8 + [True, True]
    assert enqueued(store, kind) == first.count(True) + 3
    # A live key is free again once its job succeeded; the TTL window still holds.
    (job,) = [j for j in dequeue_n(store, Source.QUEUE, kind, 10) if j.idempotency_key == "live"]
    store.ack(job.id, token(job))
    assert store.enqueue_many(
        [
            EnqueueParams(kind=kind, idempotency_key="live"),
            EnqueueParams(kind=kind, idempotency_key="ttl", idempotency_ttl=HOUR),
        ]
    ) == [True, False]


def test_an_expired_ttl_window_is_claimed_again_by_the_first_of_the_batch(
    store: AnyStore,
) -> None:
    kind = unique("bm_expired")
    short = timedelta(milliseconds=1)
    assert store.enqueue_many(
        [EnqueueParams(kind=kind, idempotency_key="w", idempotency_ttl=short)]
    )
    (job,) = dequeue_n(store, Source.QUEUE, kind, 1)
    store.ack(job.id, token(job))  # the live row ends; only the window is left
    time.sleep(0.005)  # and it has expired
    again = [
        EnqueueParams(kind=kind, idempotency_key="w", idempotency_ttl=HOUR),
        EnqueueParams(kind=kind, idempotency_key="w", idempotency_ttl=HOUR),
    ]
    assert store.enqueue_many(again) == [True, False]


def test_enqueue_many_tx_commits_and_rolls_back_with_the_caller(store: AnyStore) -> None:
    kind = unique("bm_tx")
    kept = [EnqueueParams(kind=kind, idempotency_key="k"), EnqueueParams(kind=kind)]
    with caller_tx(store) as conn:
        assert store.enqueue_many_tx(conn, kept) == [True, True]
        # the caller's transaction sees its own batch and dedupes against it
        assert store.enqueue_many_tx(conn, [EnqueueParams(kind=kind, idempotency_key="k")]) == [
            False
        ]
        assert missing(store, kept[0].id)  # not visible before the commit
    assert all(state_of(store, p.id) == JobState.PENDING for p in kept)
    dropped = [EnqueueParams(kind=kind), EnqueueParams(kind=kind, delay=HOUR)]
    with caller_tx(store, commit=False) as conn:
        assert store.enqueue_many_tx(conn, dropped) == [True, True]
    assert all(missing(store, p.id) for p in dropped)
    assert enqueued(store, kind) == 2


@pg_only
def test_enqueue_tx_leaves_the_callers_search_path_as_it_was(store: AnyStore) -> None:
    with caller_tx(store) as conn:
        assert isinstance(conn, psycopg.Connection)
        before = conn.execute("SHOW search_path").fetchone()
        assert store.enqueue_many_tx(conn, [EnqueueParams(kind=unique("bm_path"))]) == [True]
        assert conn.execute("SHOW search_path").fetchone() == before


def test_an_empty_batch_is_a_no_op(store: AnyStore) -> None:
    assert store.enqueue_many([]) == []
    assert store.ack_many([]) == []
    with caller_tx(store) as conn:
        assert store.enqueue_many_tx(conn, []) == []


PAYLOADS = [
    None,
    {},
    {"nested": {"list": [1, 2.5, None, True], "text": 'é \u2603 "quoted" \\ \n'}},
    [1, "two", {"three": 3}],
    "a string",
    2**70,
    -0.125,
    False,
]
"""One of every JSON shape, escapes and an integer past 64 bits included."""


def test_every_json_payload_and_meta_comes_back_as_it_was_sent(store: AnyStore) -> None:
    kind = unique("bm_json")
    meta = {"trace": "t-1", "quote": '"\\', "unicode": "ü"}
    ps = [EnqueueParams(kind=kind, payload=payload, meta=meta) for payload in PAYLOADS]
    alone = [EnqueueParams(kind=kind, payload=payload) for payload in PAYLOADS]
    assert store.enqueue_many(ps) == [True] * len(ps)
    assert [store.enqueue(p) for p in alone] == [True] * len(alone)
    got = {p.id: store.get_job(Source.QUEUE, p.id) for p in ps + alone}
    assert [got[p.id].payload for p in ps] == PAYLOADS
    assert [got[p.id].payload for p in alone] == PAYLOADS
    assert all(got[p.id].meta == meta for p in ps)
    assert all(got[p.id].meta == {} for p in alone)


def test_bad_input_anywhere_in_a_batch_writes_nothing(store: AnyStore) -> None:
    kind = unique("bm_bad")
    good = EnqueueParams(kind=kind)
    for bad in (
        EnqueueParams(kind=""),
        EnqueueParams(kind=kind, delay=-MINUTE),
        EnqueueParams(kind=kind, payload={"x": float("nan")}),
        EnqueueParams(kind=kind, id=good.id),  # the same id twice
    ):
        with pytest.raises(InvalidInput):
            store.enqueue_many([good, bad])
        with caller_tx(store, commit=True) as conn, pytest.raises(InvalidInput):
            store.enqueue_many_tx(conn, [good, bad])
    with pytest.raises(InvalidInput, match=r"^payload is not JSON-serialisable"):
        store.enqueue_many([good, EnqueueParams(kind=kind, payload={"at": object()})])
    # a job the batch leaves out (its TTL window claimed by an earlier one) is checked too
    claimer = EnqueueParams(kind=kind, idempotency_key="k", idempotency_ttl=MINUTE)
    left_out = EnqueueParams(
        kind=kind, idempotency_key="k", idempotency_ttl=MINUTE, meta={"a": "\ud800"}
    )
    with pytest.raises(InvalidInput, match=r"^meta is not valid Unicode"):
        store.enqueue_many([claimer, left_out])
    assert missing(store, claimer.id)
    assert missing(store, good.id)
    assert kind not in store.kind_depths(Source.QUEUE)
    leased = lease_all(store, unique("bm_bad_ack"), 1)
    with pytest.raises(InvalidInput):
        store.ack_many([(leased[0].id, token(leased[0])), ("not-a-uuid", uuid.uuid4())])  # type: ignore[list-item]
    assert state_of(store, leased[0].id) == JobState.ACTIVE


def lease_all(store: AnyStore, kind: str, n: int) -> list[Job]:
    assert store.enqueue_many([EnqueueParams(kind=kind) for _ in range(n)]) == [True] * n
    jobs = dequeue_n(store, Source.QUEUE, kind, n)
    assert len(jobs) == n
    return jobs


def test_ack_many_settles_each_job_on_its_own_fence(store: AnyStore) -> None:
    kind = unique("bm_ack")
    a, b, c, d = lease_all(store, kind, 4)
    store.ack(c.id, token(c))  # already settled: its token no longer fences anything
    never = uuid.uuid4()
    pairs = [
        (b.id, token(b)),
        (a.id, uuid.uuid4()),  # stale token
        (c.id, token(c)),
        (never, uuid.uuid4()),  # no such job
        (d.id, token(d)),
        (b.id, token(b)),  # repeated: settles once
    ]
    assert store.ack_many(pairs) == [b.id, d.id]
    assert [state_of(store, j.id) for j in (a, b, c, d)] == [
        JobState.ACTIVE,
        JobState.SUCCEEDED,
        JobState.SUCCEEDED,
        JobState.SUCCEEDED,
    ]
    assert store.get_job(Source.QUEUE, b.id).lease_token is None
    assert processed(store, kind) == 3  # c by ack, b and d by ack_many
    assert store.ack_many(pairs) == []
    assert processed(store, kind) == 3
    assert store.ack_many([(a.id, token(a))]) == [a.id]
    assert processed(store, kind) == 4


def test_ack_many_refuses_a_token_from_an_earlier_lease(store: AnyStore) -> None:
    kind = unique("bm_stale")
    (first,) = lease_all(store, kind, 1)
    store.release(first.id, token(first))
    (second,) = dequeue_n(store, Source.QUEUE, kind, 1)
    assert second.id == first.id and token(second) != token(first)
    assert store.ack_many([(first.id, token(first))]) == []
    assert state_of(store, first.id) == JobState.ACTIVE
    assert store.ack_many([(second.id, token(second))]) == [second.id]


def test_ack_many_spans_kinds_and_counts_each(store: AnyStore) -> None:
    k1, k2 = unique("bm_k1"), unique("bm_k2")
    jobs = lease_all(store, k1, 3) + lease_all(store, k2, 2)
    assert sorted(store.ack_many([(j.id, token(j)) for j in jobs])) == sorted(j.id for j in jobs)
    assert (processed(store, k1), processed(store, k2)) == (3, 2)


def test_a_read_only_store_refuses_every_batch_write(
    store: AnyStore, store_factory: StoreFactory
) -> None:
    kind = unique("bm_ro")
    (job,) = lease_all(store, kind, 1)
    ro = store_factory(read_only=True)
    p = EnqueueParams(kind=kind)
    with pytest.raises(ReadOnly):
        ro.enqueue_many([p])
    with caller_tx(store, commit=False) as conn, pytest.raises(ReadOnly):
        ro.enqueue_many_tx(conn, [p])  # type: ignore[arg-type]
    with pytest.raises(ReadOnly):
        ro.ack_many([(job.id, token(job))])
    assert missing(store, p.id)
    assert state_of(store, job.id) == JobState.ACTIVE


# --- wakes (PostgreSQL: one NOTIFY per distinct kind, on commit) ---------------------


@pytest.fixture
def listener(store: AnyStore) -> Iterator[psycopg.Connection]:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'LISTEN "{store.config.channel}"')
        yield conn


def wakes(listener: psycopg.Connection, timeout: float) -> list[str]:
    return [n.payload for n in listener.notifies(timeout=timeout)]


@pg_only
def test_enqueue_many_wakes_each_kind_once(store: AnyStore, listener: psycopg.Connection) -> None:
    a, b, quiet = unique("bm_wa"), unique("bm_wb"), unique("bm_wq")
    assert store.enqueue_many([EnqueueParams(kind=quiet, idempotency_key="q")]) == [True]
    wakes(listener, 0.2)
    batch = [EnqueueParams(kind=a), EnqueueParams(kind=b, delay=HOUR), EnqueueParams(kind=a)]
    batch.append(EnqueueParams(kind=quiet, idempotency_key="q"))  # deduplicated: no wake
    assert store.enqueue_many(batch) == [True, True, True, False]
    got = [w for w in wakes(listener, 0.5) if w.startswith("queue:bm_w")]
    assert sorted(got) == sorted([f"queue:{a}", f"queue:{b}"])


@pg_only
def test_enqueue_many_tx_wakes_on_commit_only(
    store: AnyStore, listener: psycopg.Connection
) -> None:
    kind = unique("bm_wtx")
    with caller_tx(store, commit=False) as conn:
        assert store.enqueue_many_tx(conn, [EnqueueParams(kind=kind)]) == [True]
    assert f"queue:{kind}" not in wakes(listener, 0.3)
    with caller_tx(store) as conn:
        assert store.enqueue_many_tx(conn, [EnqueueParams(kind=kind)]) == [True]
        assert f"queue:{kind}" not in wakes(listener, 0.1)
    assert wakes(listener, 1.0).count(f"queue:{kind}") == 1


@pg_only
def test_single_enqueue_still_wakes_and_dedupes_quietly(
    store: AnyStore, listener: psycopg.Connection
) -> None:
    kind = unique("bm_w1")
    enqueue_due(store, kind, idempotency_key="one")
    assert wakes(listener, 1.0).count(f"queue:{kind}") == 1
    assert not store.enqueue(EnqueueParams(kind=kind, idempotency_key="one"))
    assert f"queue:{kind}" not in wakes(listener, 0.3)
