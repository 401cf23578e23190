"""The pool hands out live connections: one whose backend the server ended is replaced
before a call uses it, however recently it was used (``base._LivenessCheck``)."""

from __future__ import annotations

import uuid

import psycopg

from qctl_store.types import EnqueueParams, JobState
from tests.conftest import PG_DSN, StoreFactory


def test_a_terminated_backend_is_replaced_before_the_next_call(
    store_factory: StoreFactory,
) -> None:
    app = f"qctl-pool-{uuid.uuid4().hex[:8]}"
    store = store_factory(application_name=app, pool_max_size=1)
    first, second = EnqueueParams(kind="pool"), EnqueueParams(kind="pool")
    assert store.enqueue(first)
    with psycopg.connect(PG_DSN, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = %s",
            (app,),
        ).fetchall()
    assert ended == [(True,)]
    assert store.enqueue(second)  # no error: the pool reconnected first
    assert store.find_job(second.id).state == JobState.PENDING
