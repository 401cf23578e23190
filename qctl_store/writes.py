"""The validated arguments of the producer and event-ledger writes, built once for both
backends.

Each backend binds ids and instants its own way, so the builders take its ``Dialect``
(``<backend>/rows.py``); everything else is checked and encoded here, before anything is
written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qctl_kit import values
from qctl_store import validate
from qctl_store.dialect import Dialect
from qctl_store.types import EnqueueParams, PublishParams, ReplayFilter


def enqueue_fields(
    d: Dialect, p: EnqueueParams, encode_json: Callable[[Any, str], Any] = validate.json_text
) -> dict[str, Any]:
    """One job's insert arguments of ``enqueue``: ``run_at`` None is now plus ``delay``
    (which, like the idempotency TTL, the backend binds its own way: both are checked
    here); an empty meta is ``{}`` and an empty idempotency key None. Payload and meta
    are JSON text, or, with ``encode_json`` returning its value as it is, left to the
    caller that encodes the fields of a whole batch as one JSON document."""
    validate.kind(p.kind)
    run_at = validate.instant(p.run_at, "run_at")
    values.duration(p.delay, "delay")
    values.duration(p.idempotency_ttl, "idempotency_ttl")
    max_attempts, explicit = validate.enqueue_budget(p.max_attempts, p.max_attempts_explicit)
    return {
        "id": d.arg_id(p.id, "id"),
        "kind": p.kind,
        "payload": encode_json(p.payload, "payload"),
        "meta": encode_json(validate.meta(p.meta), "meta"),
        "key": validate.idempotency_key(p.idempotency_key) or None,
        "max_attempts": max_attempts,
        "explicit": explicit,
        "run_at": d.instant(run_at),
    }


def publish_fields(d: Dialect, p: PublishParams) -> dict[str, Any]:
    """The ``insert_event`` arguments of ``publish``; ``occurred_at`` None is the
    backend's now."""
    validate.kind(p.type, "event type")
    validate.int64(p.version, "version")
    return {
        "id": d.arg_id(p.id, "id"),
        "type": p.type,
        "aggregate_type": str(p.aggregate_type),
        "aggregate_id": str(p.aggregate_id),
        "version": p.version,
        "occurred_at": d.instant(validate.instant(p.occurred_at, "occurred_at")),
        "payload": validate.json_text(p.payload),
        "meta": validate.json_text(validate.meta(p.meta), "meta"),
    }


def replay_fields(d: Dialect, filter: ReplayFilter) -> dict[str, Any]:
    """The arguments of a ``replay``: "" and None filters match everything."""
    limit = validate.replay_limit(filter.limit)
    return {
        "subscriber": str(filter.subscriber),
        "event_type": str(filter.event_type),
        "event_id": None if filter.event_id is None else d.arg_id(filter.event_id, "event_id"),
        "since": d.instant(validate.instant(filter.since, "since")),
        "until": d.instant(validate.instant(filter.until, "until")),
        "limit": limit,
    }
