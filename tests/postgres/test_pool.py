"""The pool hands out live connections: one whose backend the server ended is replaced
before a call uses it, however recently it was used (``base._LivenessCheck``)."""

from __future__ import annotations

import uuid

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
