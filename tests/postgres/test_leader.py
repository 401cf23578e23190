"""PostgreSQL leader election: azync's advisory-lock keys and lease semantics
(azync's ``leader.go`` and ``integration/leader_test.go``)."""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

import psycopg
import pytest

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.postgres.leader import advisory_lock_key, fnv1a64
from tests.conftest import PG_DSN
from tests.postgres.conftest import terminate_backends


def test_fnv1a64_reference_value() -> None:
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


@pytest.mark.parametrize(
    ("name", "schema", "key"),
    [
        ("cron", "", -3616190043286526894),
        ("cron", "public", -848451135032462581),
        ("cron", "myschema", 6216349498648892823),
    ],
)
def test_advisory_lock_key_vectors(name: str, schema: str, key: int) -> None:
    assert advisory_lock_key(name, schema) == key


@pytest.fixture(scope="module")
def pg_store(pg_schema: str) -> Any:
    s = PostgresStore(PG_DSN, Config(schema=pg_schema))
    yield s
    s.close()


def test_acquire_contend_release_reacquire(pg_store: PostgresStore) -> None:
    name = f"leader-{uuid.uuid4().hex[:8]}"
    lease, acquired = pg_store.acquire_leadership_lease(name)
    assert acquired and lease is not None
    assert lease.valid()
    # a second candidate (its own session) loses while the lease is held
    other, acquired2 = pg_store.acquire_leadership_lease(name)
    assert (other, acquired2) == (None, False)
    # another name is independent
    unrelated, ok = pg_store.acquire_leadership_lease(name + "-other")
    assert ok and unrelated is not None
    unrelated.release()
    lease.release()
    lease.release()  # idempotent
    assert not lease.valid()
    again, acquired3 = pg_store.acquire_leadership_lease(name)
    assert acquired3 and again is not None
    again.release()


def test_acquire_leadership_returns_release(pg_store: PostgresStore) -> None:
    name = f"leader-{uuid.uuid4().hex[:8]}"
    release, acquired = pg_store.acquire_leadership(name)
    assert acquired
    lost_release, lost = pg_store.acquire_leadership(name)
    assert not lost
    lost_release()  # the no-op of a lost election
    release()
    release()
    release2, acquired2 = pg_store.acquire_leadership(name)
    assert acquired2
    release2()


def test_key_is_the_one_azync_uses(pg_store: PostgresStore, pg_schema: str) -> None:
    """A Go instance holding azync's key for the same (name, schema) wins the election."""
    name = f"leader-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_DSN, autocommit=True) as go_side:
        key = advisory_lock_key(name, pg_schema)
        go_side.execute("SELECT pg_advisory_lock(%s)", (key,))
        assert pg_store.acquire_leadership_lease(name) == (None, False)
        go_side.execute("SELECT pg_advisory_unlock(%s)", (key,))
    lease, acquired = pg_store.acquire_leadership_lease(name)
    assert acquired and lease is not None
    lease.release()


def test_lease_detects_lost_session_and_allows_reacquire(pg_schema: str) -> None:
    app = f"qctl_leader_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(
        PostgresStore(PG_DSN, Config(schema=pg_schema, application_name=app))
    ) as store:
        lease, acquired = store.acquire_leadership_lease("leader-it-test")
        assert acquired and lease is not None and lease.valid()
        assert terminate_backends(app)
        deadline = time.monotonic() + 5
        while lease.valid():
            assert time.monotonic() < deadline, "valid() did not notice the lost session"
            time.sleep(0.02)
        second, acquired = store.acquire_leadership_lease("leader-it-test")
        assert acquired and second is not None
        second.release()
        lease.release()  # releasing a dead lease is harmless
