"""The pool hands out live connections: one whose backend the server ended is replaced
before a call uses it, however recently it was used (``base._LivenessCheck``)."""

from __future__ import annotations

import uuid
from datetime import timedelta

from qctl_store.types import EnqueueParams, JobState
from tests.conftest import StoreFactory
from tests.postgres.conftest import terminate_backends


def test_a_terminated_backend_is_replaced_before_the_next_call(
    store_factory: StoreFactory,
) -> None:
    app = f"qctl-pool-{uuid.uuid4().hex[:8]}"
    store = store_factory(application_name=app, pool_max_size=1)
    first, second = EnqueueParams(kind="pool"), EnqueueParams(kind="pool")
    assert store.enqueue(first)
    assert terminate_backends(app) == [True]
    assert store.enqueue(second)  # no error: the pool reconnected first
    assert store.find_job(second.id).state == JobState.PENDING


def test_refreshes_after_lock_timeouts_find_their_statements_prepared(
    store_factory: StoreFactory,
) -> None:
    """A refresh behind another session's lock times out; once the lock is released the
    next refreshes succeed, lock after lock: no statement psycopg prepared in the
    pipeline the timeout cut short is taken for prepared (``admin._size_and_tuning``;
    before, the first refresh after the lock said ``prepared statement "_pg3_N" does not
    exist``, as the dashboard did)."""
    import psycopg
    import pytest

    from qctl_kit.errors import Timeout
    from qctl_store.types import Source
    from tests.conftest import PG_DSN

    store = store_factory(pool_max_size=1, lock_timeout=timedelta(milliseconds=300))
    store.enqueue(EnqueueParams(kind="refreshed"))
    for _ in range(5):  # psycopg prepares a statement at its sixth run on a connection
        store.live_depths(Source.QUEUE)
    with psycopg.connect(PG_DSN) as holder:
        for round in range(3):
            holder.execute(f'LOCK TABLE "{store.schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
            with pytest.raises(Timeout):
                store.live_depths(Source.QUEUE)
            holder.rollback()
            for _ in range(3):
                depths, _ = store.live_depths(Source.QUEUE)
                assert depths["refreshed"].pending == 1, round
