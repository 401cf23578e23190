"""The event ledger on PostgreSQL: publish with atomic fan-out, subscribers, replay,
retention and the admin reads (azync's ``driver/azyncpgx/store_events.go``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import psycopg

from qctl_kit.errors import NotFound
from qctl_kit.postgres.connect import Cursor
from qctl_store import validate
from qctl_store.listing import EventListing
from qctl_store.postgres.base import PgBase, queries
from qctl_store.postgres.rows import DIALECT, ROWS, arg_id, caller_tx
from qctl_store.types import (
    EventAdminRow,
    OpsStats,
    PublishParams,
    ReplayFilter,
    Source,
    Subscriber,
    SubscriberView,
)
from qctl_store.writes import publish_fields, replay_fields

Q = queries("events.sql")


class EventsMixin(EventListing, PgBase):
    # --- publish --------------------------------------------------------------------

    @staticmethod
    def _publish_in(cur: Cursor, args: dict[str, Any]) -> list[str]:
        """Append the event and fan out; the subscriber kinds delivered to."""
        cur.execute(Q.insert_event, args)
        cur.execute(Q.fan_out, args)
        return [r["kind"] for r in cur.fetchall()]

    def publish(self, p: PublishParams) -> int:
        args = publish_fields(DIALECT, p)
        with self.tx() as cur:
            kinds = self._publish_in(cur, args)
        self.notify_after_commit(Source.EVENT, kinds)
        return len(kinds)

    def publish_tx(self, tx: psycopg.Connection[Any], p: PublishParams) -> int:
        """Publish inside the caller's open transaction (transactional outbox): the
        wakes are part of that transaction and are delivered only on commit."""
        args = publish_fields(DIALECT, p)
        with caller_tx(self, tx) as cur:
            kinds = self._publish_in(cur, args)
            self.notify_in_tx(cur, Source.EVENT, kinds)
        return len(kinds)

    # --- subscribers ----------------------------------------------------------------

    def register_subscriber(self, sub: Subscriber) -> None:
        validate.subscriber(sub)
        with self.tx() as cur:
            cur.execute(
                Q.register_subscriber,
                {"name": sub.name, "event_type": sub.event_type, "max_attempts": sub.max_attempts},
            )

    def subscribers(self, event_type: str) -> list[Subscriber]:
        with self.read() as cur:
            cur.execute(Q.subscribers, {"event_type": str(event_type)})
            return [ROWS.subscriber(r) for r in cur.fetchall()]

    def delete_subscriber(self, name: str, event_type: str = "") -> int:
        validate.kind(name, "subscriber name")
        with self.tx() as cur:
            cur.execute(Q.delete_subscriber, {"name": name, "event_type": str(event_type)})
            return cur.rowcount

    # --- replay and retention -------------------------------------------------------

    def replay(self, filter: ReplayFilter) -> int:
        args = replay_fields(DIALECT, filter)
        with self.tx() as cur:
            cur.execute(Q.replay, args)
            kinds = [r["kind"] for r in cur.fetchall()]
        self.notify_after_commit(Source.EVENT, kinds)
        return len(kinds)

    def count_replay(self, filter: ReplayFilter) -> tuple[int, int]:
        with self.read() as cur:
            cur.execute(Q.count_replay, replay_fields(DIALECT, filter))
            row = cur.fetchone()
        return (row["events"], row["deliveries"]) if row else (0, 0)

    def retain(self, before: datetime, limit: int) -> int:
        cutoff = validate.required_instant(before, "before")
        if validate.limit(limit) <= 0:
            return 0
        with self.tx() as cur:
            cur.execute(Q.retain, {"before": cutoff, "limit": limit})
            return cur.rowcount

    # --- admin reads ----------------------------------------------------------------

    def get_event(self, id: uuid.UUID) -> EventAdminRow:
        with self.read() as cur:
            cur.execute(Q.get_event, {"id": arg_id(id)})
            row = cur.fetchone()
        if row is None:
            raise NotFound("get event")
        return ROWS.event_admin(row)

    def list_subscriber_views(self, event_type: str = "") -> list[SubscriberView]:
        with self.read() as cur:
            cur.execute(Q.list_subscriber_views, {"event_type": str(event_type)})
            return [ROWS.subscriber_view(r) for r in cur.fetchall()]

    def ops_stats(self) -> OpsStats:
        with self.read() as cur:
            cur.execute(Q.ops_stats)
            row = cur.fetchone()
        assert row is not None
        return ROWS.ops_stats(row)
