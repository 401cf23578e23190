"""PostgreSQL change hints: the wire (azync's migration 00011 and integration/watch_test.go):
bulk coalescing, schema isolation, no PII on the wire, and recovery when the server
kills the listener's or every session of the store."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from qctl_kit.streams import Subscription
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.postgres.changes import _schema_needle, parse_change
from qctl_store.types import (
    Change,
    ChangeEntity,
    DequeueParams,
    EnqueueParams,
    JobState,
    Source,
)
from tests.conformance.helpers import (
    PG_INSERT_QUEUE_JOBS,
    await_change,
    enqueue_due,
    is_reset,
    unique,
    wait_until,
)
from tests.conftest import PG_DSN, StoreFactory, raw_pg
from tests.postgres.conftest import terminate_backends

WIRE_KEYS = {
    "schema",
    "entity",
    "source",
    "id",
    "dagId",
    "kind",
    "taskKey",
    "state",
    "atMs",
    "bulk",
    "count",
}


# --- parsing (TestParseChange) ----------------------------------------------------------


def test_parse_per_row_hint() -> None:
    id, dag = uuid.uuid4(), uuid.uuid4()
    payload = json.dumps(
        {
            "schema": "s",
            "entity": "job",
            "source": "dag",
            "id": str(id),
            "dagId": str(dag),
            "kind": "k",
            "taskKey": "t",
            "state": "pending",
            "atMs": 1_700_000_000_123,
        }
    )
    parsed = parse_change(payload)
    assert parsed is not None
    change, schema = parsed
    assert schema == "s"
    assert (change.entity, change.source, change.id, change.dag_id) == (
        ChangeEntity.JOB,
        Source.DAG,
        id,
        dag,
    )
    assert (change.kind, change.task_key, change.state) == ("k", "t", "pending")
    assert change.at is not None and change.at.timestamp() == pytest.approx(1_700_000_000.123)
    assert not change.bulk


# A fixed id: the parameters name it, and every xdist worker must collect the same tests.
_ID = "d5e9b3ed-ba1e-48cd-a90d-0f8b0c5c2195"


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[]",
        json.dumps({"entity": "job", "id": _ID}),  # no schema
        json.dumps({"schema": "", "entity": "job", "id": _ID}),
        json.dumps({"schema": "s", "entity": "reset"}),  # resets never travel on the wire
        json.dumps({"schema": "s", "entity": "workflow", "id": _ID}),
        json.dumps({"schema": "s", "entity": "job", "id": "nope"}),
        json.dumps({"schema": "s", "entity": "job"}),
        json.dumps({"schema": "s", "entity": "job", "id": _ID, "dagId": "bad"}),
        json.dumps({"schema": "s", "entity": "job", "id": _ID, "atMs": "soon"}),
        json.dumps({"schema": "s", "entity": "job", "id": _ID, "bulk": "yes"}),
        json.dumps({"schema": "s", "entity": "job", "id": _ID, "source": "cron"}),
    ],
)
def test_parse_drops_invalid_payloads(payload: str) -> None:
    assert parse_change(payload) is None


def test_parse_bulk_hint_ignores_id() -> None:
    parsed = parse_change(
        '{"schema":"s","entity":"job","source":"queue","bulk":true,"count":60,"id":"x","atMs":1}'
    )
    assert parsed is not None
    change, _ = parsed
    assert (change.bulk, change.count, change.id, change.source) == (True, 60, None, Source.QUEUE)
    assert parse_change('{"schema":"s","entity":"event","bulk":true,"count":51}') is not None


def test_parse_null_keys_are_absent() -> None:
    id = uuid.uuid4()
    parsed = parse_change(
        json.dumps({"schema": "s", "entity": "dag", "id": str(id), "dagId": None, "kind": None})
    )
    assert parsed is not None
    assert (parsed[0].dag_id, parsed[0].kind, parsed[0].source) == (None, "", None)


# --- the wire -------------------------------------------------------------------------------


def test_bulk_insert_and_update_coalesce(
    store: PostgresStore, pg_schema: str, live: Subscription[Change]
) -> None:
    kind = unique("bulk")
    with raw_pg(pg_schema) as conn:
        conn.execute(PG_INSERT_QUEUE_JOBS, (kind, 60))
    hint = await_change(live, "the bulk insert hint", lambda c: c.bulk)
    assert (hint.entity, hint.source, hint.count, hint.id) == (
        ChangeEntity.JOB,
        Source.QUEUE,
        60,
        None,
    )
    with raw_pg(pg_schema) as conn:
        conn.execute("UPDATE azync_jobs SET state = 'paused' WHERE kind = %s", (kind,))
    hint = await_change(live, "the bulk update hint", lambda c: c.bulk)
    assert (hint.source, hint.count) == (Source.QUEUE, 60)
    # No per-row hint of those rows ever came (nothing of the kind arrives).
    kind50 = unique("rows50")
    with raw_pg(pg_schema) as conn:
        conn.execute(PG_INSERT_QUEUE_JOBS, (kind50, 50))
    seen = 0
    while seen < 50:
        c = await_change(live, "a per-row hint", lambda c: c.kind in (kind, kind50) or c.bulk)
        assert c.kind == kind50 and not c.bulk, "50 rows are still announced one by one"
        seen += 1


def test_schema_isolation(
    store: PostgresStore, live: Subscription[Change], fresh_pg_schema: str
) -> None:
    other = PostgresStore(PG_DSN, Config(schema=fresh_pg_schema))
    try:
        other.migrate()
        foreign = enqueue_due(other, unique("iso_b"))
        marker = enqueue_due(store, unique("iso_a"))
        seen_marker = False
        while not seen_marker:
            c = await_change(live, "the marker", lambda c: c.id in (foreign, marker))
            assert c.id != foreign, "a change of another schema leaked into this stream"
            seen_marker = True
    finally:
        other.close()


def test_schema_prefilter_is_exact(store: PostgresStore, live: Subscription[Change]) -> None:
    # The substring check that skips other schemas before parsing keys on the quoted
    # name: a schema whose name contains ours is still parsed and dropped, ours delivered.
    assert _schema_needle("qctl_a") == '"qctl_a"'
    assert _schema_needle("Straße") == '"Straße"'
    assert _schema_needle('we"ird') == ""  # JSON escapes it: filtered after parsing only
    mine, theirs = uuid.uuid4(), uuid.uuid4()
    for schema, id in ((f"{store.schema}_x", theirs), (store.schema, mine)):
        payload = {"schema": schema, "entity": "job", "source": "queue", "id": str(id)}
        store._on_change_payload(json.dumps(payload, separators=(",", ":")))
    c = await_change(live, "the hint of this schema", lambda c: c.id in (mine, theirs))
    assert c.id == mine


def test_payload_carries_no_pii(store: PostgresStore, pg_schema: str) -> None:
    sentinel = f"pii-{uuid.uuid4()}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute("LISTEN azync_changes")
        p = EnqueueParams(kind=unique("pii"), payload={"secret": sentinel}, meta={"m": sentinel})
        assert store.enqueue(p)
        job_id = enqueue_due(store, unique("pii2"))  # a second hint, so the loop ends
        store.dequeue_batch(Source.QUEUE, DequeueParams(kind=p.kind))
        found: list[str] = []
        for n in conn.notifies(timeout=5):
            if str(p.id) in n.payload:
                found.append(n.payload)
            if str(job_id) in n.payload and len(found) >= 2:
                break
        assert len(found) >= 2, "the insert and the lease of the job were notified"
        for payload in found:
            assert sentinel not in payload
            wire = json.loads(payload)
            assert set(wire) <= WIRE_KEYS
            assert wire["schema"] == pg_schema


def test_listener_killed_resets_and_resumes(store_factory: StoreFactory) -> None:
    app = unique("qctl_h6_kill")
    s = store_factory(application_name=app)
    sub = s.changes()
    assert sub is not None
    try:
        await_change(sub, "the opening reset", is_reset)
        assert wait_until(lambda: terminate_backends(app, 'LISTEN "azync_changes"%')) == [True]
        await_change(sub, "the reconnect reset", is_reset)
        id = enqueue_due(s, unique("after_kill"))
        c = await_change(sub, "a hint after the reconnect", lambda c: c.id == id)
        assert c.state == JobState.PENDING
    finally:
        sub.close()


def test_every_session_killed_store_recovers(store_factory: StoreFactory) -> None:
    app = unique("qctl_h6_killall")
    s = store_factory(application_name=app)
    sub = s.changes()
    assert sub is not None
    try:
        await_change(sub, "the opening reset", is_reset)
        enqueue_due(s, unique("warm"))  # the pool holds a used connection now
        assert all(terminate_backends(app))
        # The pool checks connections on checkout: the dead one is replaced.
        id = enqueue_due(s, unique("after_killall"))
        await_change(sub, "the reconnect reset", is_reset)
        # The hint of a job enqueued before the LISTEN came back may be lost (the reset
        # announces that); one enqueued after the reset must arrive.
        later = enqueue_due(s, unique("after_reset"))
        await_change(sub, "a hint after recovery", lambda c: c.id in (id, later))
    finally:
        sub.close()
