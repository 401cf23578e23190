"""``AdminStore`` search filters added for the console's bulk verbs (payload
containment, DAG run, age) and the ``throughput`` read, on both backends."""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qctl_kit.errors import InvalidInput
from qctl_store import jsonb
from qctl_store.types import (
    KIND_SIGNAL,
    DAGDep,
    DAGParams,
    DAGTask,
    EnqueueParams,
    EventFilter,
    JobSearch,
    JobState,
    PublishParams,
    Source,
)
from tests.conformance.helpers import (
    REAP_LEASE,
    REAP_WAIT,
    TICK,
    AnyStore,
    enqueue_due,
    job_ids,
    lease_one,
    token,
    unique,
)

Q = Source.QUEUE

# (payload, needle, contained) as PostgreSQL's jsonb @> answers them.
CONTAINMENT = [
    ({"customer": "42", "n": 1}, {"customer": "42"}, True),
    ({"customer": "42"}, {"customer": 42}, False),
    ({"n": 1}, {"n": 1.0}, True),
    ({"flag": True}, {"flag": 1}, False),
    ({"a": {"b": {"c": 1, "d": 2}}}, {"a": {"b": {"c": 1}}}, True),
    ({"a": ["x", "y"]}, {"a": ["y"]}, True),
    ({"a": ["x"]}, {"a": "x"}, False),
    (["x", "y"], "x", True),
    ([["x"]], ["x"], False),
    ([1, [2, 3]], [[2]], True),
    ([{"a": 1, "b": 2}], [{"a": 1}], True),
    ({"a": 1}, {}, True),
    ({"a": 1}, [], False),
    ({"a": None}, {"a": None}, True),
    ({"a": 1}, {"b": None}, False),
]


def test_jsonb_contains_agrees_with_postgres_semantics() -> None:
    for payload, needle, contained in CONTAINMENT:
        assert jsonb.contains(payload, needle) is contained, (payload, needle)


def test_search_jobs_payload_containment(store: AnyStore) -> None:
    kind = unique("sx_payload")
    ids = [_enqueue(store, kind, payload) for payload, _, _ in CONTAINMENT]
    for i, (_, needle, contained) in enumerate(CONTAINMENT):
        got = set(job_ids(store.search_jobs(JobSearch(kind=kind, payload=needle), limit=100)))
        expected = {
            ids[j]
            for j, (payload, _, _) in enumerate(CONTAINMENT)
            if jsonb.contains(payload, needle)
        }
        assert got == expected, needle
        assert (ids[i] in got) is contained
        assert store.count_jobs(JobSearch(kind=kind, payload=needle), exact=True) == (
            len(expected),
            False,
        )


def _enqueue(store: AnyStore, kind: str, payload: Any) -> uuid.UUID:
    p = EnqueueParams(kind=kind, payload=payload)
    assert store.enqueue(p)
    return p.id


def test_payload_filter_combines_with_kind_state_and_paging(store: AnyStore) -> None:
    kind = unique("sx_payload_ks")
    mine = [_enqueue(store, kind, {"customer": "42", "i": i}) for i in range(5)]
    for i in range(3):
        _enqueue(store, kind, {"customer": "7", "i": i})
    _enqueue(store, unique("sx_payload_other"), {"customer": "42"})
    search = JobSearch(source=Q, kind=kind, state=JobState.PENDING, payload={"customer": "42"})
    first = store.search_jobs(search, limit=3)
    rest = store.search_jobs(search, limit=3, after=store.job_cursor(first[-1], search.state))
    paged = job_ids(first) + job_ids(rest)
    assert len(paged) == len(set(paged)) == 5 and set(paged) == set(mine)
    assert store.search_jobs(JobSearch(kind=kind, state=JobState.DEAD, payload={})) == []


def test_bad_payload_filter_is_invalid_input(store: AnyStore) -> None:
    with pytest.raises(InvalidInput):
        store.search_jobs(JobSearch(payload={"x": float("nan")}))


def test_search_jobs_filters_by_dag_id(store: AnyStore) -> None:
    kind = unique("sx_dag_task")
    dags = [DAGParams(id=uuid.uuid4(), name=unique("sx_dag")) for _ in range(2)]
    for p in dags:
        p.tasks = [DAGTask(key="a", kind=kind), DAGTask(key="b", kind=kind)]
        p.deps = [DAGDep(task_key="b", depends_on_key="a")]
        assert store.create_dag(p)[0]
    got = store.search_jobs(JobSearch(dag_id=dags[0].id))
    assert {j.task_key for j in got} == {"a", "b"}
    assert {j.dag_id for j in got} == {dags[0].id}
    blocked = store.search_jobs(JobSearch(dag_id=dags[0].id, state=JobState.BLOCKED))
    assert [j.task_key for j in blocked] == ["b"]
    assert store.search_jobs(JobSearch(dag_id=uuid.uuid4())) == []
    assert store.count_jobs(JobSearch(dag_id=dags[1].id), exact=True) == (2, False)


