"""The event ledger on SQLite: publish with subscriber fan-out, replay, retention and
the admin reads.

A publish inserts the event and one ``pending`` delivery job per subscriber registered
at that moment, in one transaction. Deliveries have no payload; the lease rehydrates
``Job.event`` from the ledger.
"""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime, timedelta
from typing import Any

from qctl_kit import errors
from qctl_store import validate
from qctl_store.listing import EventListing
from qctl_store.sqlite.base import SqliteBase, Tx, queries, td_us, to_us
from qctl_store.sqlite.rows import DIALECT, ROWS, arg_id, caller_tx
from qctl_store.types import (
    EventAdminRow,
    OpsStats,
    PublishParams,
    ReplayFilter,
    Subscriber,
    SubscriberView,
)
from qctl_store.writes import publish_fields, replay_fields

Q = queries("events.sql")


class EventsMixin(EventListing, SqliteBase):
    def publish(self, p: PublishParams) -> int:
        args = publish_fields(DIALECT, p)
        with self.tx() as t:
            return self._publish(t, args)

    def publish_tx(self, tx: sqlite3.Connection, p: PublishParams) -> int:
        """Publish inside the caller's open transaction on their own connection to the
        same database file."""
        args = publish_fields(DIALECT, p)
        with caller_tx(self, tx) as t:
            return self._publish(t, args)

    def _publish(self, t: Tx, args: dict[str, Any]) -> int:
        occurred = args["occurred_at"] if args["occurred_at"] is not None else t.now
        t.execute(Q.insert_event, {**args, "occurred_at": occurred, "now": t.now})
        subs = t.all(Q.subscribers, {"event_type": args["type"]})
        self._insert_deliveries(
            t, [(args["id"], s["name"], s["max_attempts"]) for s in subs], replay=False
        )
        return len(subs)

    def _insert_deliveries(
        self, t: Tx, targets: list[tuple[str, str, int]], *, replay: bool
    ) -> None:
        t.executemany(
            Q.insert_delivery,
            [
                {
                    "id": str(uuid.uuid4()),
                    "kind": kind,
                    "max_attempts": max_attempts,
                    "event_id": event_id,
                    "replay": int(replay),
                    "now": t.now,
                }
                for event_id, kind, max_attempts in targets
            ],
        )

    def register_subscriber(self, sub: Subscriber) -> None:
        validate.subscriber(sub)
        with self.tx() as t:
            t.execute(
                Q.register_subscriber,
                {
                    "name": sub.name,
                    "event_type": sub.event_type,
                    "max_attempts": sub.max_attempts,
                    "now": t.now,
                },
            )

    def subscribers(self, event_type: str) -> list[Subscriber]:
        with self.read() as t:
            rows = t.all(Q.subscribers, {"event_type": event_type})
        return [ROWS.subscriber(r) for r in rows]

    def delete_subscriber(self, name: str, event_type: str = "") -> int:
        validate.kind(name, "subscriber name")
        with self.tx() as t:
            return t.execute(Q.delete_subscriber, {"name": name, "event_type": event_type}).rowcount

    def replay(self, filter: ReplayFilter) -> int:
        params = replay_fields(DIALECT, filter)
        with self.tx() as t:
            # Read every target before inserting, so the SELECT never sees its own writes.
            targets = [
                (r["event_id"], r["kind"], r["max_attempts"])
                for r in t.all(Q.replay_targets, params)
            ]
            self._insert_deliveries(t, targets, replay=True)
        return len(targets)

    def count_replay(self, filter: ReplayFilter) -> tuple[int, int]:
        with self.read() as t:
            row = t.one(Q.count_replay, replay_fields(DIALECT, filter))
        return (row["events"], row["deliveries"]) if row else (0, 0)

    def retain(self, before: datetime, limit: int) -> int:
        cutoff = to_us(validate.required_instant(before, "before"))
        if validate.limit(limit) <= 0:
            return 0
        with self.tx() as t:
            return t.execute(Q.retain, {"before": cutoff, "limit": limit}).rowcount

    # --- admin reads --------------------------------------------------------------------

    def get_event(self, id: uuid.UUID) -> EventAdminRow:
        with self.read() as t:
            row = t.one(Q.get_event, {"id": arg_id(id)})
        if row is None:
            raise errors.NotFound("get event")
        return ROWS.event_admin(row)

    def list_subscriber_views(self, event_type: str = "") -> list[SubscriberView]:
        with self.read() as t:
            rows = t.all(Q.list_subscriber_views, {"event_type": event_type})
        return [ROWS.subscriber_view(r) for r in rows]

    def ops_stats(self) -> OpsStats:
        with self.read() as t:
            r = t.one(Q.ops_stats, {"since": t.now - td_us(timedelta(hours=24))})
        assert r is not None
        return ROWS.ops_stats(r)
