"""PostgreSQL wakeups: LISTEN on the store's channel, ``source:kind`` payloads
(azync's ``listener.go``), the reusable listener's reconnect behaviour."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from qctl_kit.errors import Unavailable
from qctl_kit.postgres.listener import Listener
from qctl_kit.streams import Subscription
from qctl_store import Config, EnqueueParams
from qctl_store.postgres import PostgresStore
from qctl_store.postgres.wake import parse_wake
from qctl_store.types import Source, Wake
from tests.conftest import PG_DSN
from tests.postgres.conftest import terminate_backends


@pytest.fixture(scope="module")
def pg_store(pg_schema: str) -> Iterator[PostgresStore]:
    s = PostgresStore(PG_DSN, Config(schema=pg_schema))
    s.migrate()
    yield s
    s.close()


def notify(channel: str, payload: str) -> None:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))


def wait_live(store: PostgresStore) -> None:
    """Block until the store's wake LISTEN is established (a NOTIFY sent earlier is lost)."""
    deadline = time.monotonic() + 5
    while not (store._wake_listener and store._wake_listener.live):
        assert time.monotonic() < deadline, "wake listener never connected"
        time.sleep(0.01)


def next_wake(sub: Subscription[Wake], timeout: float = 1.0) -> Wake | None:
    return sub.get(timeout)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("queue:email", Wake(Source.QUEUE, "email")),
        ("workflow:$wf:name", Wake(Source.WORKFLOW, "$wf:name")),
        ("workflow:$op:probe@1", Wake(Source.WORKFLOW, "$op:probe@1")),
        ("dag:a:b:c", Wake(Source.DAG, "a:b:c")),
        ("queue", None),
        ("", None),
        (":kind", None),
        ("queue:", None),
        (":", None),
        ("bogus:kind", None),
    ],
)
def test_parse_wake(payload: str, expected: Wake | None) -> None:
    assert parse_wake(payload) == expected


def test_channel_names(pg_store: PostgresStore, pg_schema: str) -> None:
    assert pg_store.config.channel == f"azync_{pg_schema}"
    assert Config().channel == "azync"
    assert Config(schema="s" * 60).channel == "azync"
    assert Config(schema="x", notify_channel="custom").channel == "custom"


def test_wake_delivers_pg_notify(pg_store: PostgresStore) -> None:
    with pg_store.wake() as sub:  # type: ignore[union-attr]
        wait_live(pg_store)
        notify(pg_store.config.channel, "queue:wake.raw")
        assert next_wake(sub) == Wake(Source.QUEUE, "wake.raw")
        notify(pg_store.config.channel, "event:sub:with:colons")
        assert next_wake(sub) == Wake(Source.EVENT, "sub:with:colons")


def test_malformed_payloads_are_dropped(pg_store: PostgresStore) -> None:
    with pg_store.wake() as sub:  # type: ignore[union-attr]
        wait_live(pg_store)
        for bad in ("queue", ":kind", "queue:", ":", "nosuch:kind"):
            notify(pg_store.config.channel, bad)
        notify(pg_store.config.channel, "dag:after.bad")
        assert next_wake(sub) == Wake(Source.DAG, "after.bad")


def test_every_subscriber_gets_each_wake(pg_store: PostgresStore) -> None:
    with pg_store.wake() as a, pg_store.wake() as b:  # type: ignore[union-attr]
        wait_live(pg_store)
        notify(pg_store.config.channel, "queue:fanout")
        assert next_wake(a) == Wake(Source.QUEUE, "fanout")
        assert next_wake(b) == Wake(Source.QUEUE, "fanout")


def test_other_channels_are_not_heard(pg_store: PostgresStore) -> None:
    with pg_store.wake() as sub:  # type: ignore[union-attr]
        wait_live(pg_store)
        notify("azync", "queue:other.channel")
        notify(pg_store.config.channel, "queue:mine")
        assert next_wake(sub) == Wake(Source.QUEUE, "mine")


def test_enqueue_wakes(pg_store: PostgresStore) -> None:
    kind = f"wake.enqueue.{uuid.uuid4().hex[:8]}"
    with pg_store.wake() as sub:  # type: ignore[union-attr]
        wait_live(pg_store)
        assert pg_store.enqueue(EnqueueParams(kind=kind, payload={"n": 1}))
        assert next_wake(sub) == Wake(Source.QUEUE, kind)


def test_poll_only_has_no_wake(pg_schema: str) -> None:
    with contextlib.closing(
        PostgresStore(PG_DSN, Config(schema=pg_schema, poll_only=True))
    ) as store:
        assert store.wake() is None
        assert store.schema_status().push is False


def test_wake_after_close_is_unavailable(pg_schema: str) -> None:
    store = PostgresStore(PG_DSN, Config(schema=pg_schema))
    sub = store.wake()
    assert sub is not None
    wait_live(store)
    listener = store._wake_listener
    store.close()
    assert sub.closed and sub.get(0.1) is None
    assert listener is not None and listener.closed and not listener.live
    with pytest.raises(Unavailable, match="listener is closed"):
        store.wake()


def test_listener_reconnects_and_reports_live_again(pg_schema: str) -> None:
    """The generic listener: on_live after every LISTEN, payloads resume after the
    backend is terminated, close() stops the thread."""
    app = f"qctl_listen_{uuid.uuid4().hex[:8]}"
    channel = f"qctl_test_{uuid.uuid4().hex[:8]}"
    lives: list[float] = []
    downs: list[float] = []
    got: list[str] = []
    seen = threading.Event()

    def on_notify(payload: str) -> None:
        got.append(payload)
        seen.set()

    def connect() -> psycopg.Connection[Any]:
        return psycopg.connect(PG_DSN, autocommit=True, application_name=app)

    listener = Listener(
        connect,
        channel,
        on_notify=on_notify,
        on_live=lambda: lives.append(time.monotonic()),
        on_down=lambda: downs.append(time.monotonic()),
    )
    listener.start()
    try:
        deadline = time.monotonic() + 5
        while not lives:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        notify(channel, "first")
        assert seen.wait(10) and got == ["first"]
        terminate_backends(app)
        deadline = time.monotonic() + 5
        while len(lives) < 2:
            assert time.monotonic() < deadline, "listener did not reconnect"
            time.sleep(0.02)
        assert len(downs) == 1
        seen.clear()
        notify(channel, "second")
        assert seen.wait(10) and got == ["first", "second"]
    finally:
        listener.close()
    assert listener.closed and not listener.live