def test_search_jobs_older_than_is_on_enqueued_at(store: AnyStore) -> None:
    kind = unique("sx_age")
    ids = [enqueue_due(store, kind) for _ in range(3)]
    time.sleep(TICK * 5)
    assert set(job_ids(store.search_jobs(JobSearch(kind=kind, older_than=timedelta(0))))) == set(
        ids
    )
    assert store.search_jobs(JobSearch(kind=kind, older_than=timedelta(hours=1))) == []
    assert store.count_jobs(JobSearch(kind=kind, older_than=timedelta(hours=1)), exact=True) == (
        0,
        False,
    )
    with pytest.raises(InvalidInput):
        store.search_jobs(JobSearch(kind=kind, older_than=timedelta(seconds=-1)))


# --- throughput ----------------------------------------------------------------------------


def _totals(rows: list[Any]) -> dict[str, int]:
    return {
        m: sum(getattr(r, m) for r in rows) for m in ("enqueued", "processed", "failed", "reaped")
    }


def test_throughput_counts_each_measure_in_its_bucket(store: AnyStore) -> None:
    kind = unique("sx_tp")
    for _ in range(5):
        enqueue_due(store, kind)
    acked = lease_one(store, Q, kind)
    store.ack(acked.id, token(acked))
    dead = lease_one(store, Q, kind)
    store.dead(dead.id, token(dead), "boom")
    retried = lease_one(store, Q, kind)
    store.reschedule(retried.id, token(retried), timedelta(hours=1), "again")
    lease_one(store, Q, kind, lease=REAP_LEASE)
    time.sleep(REAP_WAIT)
    assert store.reap_expired(Q, [kind], 1) == (1, 1)  # a reap budget of one kills it

    rows = store.throughput(Q, timedelta(hours=1), timedelta(minutes=1), kind=kind)
    assert len(rows) == 60 and {r.kind for r in rows} == {kind}
    starts = [r.start for r in rows]
    assert starts == sorted(starts) and all(s.second == 0 and s.tzinfo for s in starts)
    assert all(b - a == timedelta(minutes=1) for a, b in itertools.pairwise(starts))
    assert starts[-1] <= datetime.now(UTC) < starts[-1] + timedelta(minutes=2)
    # The reaped job died: it is no longer counted as enqueued in a live state but in dead.
    assert _totals(rows) == {"enqueued": 5, "processed": 1, "failed": 2, "reaped": 1}
    assert sum(1 for r in rows if r.enqueued) in (1, 2)  # all within a minute (or two)

    every = store.throughput(Q, timedelta(hours=1), timedelta(hours=1))
    assert _totals([r for r in every if r.kind == kind]) == _totals(rows)
    assert len([r for r in every if r.kind == kind]) == 1


def test_throughput_of_a_quiet_kind_is_zero_filled(store: AnyStore) -> None:
    rows = store.throughput(Q, timedelta(minutes=30), timedelta(minutes=10), kind=unique("sx_q"))
    assert len(rows) == 3
    assert _totals(rows) == {"enqueued": 0, "processed": 0, "failed": 0, "reaped": 0}


@pytest.mark.parametrize(
    ("window", "bucket"),
    [
        (timedelta(hours=1), timedelta(0)),
        (timedelta(hours=1), timedelta(milliseconds=1500)),
        (timedelta(0), timedelta(minutes=1)),
        (timedelta(days=30), timedelta(seconds=1)),
        (timedelta(hours=-1), timedelta(minutes=1)),
    ],
)
def test_throughput_bad_window_is_invalid_input(
    store: AnyStore, window: timedelta, bucket: timedelta
) -> None:
    with pytest.raises(InvalidInput):
        store.throughput(Q, window, bucket)


def test_list_events_filters_by_aggregate(store: AnyStore) -> None:
    etype = unique("evt.sx_agg")
    agg = unique("agg")
    mine = PublishParams(type=etype, payload={}, aggregate_type="order", aggregate_id=agg)
    other_type = PublishParams(type=etype, payload={}, aggregate_type="invoice", aggregate_id=agg)
    for p in (mine, other_type, PublishParams(type=etype, payload={}, aggregate_type="order")):
        store.publish(p)
    rows, total = store.list_events(EventFilter(aggregate_type="order", aggregate_id=agg))
    assert ([r.id for r in rows], total) == ([mine.id], 1)
    rows, total = store.list_events(EventFilter(type=etype, aggregate_id=agg))
    assert ({r.id for r in rows}, total) == ({mine.id, other_type.id}, 2)
    assert store.list_events(EventFilter(aggregate_id=unique("none")))[1] == 0


