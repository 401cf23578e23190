"""Bulk statements against a Go worker leasing at the same moment (PostgreSQL: SQLite's
single writer runs a whole statement under its write lock, so no lease lands inside one)."""

from __future__ import annotations

import threading
import time
from typing import Any

from qctl.core import verbs
from qctl.core.verbs import Selection, Verb
from qctl.systems.azync.ops import events as ops_events
from qctl.systems.azync.ops import jobs as ops_jobs
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    DequeueParams,
    JobFilter,
    JobSearch,
    JobState,
    PublishParams,
    Source,
    Subscriber,
)
from tests.conformance.helpers import enqueue_due, unique
from tests.conftest import raw_pg

LEASE = """
UPDATE azync_jobs SET state = 'active', attempt = attempt + 1,
    lease_token = gen_random_uuid(), lease_until = now() + interval '1 minute'
WHERE id = %s
"""


def leased_during(store: PostgresStore, job_id: Any, bulk: Any, statement: str = LEASE) -> Any:
    """Run ``bulk`` (in a thread) while another session leases ``job_id`` as azync's
    dequeue does (``statement``): the lease holds the row lock, ``bulk`` runs until it is
    done or waits on that lock, then the lease commits. Returns what ``bulk`` returned."""
    result: list[Any] = []
    with raw_pg(store.schema) as worker, raw_pg(store.schema) as watcher:
        worker.autocommit = False
        worker.execute(statement, (job_id,))
        thread = threading.Thread(target=lambda: result.append(bulk()))
        thread.start()
        deadline = time.monotonic() + 10
        blocked = "SELECT 1 FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))"
        pid = worker.info.backend_pid
        while thread.is_alive() and not watcher.execute(blocked, (pid,)).fetchone():
            assert time.monotonic() < deadline, "the bulk statement neither ended nor waited"
            time.sleep(0.01)
        worker.commit()
        thread.join(10)
    return result[0]


def run_verb(store: PostgresStore, verb: Verb[Any], search: JobSearch) -> verbs.Result:
    selection = Selection(filter=ops_jobs.job_filter(search))
    return verbs.run(store, verb, verbs.plan(store, verb, selection, "races"))


def test_bulk_delete_by_kind_spares_a_job_leased_meanwhile(store: PostgresStore) -> None:
    """The batch's DELETE passes over the row the worker's lease holds (SKIP LOCKED, as
    delete_all): counted under that reason, never deleted under its worker."""
    kind = unique("race_del")
    job_id = enqueue_due(store, kind)
    delete = ops_jobs.deleting([JobState.PENDING])
    search = JobSearch(kind=kind, state=JobState.PENDING)
    result = leased_during(store, job_id, lambda: run_verb(store, delete, search))
    assert (result.done, result.skipped) == (0, {"held by another session": 1})
    assert store.get_job(Source.QUEUE, job_id).state == JobState.ACTIVE


def test_bulk_pause_spares_a_job_leased_meanwhile(store: PostgresStore) -> None:
    kind = unique("race_pause")
    job_id, free = enqueue_due(store, kind), enqueue_due(store, kind)
    result = leased_during(
        store, job_id, lambda: run_verb(store, ops_jobs.PAUSE, JobSearch(kind=kind))
    )
    assert (result.ids, result.skipped) == ([str(free)], {"active: a worker holds it": 1})
    assert store.get_job(Source.QUEUE, job_id).state == JobState.ACTIVE


def test_drain_spares_a_delivery_leased_meanwhile(store: PostgresStore) -> None:
    name, event_type = unique("race_sub"), unique("race_evt")
    store.register_subscriber(Subscriber(name=name, event_type=event_type))
    assert store.publish(PublishParams(type=event_type, payload={})) == 1
    ((delivery,), _) = store.list_jobs(Source.EVENT, JobFilter(kind=name))
    outcome = leased_during(
        store, delivery.id, lambda: ops_events.delete_subscriber(store, name, drain=True)
    )
    assert outcome.drained == 0
    assert store.get_job(Source.EVENT, delivery.id).state == JobState.ACTIVE


REVIVE_AND_LEASE = """
UPDATE azync_jobs SET state = 'active', attempt = 1, lease_token = gen_random_uuid(),
    lease_until = now() + interval '1 minute', last_error = NULL, failed_at = NULL
WHERE id = %s
"""


def test_bulk_retry_spares_a_job_another_retry_revived_and_a_worker_leased(
    store: PostgresStore,
) -> None:
    """Two retries at once: the other one's revived job is leased by a worker while this
    one waits on its row lock. Before, this retry reset it to pending (attempt 0) under
    its holder, so a second worker could lease it (its snapshot still said dead)."""
    kind = unique("race_retry")
    job_id = enqueue_due(store, kind)
    (job,) = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
    store.dead(job.id, job.lease_token, "boom")
    other = enqueue_due(store, kind)  # a dead job nobody touches: still revived
    (job2,) = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
    store.dead(job2.id, job2.lease_token, "boom")
    revived = leased_during(
        store, job_id, lambda: store.retry_all_dead(Source.QUEUE, kind), statement=REVIVE_AND_LEASE
    )
    assert revived == 1
    assert store.get_job(Source.QUEUE, job_id).state == JobState.ACTIVE
    assert store.get_job(Source.QUEUE, other).state == JobState.PENDING


def test_bulk_retry_by_the_verb_spares_a_job_revived_and_leased_meanwhile(
    store: PostgresStore,
) -> None:
    """The same race through ``jobs retry``'s batch statement (``retry_jobs``)."""
    kind = unique("race_retry_verb")
    ids = []
    for _ in range(2):
        ids.append(enqueue_due(store, kind))
        (job,) = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
        store.dead(job.id, job.lease_token, "boom")
    result = leased_during(
        store,
        ids[0],
        lambda: run_verb(store, ops_jobs.RETRY, JobSearch(kind=kind)),
        statement=REVIVE_AND_LEASE,
    )
    assert (result.ids, result.skipped) == ([str(ids[1])], {"active: a worker holds it": 1})
    assert store.get_job(Source.QUEUE, ids[0]).state == JobState.ACTIVE
