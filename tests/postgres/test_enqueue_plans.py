"""The enqueue statement takes the TTL claim's insert only for a batch that needs it:
a batch with no job that has both an idempotency key and a TTL leaves
azync_idempotency_keys out of its plan (the insert node would open the table and its
index for no row). Checked with EXPLAIN; the conformance suite checks what each
batch writes, and bench/ times it."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from qctl_store.postgres import PostgresStore
from qctl_store.types import EnqueueParams, Source
from tests.postgres.conftest import plans


def test_only_a_batch_with_a_key_and_a_ttl_plans_the_claim(
    store: PostgresStore, writes: list[tuple[str, Any]]
) -> None:
    kind = f"plan_{uuid.uuid4().hex[:8]}"
    ttl = timedelta(minutes=5)
    plain = [EnqueueParams(kind=kind), EnqueueParams(kind=kind, idempotency_key="live")]
    claiming = [
        EnqueueParams(kind=kind),
        EnqueueParams(kind=kind, idempotency_key="w", idempotency_ttl=ttl),
    ]
    again = EnqueueParams(kind=kind, idempotency_key="w", idempotency_ttl=ttl)
    assert store.enqueue_many(plain) == [True, True]
    assert store.enqueue_many(claiming) == [True, True]
    assert store.enqueue(again) is False  # inside the window the first job claimed
    assert len(writes) == 3
    without, with_claim, _ = plans(store, writes)
    assert "azync_idempotency_keys" not in without, without
    assert "Insert on azync_idempotency_keys" in with_claim, with_claim
    assert all(store.get_job(Source.QUEUE, p.id) for p in plain + claiming)
