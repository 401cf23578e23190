"""The enqueue statement takes only the parts a batch needs: the TTL claim's insert only
for a batch with a job that has both an idempotency key and a TTL (the insert node would
open azync_idempotency_keys and its index for no row), and the JSON document only for a
batch that sends more than one job (one job goes as scalar parameters). Checked with
EXPLAIN; the conformance suite checks what each batch writes, and bench/ times it."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
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


def test_one_job_goes_as_scalars_and_writes_what_a_batch_writes(
    store: PostgresStore, writes: list[tuple[str, Any]]
) -> None:
    kind = f"plan_{uuid.uuid4().hex[:8]}"
    job = EnqueueParams(
        kind=kind,
        payload={"n": [1, 2.5, None, "é"], "ok": True},
        meta={"tenant": "t1"},
        run_at=datetime(2099, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        max_attempts=3,
        max_attempts_explicit=True,
        idempotency_key="one",
    )
    twin = replace(job, id=uuid.uuid4(), idempotency_key="twin")
    assert store.enqueue(job) is True
    assert store.enqueue_many([twin, EnqueueParams(kind=kind)]) == [True, True]
    one, batch = plans(store, writes)
    assert "jobs" not in writes[0][1] and "Function Scan on c " not in one, one
    assert "jobs" in writes[1][1] and "Function Scan on c " in batch, batch
    written = store.get_job(Source.QUEUE, job.id)
    assert written.payload == job.payload and written.meta == job.meta
    assert written.run_at == job.run_at and written.state == "scheduled"
    assert (written.max_attempts, written.max_attempts_explicit) == (3, True)
    as_batch = store.get_job(Source.QUEUE, twin.id)
    assert replace(as_batch, id=job.id, idempotency_key="one") == replace(
        written, enqueued_at=as_batch.enqueued_at, updated_at=as_batch.updated_at
    )
