"""Transactional outbox on PostgreSQL (azync's integration/tx_test.go): ``enqueue_tx`` and
``publish_tx`` write inside the caller's transaction, so a rollback leaves nothing, a
commit persists, and the wake NOTIFY issued inside the transaction is delivered on
commit only. Checked with a raw ``LISTEN`` on a separate connection."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from qctl_kit.errors import InvalidInput, NotFound
from qctl_store.postgres import PostgresStore
from qctl_store.types import EnqueueParams, PublishParams, Source, Subscriber
from tests.conftest import PG_DSN


@pytest.fixture
def caller() -> Iterator[psycopg.Connection]:
    """The application's own connection (default search_path, not autocommit)."""
    with psycopg.connect(PG_DSN) as conn:
        yield conn


@pytest.fixture
def listener(store: PostgresStore) -> Iterator[psycopg.Connection]:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'LISTEN "{store.config.channel}"')
        yield conn


def wakes(listener: psycopg.Connection, timeout: float, until: set[str] | None = None) -> set[str]:
    """Wake payloads received within ``timeout`` seconds (sooner once ``until`` is seen)."""
    got: set[str] = set()
    for n in listener.notifies(timeout=timeout):
        got.add(n.payload)
        if until is not None and until <= got:
            break
    return got


def kind() -> str:
    return f"tx_{uuid.uuid4().hex[:8]}"


def test_enqueue_tx_rolled_back_leaves_nothing_and_wakes_nobody(
    store: PostgresStore, caller: psycopg.Connection, listener: psycopg.Connection
) -> None:
    p = EnqueueParams(kind=kind(), payload={"n": 1})
    with caller.transaction():
        assert store.enqueue_tx(caller, p)
        raise psycopg.Rollback()
    with pytest.raises(NotFound):
        store.get_job(Source.QUEUE, p.id)
    assert p.kind not in store.kind_depths(Source.QUEUE)
    assert f"queue:{p.kind}" not in wakes(listener, 0.3)


def test_enqueue_tx_committed_persists_and_wakes_on_commit(
    store: PostgresStore, caller: psycopg.Connection, listener: psycopg.Connection
) -> None:
    p = EnqueueParams(kind=kind(), payload={"n": 2})
    with caller.transaction():
        assert store.enqueue_tx(caller, p)
        # Nothing is visible (nor announced) before the caller commits.
        assert f"queue:{p.kind}" not in wakes(listener, 0.1)
        with pytest.raises(NotFound):
            store.get_job(Source.QUEUE, p.id)
    assert store.get_job(Source.QUEUE, p.id).kind == p.kind
    assert store.kind_depths(Source.QUEUE)[p.kind].pending == 1
    want = {f"queue:{p.kind}"}
    assert want <= wakes(listener, 2.0, until=want)


def test_enqueue_tx_dedupes_inside_the_callers_transaction(
    store: PostgresStore, caller: psycopg.Connection
) -> None:
    k = kind()
    with caller.transaction():
        assert store.enqueue_tx(caller, EnqueueParams(kind=k, idempotency_key="once"))
        assert not store.enqueue_tx(caller, EnqueueParams(kind=k, idempotency_key="once"))
    assert store.kind_depths(Source.QUEUE)[k].pending == 1


def test_publish_tx_rolled_back_leaves_no_event_and_no_delivery(
    store: PostgresStore, caller: psycopg.Connection, listener: psycopg.Connection
) -> None:
    sub = kind()
    store.register_subscriber(Subscriber(name=sub, event_type=f"evt.{sub}"))
    p = PublishParams(type=f"evt.{sub}", payload={"a": 1})
    with caller.transaction():
        assert store.publish_tx(caller, p) == 1
        raise psycopg.Rollback()
    with pytest.raises(NotFound):
        store.get_event(p.id)
    assert sub not in store.kind_depths(Source.EVENT)
    assert f"event:{sub}" not in wakes(listener, 0.3)


def test_publish_tx_committed_persists_and_wakes_each_subscriber(
    store: PostgresStore, caller: psycopg.Connection, listener: psycopg.Connection
) -> None:
    a, b = kind(), kind()
    for sub in (a, b):
        store.register_subscriber(Subscriber(name=sub, event_type=f"evt.{a}"))
    p = PublishParams(type=f"evt.{a}", payload={"a": 1})
    with caller.transaction():
        assert store.publish_tx(caller, p) == 2
    assert store.get_event(p.id).deliveries == 2
    assert store.kind_depths(Source.EVENT)[b].pending == 1
    want = {f"event:{a}", f"event:{b}"}
    assert want <= wakes(listener, 2.0, until=want)


def test_the_callers_search_path_is_left_as_it_was(
    store: PostgresStore, caller: psycopg.Connection
) -> None:
    with caller.transaction():
        before = caller.execute("SHOW search_path").fetchone()
        store.enqueue_tx(caller, EnqueueParams(kind=kind()))
        assert caller.execute("SHOW search_path").fetchone() == before


def test_an_autocommit_connection_outside_a_transaction_is_refused(
    store: PostgresStore,
) -> None:
    p = EnqueueParams(kind=kind())
    with (
        psycopg.connect(PG_DSN, autocommit=True) as conn,
        pytest.raises(InvalidInput, match="transaction"),
    ):
        store.enqueue_tx(conn, p)
    with pytest.raises(NotFound):
        store.get_job(Source.QUEUE, p.id)


def test_bad_input_is_refused_before_the_callers_transaction_is_touched(
    store: PostgresStore, caller: psycopg.Connection
) -> None:
    with caller.transaction():
        with pytest.raises(InvalidInput):
            store.enqueue_tx(caller, EnqueueParams(kind=""))
        # The caller's transaction is still usable.
        assert caller.execute("SELECT 1").fetchone() == (1,)
