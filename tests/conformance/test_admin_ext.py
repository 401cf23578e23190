"""The console's ``AdminStore`` extensions on both backends: id lookup by unique prefix,
a job of any source by id, filtered job search with keyset pagination in
``list_jobs``' per-state order (pending jobs in lease order), and exact counts."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

import pytest

from qctl_kit.errors import NotFound
from qctl_store.types import (
    DAGParams,
    DAGTask,
    EnqueueParams,
    Job,
    JobFilter,
    JobSearch,
    JobState,
    PublishParams,
    ReplayFilter,
    ScheduleOperationParams,
    Source,
    WorkflowStartParams,
)
from tests.conformance.helpers import (
    TICK,
    AnyStore,
    dequeue_n,
    enqueue_due,
    host_now,
    job_ids,
    lease_one,
    subscribe,
    token,
    unique,
)

Q = Source.QUEUE
E = Source.EVENT


def ids_with_prefix(n: int) -> tuple[str, list[uuid.UUID]]:
    """``n`` random ids sharing a fresh 10-hex-digit prefix (``8 hex`` ``-`` ``2 hex``)."""
    head = secrets.token_hex(5)
    prefix = f"{head[:8]}-{head[8:]}"
    ids = sorted(uuid.UUID(prefix + str(uuid.uuid4())[len(prefix) :]) for _ in range(n))
    return prefix, ids


# --- find_ids_by_prefix --------------------------------------------------------------------


def _make_job(store: AnyStore, id: uuid.UUID) -> None:
    assert store.enqueue(EnqueueParams(id=id, kind="adx_prefix", payload={}))


def _make_event(store: AnyStore, id: uuid.UUID) -> None:
    store.publish(PublishParams(id=id, type="evt.adx_prefix", payload={}))


def _make_dag(store: AnyStore, id: uuid.UUID) -> None:
    inserted, _ = store.create_dag(
        DAGParams(id=id, name=unique("adx_dag"), tasks=[DAGTask(key="a", kind="adx_dag_task")])
    )
    assert inserted


def _make_workflow(store: AnyStore, id: uuid.UUID) -> None:
    inserted, _ = store.start_workflow(WorkflowStartParams(id=id, name=unique("adx_wf")))
    assert inserted


MAKERS: dict[str, Callable[[AnyStore, uuid.UUID], None]] = {
    "job": _make_job,
    "event": _make_event,
    "dag": _make_dag,
    "workflow": _make_workflow,
}


@pytest.mark.parametrize("entity", list(MAKERS))
def test_find_ids_by_prefix_unique_ambiguous_and_none(store: AnyStore, entity: str) -> None:
    prefix, ids = ids_with_prefix(3)
    for id in ids:
        MAKERS[entity](store, id)
    one = ids[0]

    # unique: the whole id, with or without dashes, and a long enough prefix of it
    assert store.find_ids_by_prefix(entity, str(one)) == [one]
    assert store.find_ids_by_prefix(entity, one.hex) == [one]
    assert store.find_ids_by_prefix(entity, str(one)[:23]) == [one]
    assert store.find_ids_by_prefix(entity, one.hex[:20]) == [one]
    # ambiguous: the shared prefix, dashed or not, every match (up to the limit)
    assert sorted(store.find_ids_by_prefix(entity, prefix)) == ids
    assert sorted(store.find_ids_by_prefix(entity, prefix.replace("-", ""))) == ids
    assert sorted(store.find_ids_by_prefix(entity, prefix[:8])) == ids
    assert len(store.find_ids_by_prefix(entity, prefix, limit=2)) == 2
    # none: a prefix no id of this entity has
    _, other = ids_with_prefix(1)
    assert store.find_ids_by_prefix(entity, str(other[0])[:11]) == []


def test_find_ids_by_prefix_is_scoped_to_the_entity(store: AnyStore) -> None:
    prefix, (id,) = ids_with_prefix(1)
    _make_job(store, id)
    assert store.find_ids_by_prefix("job", prefix) == [id]
    assert store.find_ids_by_prefix("event", prefix) == []
    assert store.find_ids_by_prefix("dag", prefix) == []
    assert store.find_ids_by_prefix("workflow", prefix) == []


# --- find_job ------------------------------------------------------------------------------


def test_find_job_finds_a_job_of_any_source(store: AnyStore) -> None:
    queue_id = enqueue_due(store, "adx_find_q")
    subscribe(store, "adx_find_s", "evt.adx_find")
    store.publish(PublishParams(type="evt.adx_find", payload={}))
    delivery = lease_one(store, E, "adx_find_s")
    inserted, _ = store.create_dag(
        DAGParams(name=unique("adx_find_dag"), tasks=[DAGTask(key="a", kind="adx_find_task")])
    )
    assert inserted
    (task,) = dequeue_n(store, Source.DAG, "adx_find_task", 1)

    got = store.find_job(queue_id)
    assert (got.id, got.source, got.kind) == (queue_id, Q, "adx_find_q")
    got = store.find_job(delivery.id)
    assert (got.source, got.kind, got.event_id) == (E, "adx_find_s", delivery.event_id)
    got = store.find_job(task.id)
    assert (got.source, got.task_key, got.dag_id) == (Source.DAG, "a", task.dag_id)
    with pytest.raises(NotFound):
        store.find_job(uuid.uuid4())


# --- search_jobs filters -------------------------------------------------------------------


def _dead(store: AnyStore, kind: str, error: str) -> uuid.UUID:
    """A dead job of ``kind``; due a day ago, so it is leased before any pending one."""
    id = enqueue_due(store, kind, run_at=host_now() - timedelta(days=1))
    job = lease_one(store, Q, kind)
    assert job.id == id
    store.dead(job.id, token(job), error)
    return id


def search_ids(store: AnyStore, **search: object) -> set[uuid.UUID]:
    return set(job_ids(store.search_jobs(JobSearch(**search), limit=1000)))  # type: ignore[arg-type]


def test_search_jobs_without_payload_reads_neither_payload_nor_result(store: AnyStore) -> None:
    kind = unique("adx_nopay")
    store.enqueue(EnqueueParams(kind=kind, payload={"big": "x" * 1000}, meta={"m": "1"}))
    search = JobSearch(source=Q, kind=kind)
    [full] = store.search_jobs(search)
    [light] = store.search_jobs(search, payload=False)
    assert full.payload == {"big": "x" * 1000}
    assert (light.payload, light.result) == (None, None)
    assert light == replace(full, payload=None, result=None)
    # The merged listing of one state across kinds (PostgreSQL) too.
    pending = store.search_jobs(JobSearch(source=Q, state=JobState.PENDING), 10_000, None, False)
    assert [j.payload for j in pending if j.kind == kind] == [None]


def test_search_jobs_filters_by_kind_and_state(store: AnyStore) -> None:
    kind = unique("adx_ks")
    pending = {enqueue_due(store, kind) for _ in range(2)}
    dead = _dead(store, kind, "boom")
    enqueue_due(store, unique("adx_ks_other"))
    assert search_ids(store, source=Q, kind=kind) == pending | {dead}
    assert search_ids(store, source=Q, kind=kind, state=JobState.PENDING) == pending
    assert search_ids(store, source=Q, kind=kind, state=JobState.DEAD) == {dead}
    assert search_ids(store, source=Q, kind=kind, state=JobState.ACTIVE) == set()


def test_search_jobs_without_a_source_spans_every_source(store: AnyStore) -> None:
    name = unique("adx_any")
    queue_id = enqueue_due(store, name)
    subscribe(store, name, "evt." + name)
    store.publish(PublishParams(type="evt." + name, payload={}))
    (delivery,) = store.list_jobs(E, JobFilter(kind=name), 0, 0)[0]
    assert search_ids(store, kind=name) == {queue_id, delivery.id}
    assert search_ids(store, source=E, kind=name) == {delivery.id}


def test_search_jobs_filters_by_meta_pairs(store: AnyStore) -> None:
    kind = unique("adx_meta")
    eu = enqueue_due(store, kind, meta={"tenant": "a", "region": "eu"})
    us = enqueue_due(store, kind, meta={"tenant": "a", "region": "us"})
    other = enqueue_due(store, kind, meta={"tenant": "b"})
    enqueue_due(store, kind)
    assert search_ids(store, kind=kind, meta={"tenant": "a"}) == {eu, us}
    assert search_ids(store, kind=kind, meta={"tenant": "a", "region": "eu"}) == {eu}
    assert search_ids(store, kind=kind, meta={"tenant": "a", "region": "ap"}) == set()
    assert search_ids(store, kind=kind, meta={"tenant": "b"}) == {other}


def test_search_jobs_error_is_a_case_insensitive_literal_substring(store: AnyStore) -> None:
    kind = unique("adx_err")
    refused = _dead(store, kind, "Connection REFUSED by upstream")
    percent = _dead(store, kind, "disk 50% full")
    digits = _dead(store, kind, "disk 505 full")
    under = _dead(store, kind, "bad_key")
    _dead(store, kind, "badXkey")
    assert search_ids(store, kind=kind, error="refused") == {refused}
    assert search_ids(store, kind=kind, error="connection refused BY") == {refused}
    assert search_ids(store, kind=kind, error="50%") == {percent}, "% is literal"
    assert search_ids(store, kind=kind, error="disk 50") == {percent, digits}
    assert search_ids(store, kind=kind, error="d_k") == {under}, "_ is literal"
    assert search_ids(store, kind=kind, error="nothing like it") == set()


def test_search_jobs_filters_by_event_id(store: AnyStore) -> None:
    etype = unique("evt.adx_eid")
    names = [unique("adx_eid_s") for _ in range(2)]
    for name in names:
        subscribe(store, name, etype)
    first, second = (PublishParams(type=etype, payload={}) for _ in range(2))
    store.publish(first)
    store.publish(second)
    deliveries = {j.id for name in names for j in store.list_jobs(E, JobFilter(kind=name))[0]}
    got = store.search_jobs(JobSearch(event_id=first.id), limit=1000)
    assert {j.event_id for j in got} == {first.id}
    assert {j.kind for j in got} == set(names)
    assert job_ids(got) and set(job_ids(got)) < deliveries
    assert search_ids(store, source=E, kind=names[0], event_id=second.id) == {
        j.id for j in store.list_jobs(E, JobFilter(kind=names[0]))[0] if j.event_id == second.id
    }
    assert search_ids(store, source=Q, event_id=first.id) == set()
    assert search_ids(store, event_id=uuid.uuid4()) == set()
    assert store.count_jobs(JobSearch(event_id=first.id), exact=True) == (2, False)


def test_search_jobs_filters_by_run_id(store: AnyStore) -> None:
    run, other = (WorkflowStartParams(id=uuid.uuid4(), name=unique("adx_rid")) for _ in range(2))
    for p in (run, other):
        assert store.start_workflow(p)[0]
    kind = unique("adx_rid_op")

    def op(p: WorkflowStartParams, kind: str) -> uuid.UUID:
        return store.schedule_operation(ScheduleOperationParams(workflow_id=p.id, kind=kind))

    mine, mine_b, theirs = op(run, kind), op(run, kind + "_b"), op(other, kind)
    enqueue_due(store, kind)
    # Starting an execution enqueues its `$wf:<name>` decision job: one of its jobs too.
    (decision,) = search_ids(store, kind="$wf:" + run.name)
    assert search_ids(store, run_id=run.id) == {decision, mine, mine_b}
    assert search_ids(store, kind=kind, run_id=run.id) == {mine}
    assert search_ids(store, run_id=other.id) == {theirs} | search_ids(
        store, kind="$wf:" + other.name
    )
    assert search_ids(store, run_id=uuid.uuid4()) == set()
    assert {j.run_id for j in store.search_jobs(JobSearch(run_id=run.id))} == {run.id}
    assert store.count_jobs(JobSearch(run_id=run.id), exact=True) == (3, False)


# --- keyset pagination ---------------------------------------------------------------------

PAGE = 3
N = 10


def _populate(store: AnyStore, state: JobState | None) -> str:
    """N queue jobs of a fresh kind in ``state``, with ties in the sort column where
    the backend clock allows them (a shared run_at; one lease statement)."""
    kind = unique(f"adx_page_{state or 'all'}")
    if state in (JobState.SCHEDULED, JobState.PAUSED):
        same = host_now() + timedelta(hours=1)  # half share a run_at: the id breaks the tie
        for i in range(N):
            run_at = same if i < N // 2 else same + timedelta(minutes=i)
            p = EnqueueParams(kind=kind, payload={}, run_at=run_at)
            store.enqueue(p)
            if state == JobState.PAUSED:
                store.pause_job(Q, p.id)
        return kind
    for _ in range(N):
        enqueue_due(store, kind)
        time.sleep(TICK / 4)
    if state in (JobState.ACTIVE, JobState.DEAD, JobState.SUCCEEDED, JobState.SKIPPED):
        for job in dequeue_n(store, Q, kind, N):
            if state == JobState.DEAD:
                store.dead(job.id, token(job), "boom")
            elif state == JobState.SUCCEEDED:
                store.ack(job.id, token(job))
            elif state == JobState.SKIPPED:
                store.skip(job.id, token(job), "not needed")
    return kind


def pages(store: AnyStore, search: JobSearch) -> list[list[Job]]:
    out: list[list[Job]] = []
    after = None
    while True:
        page = store.search_jobs(search, limit=PAGE, after=after)
        assert len(page) <= PAGE
        if not page:
            return out
        out.append(page)
        after = store.job_cursor(page[-1], search.state)
        assert len(out) <= N, "pagination does not terminate"


PAGED_STATES = [
    None,
    JobState.PENDING,
    JobState.SCHEDULED,
    JobState.ACTIVE,
    JobState.DEAD,
    JobState.PAUSED,
    JobState.SUCCEEDED,
    JobState.SKIPPED,
]


@pytest.mark.parametrize("state", PAGED_STATES, ids=lambda s: str(s or "any"))
def test_search_jobs_pages_follow_list_jobs_order_without_gaps_or_duplicates(
    store: AnyStore, state: JobState | None
) -> None:
    kind = _populate(store, state)
    listed, total = store.list_jobs(Q, JobFilter(kind=kind, state=state), 0, 0)
    assert total == N and len(listed) == N

    got = pages(store, JobSearch(source=Q, kind=kind, state=state))
    assert [len(p) for p in got] == [3, 3, 3, 1]
    flat = job_ids(j for p in got for j in p)
    assert len(set(flat)) == len(flat), "no job appears on two pages"
    assert flat == job_ids(listed), "pages concatenate to the list_jobs order"
    # one unpaginated search gives the same order too
    assert job_ids(store.search_jobs(JobSearch(source=Q, kind=kind, state=state))) == flat


def test_search_jobs_pages_pending_jobs_in_lease_order(store: AnyStore) -> None:
    """Pending jobs page in the order workers lease them, (run_at, id), not list_jobs'
    enqueued_at order: the order the pending index holds, so a page across kinds is an
    index read on a huge table. Here enqueue order and run_at order are opposite."""
    kinds = [unique("adx_lease"), unique("adx_lease")]
    tag = {"test": kinds[0]}  # isolates the search across kinds from other tests' jobs
    base = host_now() - timedelta(hours=1)
    for i in range(N):
        # later enqueues are due earlier; half share a run_at, so the id breaks the tie
        run_at = base + timedelta(minutes=max(N - i, N // 2))
        store.enqueue(EnqueueParams(kind=kinds[i % 2], payload={}, meta=tag, run_at=run_at))
        time.sleep(TICK)
    listed, _ = store.list_jobs(Q, JobFilter(kind=kinds[0], state=JobState.PENDING), 0, 0)
    assert [j.enqueued_at for j in listed] == sorted(j.enqueued_at for j in listed)  # type: ignore[type-var]
    for search in (
        JobSearch(source=Q, kind=kinds[0], state=JobState.PENDING),
        JobSearch(source=Q, state=JobState.PENDING, meta=tag),  # across kinds
    ):
        got = [j for p in pages(store, search) for j in p]
        ours = [j for j in got if j.kind in kinds]
        assert len(ours) == len(got) == (N // 2 if search.kind else N)
        assert [(j.run_at, str(j.id)) for j in got] == sorted((j.run_at, str(j.id)) for j in got)  # type: ignore[type-var]
        if search.kind:
            assert job_ids(ours) != job_ids(listed), "lease order, not enqueue order"


# --- count_jobs ----------------------------------------------------------------------------


def test_count_jobs_is_exact_for_every_filter(store: AnyStore) -> None:
    kind = unique("adx_count")
    for i in range(7):
        enqueue_due(store, kind, meta={"n": str(i % 2)})
    _dead(store, kind, "Timeout talking to db")
    _dead(store, kind, "refused")

    def count(exact: bool, **search: object) -> tuple[int, bool]:
        return store.count_jobs(JobSearch(**search), exact=exact)  # type: ignore[arg-type]

    for exact in (True, False):  # filtered counts are never estimates
        assert count(exact, source=Q, kind=kind) == (9, False)
        assert count(exact, kind=kind) == (9, False)
        assert count(exact, source=Q, kind=kind, state=JobState.PENDING) == (7, False)
        assert count(exact, source=Q, kind=kind, state=JobState.DEAD) == (2, False)
        assert count(exact, source=Q, kind=kind, meta={"n": "1"}) == (3, False)
        assert count(exact, source=Q, kind=kind, error="TIMEOUT") == (1, False)
        assert count(exact, source=E, kind=kind) == (0, False)


def test_count_jobs_exact_agrees_with_list_jobs_totals(store: AnyStore) -> None:
    for source in (Q, E):
        for state in (None, JobState.PENDING, JobState.SUCCEEDED, JobState.DEAD):
            _, total = store.list_jobs(source, JobFilter(state=state), 0, 1)
            counted, estimated = store.count_jobs(JobSearch(source=source, state=state), True)
            assert (counted, estimated) == (total, False), (source, state)


def test_count_replay_counts_what_replay_creates(store: AnyStore) -> None:
    """Events of two types; ``a`` subscribes to both, ``b`` to the first only: each
    filter's count is the (events, deliveries) its replay then makes."""
    t1, t2, a, b = unique("rpc.t1"), unique("rpc.t2"), unique("rpc_a"), unique("rpc_b")
    subscribe(store, a, t1)
    subscribe(store, a, t2)
    subscribe(store, b, t1)
    first = PublishParams(type=t1, payload={})
    store.publish(first)
    store.publish(PublishParams(type=t1, payload={}))
    store.publish(PublishParams(type=t2, payload={}))
    for flt, expected in [
        (ReplayFilter(subscriber=b), (2, 2)),
        (ReplayFilter(subscriber=a), (3, 3)),
        (ReplayFilter(event_type=t1), (2, 4)),
        (ReplayFilter(event_type=t1, limit=1), (1, 2)),
        (ReplayFilter(event_id=first.id, subscriber=a), (1, 1)),
        (ReplayFilter(event_type=t2, subscriber=b), (0, 0)),
    ]:
        assert store.count_replay(flt) == expected, flt
        assert store.replay(flt) == expected[1], flt