def test_search_jobs_reverse_pages_dead_jobs_newest_first(store: AnyStore) -> None:
    kinds = [unique("sx_rev_a"), unique("sx_rev_b")]
    dead = []
    for i in range(6):
        kind = kinds[i % 2]
        enqueue_due(store, kind)
        job = lease_one(store, Q, kind)
        store.dead(job.id, token(job), "boom")
        dead.append(job.id)
        time.sleep(TICK)
    for search in (
        JobSearch(source=Q, kind=kinds[0], state=JobState.DEAD),
        JobSearch(source=Q, state=JobState.DEAD),  # across kinds: merged per-kind ranges
    ):
        oldest = [j.id for j in _all_pages(store, search) if j.id in dead]
        newest = [j.id for j in _all_pages(store, replace(search, reverse=True)) if j.id in dead]
        assert newest == oldest[::-1] and set(newest) == (
            set(dead) if not search.kind else set(dead[0::2])
        )


def _all_pages(store: AnyStore, search: JobSearch) -> list[Any]:
    out: list[Any] = []
    after = None
    while True:
        page = store.search_jobs(search, limit=2, after=after)
        out.extend(page)
        if len(page) < 2:
            return out
        after = store.job_cursor(page[-1], search.state)


def test_search_jobs_free_text_is_kind_error_or_id(store: AnyStore) -> None:
    kind = unique("sx_text_Mailer")
    enqueue_due(store, kind)
    job = lease_one(store, Q, kind)
    store.dead(job.id, token(job), "SMTP 50%_refused")
    other = enqueue_due(store, unique("sx_text_other"))

    def found(text: str) -> set[uuid.UUID]:
        return set(job_ids(store.search_jobs(JobSearch(source=Q, text=text), limit=0)))

    assert job.id in found(kind.upper()[3:]), "a kind substring, any case"
    assert found("50%_REF") == {job.id}, "error text, any case, % and _ literal"
    assert found("0%x") == set(), "% is no wildcard"
    assert found(job.id.hex[5:17]) == {job.id}, "hex digits across a dash"
    assert found(str(job.id)[2:20].upper()) == {job.id}, "with dashes, any case"
    assert other not in found(job.id.hex[5:17])
    count, _ = store.count_jobs(JobSearch(source=Q, state=JobState.DEAD, text=job.id.hex[3:13]))
    assert count == 1


def test_throughput_enqueued_counts_blocked_and_waiting_dag_tasks(store: AnyStore) -> None:
    kind = unique("sx_tp_dag")
    hour = timedelta(hours=1)

    def enqueued(k: str) -> int:
        return _totals(store.throughput(Source.DAG, hour, hour, kind=k))["enqueued"]

    waits_before = enqueued(KIND_SIGNAL)
    dag = DAGParams(
        name=unique("sx_tp_dag"),
        tasks=[
            DAGTask(key="a", kind=kind),  # pending
            DAGTask(key="b", kind=kind),  # blocked on a
            DAGTask(key="approve", kind=KIND_SIGNAL),  # waiting for its signal
        ],
        deps=[DAGDep(task_key="b", depends_on_key="a")],
    )
    store.create_dag(dag)
    states = sorted(j.state.value for j in store.dag_tasks(dag.id))
    assert states == ["blocked", "pending", "waiting"]
    assert enqueued(kind) == 2, "the pending and the blocked task"
    assert enqueued(KIND_SIGNAL) == waits_before + 1, "the waiting task"
    # Other sources have no blocked or waiting jobs: their series is unchanged by them.
    assert _totals(store.throughput(Q, hour, hour, kind=kind))["enqueued"] == 0


def test_throughput_history_survives_a_later_pause_or_skip(store: AnyStore) -> None:
    kind = unique("sx_tp_hist")
    hour = timedelta(hours=1)
    store.tune()  # PostgreSQL reads paused and skipped jobs on the console's indexes
    assert store.throughput_omits() == []
    enqueue_due(store, kind)
    skipped = lease_one(store, Q, kind)
    store.skip(skipped.id, token(skipped), "not needed")
    paused = [enqueue_due(store, kind) for _ in range(2)]
    before = _totals(store.throughput(Q, hour, hour, kind=kind))
    assert before["enqueued"] == 3
    for job_id in paused:
        store.pause_job(Q, job_id)
    assert _totals(store.throughput(Q, hour, hour, kind=kind)) == before