def test_a_job_reads_the_same_by_lease_lookup_and_listing(store: AnyStore) -> None:
    """A job's columns are read by position (a reader compiled per column list) from
    psycopg's tuples (lease, listings) and from named rows (lookups, SQLite): every field
    comes out the same, each from its own column."""
    kind = f"adx_read_{secrets.token_hex(3)}"
    p = EnqueueParams(
        kind=kind,
        payload={"n": [1, 2.5, None], "s": "é"},
        meta={"team": "ops"},
        max_attempts=7,
        idempotency_key="key-1",
    )
    assert store.enqueue(p)
    leased = lease_one(store, Source.QUEUE, kind)
    (listed,), total = store.list_jobs(Source.QUEUE, JobFilter(kind=kind))
    (searched,) = store.search_jobs(JobSearch(source=Source.QUEUE, kind=kind))
    assert total == 1
    assert leased == store.get_job(Source.QUEUE, p.id) == store.find_job(p.id)
    assert leased == listed == searched
    assert (leased.id, leased.source, leased.state) == (p.id, Source.QUEUE, JobState.ACTIVE)
    assert (leased.payload, leased.meta) == ({"n": [1, 2.5, None], "s": "é"}, {"team": "ops"})
    assert (leased.max_attempts, leased.max_attempts_explicit, leased.attempt) == (7, True, 1)
    assert leased.idempotency_key == "key-1" and leased.lease_token is not None
    assert leased.event is None and leased.last_error == "" and leased.task_key == ""
    instants = (leased.run_at, leased.lease_until, leased.started_at, leased.enqueued_at)
    assert all(at is not None and at.utcoffset() == timedelta(0) for at in instants)
    # Each instant from its own column: the enqueue stamps two, the lease three.
    assert leased.enqueued_at == leased.run_at <= leased.started_at == leased.updated_at
    assert leased.started_at < leased.lease_until  # type: ignore[operator]
    assert (leased.failed_at, leased.completed_at, leased.deadline_at) == (None, None, None)
