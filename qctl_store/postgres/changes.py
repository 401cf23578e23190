"""Change hints (``driver.ChangeNotifier``) on PostgreSQL: LISTEN ``azync_changes``.

azync's migration 00011 triggers notify every job/DAG insert and state change and every
ledger append on the fixed channel ``azync_changes``, shared by every schema of the
database; the payload names its schema and carries ids, kind, task key and state only
(azync's migration ``00011_change_notify_triggers.sql`` and ``changes.go``). This mixin
runs one dedicated LISTEN connection per store (the generic reconnecting
``listener.Listener``), keeps the payloads of this store's schema (the configured one,
else ``current_schema()``), and fans them out through a ``Hub`` (buffer 256 per
subscriber). Every successful LISTEN, the first and every reconnect, resets every
subscriber; a subscription made while disconnected gets its opening reset when the
connection comes up; an overflowing subscriber is owed a reset.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime
from typing import Any

from qctl_kit import errors
from qctl_kit.postgres.listener import Listener
from qctl_kit.streams import Hub, Subscription
from qctl_store.config import CHANGE_BUFFER, CHANGES_CHANNEL
from qctl_store.hints import reset_change
from qctl_store.postgres.base import PgBase
from qctl_store.types import Change, ChangeEntity, Source

_STRING_KEYS = ("schema", "entity", "source", "id", "dagId", "kind", "taskKey", "state")
_WIRE_ENTITIES = {ChangeEntity.JOB, ChangeEntity.DAG, ChangeEntity.EVENT}


def _typed(wire: dict[str, Any]) -> dict[str, Any] | None:
    """The payload's keys with JSON null treated as absent, or None when a key has the
    wrong type (Go's decoder rejects the whole payload then)."""
    out = {k: v for k, v in wire.items() if v is not None}
    for key in _STRING_KEYS:
        if key in out and not isinstance(out[key], str):
            return None
    for key in ("atMs", "count"):
        if key in out and (isinstance(out[key], bool) or not isinstance(out[key], int)):
            return None
    if "bulk" in out and not isinstance(out["bulk"], bool):
        return None
    return out


def parse_change(payload: str) -> tuple[Change, str] | None:
    """One ``azync_changes`` payload as ``(change, schema)``; None drops it: invalid
    JSON, no schema, an unknown entity (``reset`` included), a bad id or dag id on a
    per-row hint, or a source this contract does not know."""
    try:
        wire = json.loads(payload)
    except ValueError:
        return None
    w = _typed(wire) if isinstance(wire, dict) else None
    if w is None or not w.get("schema"):
        return None
    try:
        entity = ChangeEntity(w.get("entity", ""))
        source = Source(w["source"]) if w.get("source") else None
    except ValueError:
        return None
    if entity not in _WIRE_ENTITIES:
        return None
    change = Change(
        entity=entity,
        source=source,
        kind=w.get("kind", ""),
        task_key=w.get("taskKey", ""),
        state=w.get("state", ""),
        at=datetime.fromtimestamp(w["atMs"] / 1000, UTC) if "atMs" in w else None,
        bulk=w.get("bulk", False),
        count=w.get("count", 0),
    )
    if not change.bulk:  # a bulk hint has no id: refetch the partition
        try:
            change.id = uuid.UUID(w.get("id", ""))
            change.dag_id = uuid.UUID(w["dagId"]) if w.get("dagId") else None
        except ValueError:
            return None
    return change, w["schema"]


def _schema_needle(schema: str) -> str:
    """A substring every payload of ``schema`` contains: the schema as a JSON string.

    Every schema of the database shares the channel, and parsing a payload costs about
    forty times this check, so a storm in another schema would otherwise keep the
    listener busy for seconds. A schema that JSON would escape gets no needle (``""``
    is in every payload): it is filtered after parsing only.
    """
    needle = json.dumps(schema, ensure_ascii=False)
    return needle if needle[1:-1] == schema else ""


class ChangesMixin(PgBase):
    # Class-level defaults: the mixin has no constructor of its own. The lock is shared
    # by every store of the process, and only guards a few assignments.
    _changes_lock = threading.Lock()
    _changes_hub: Hub[Change] | None = None
    _changes_listener: Listener | None = None
    _changes_schema = ""
    _changes_needle = ""
    _changes_closed = False

    def changes(self) -> Subscription[Change] | None:
        if self.config.poll_only:
            return None
        if self._closed or self._changes_closed:
            raise errors.Unavailable("listener is closed")
        schema = self._changes_schema or self._change_schema()
        with self._changes_lock:
            if self._changes_closed:
                raise errors.Unavailable("listener is closed")
            if self._changes_hub is None:
                self._changes_schema = schema
                self._changes_needle = _schema_needle(schema)
                self._changes_hub = Hub(
                    CHANGE_BUFFER, reset=reset_change, on_first=self._start_changes
                )
            hub = self._changes_hub
        return hub.subscribe()

    def _change_schema(self) -> str:
        """The schema whose payloads this store keeps: the configured one, else the
        connection's ``current_schema()``."""
        if self.schema:
            return self.schema
        with self.read() as cur:
            row = cur.execute("SELECT current_schema() AS schema").fetchone()
        if row is None or not row["schema"]:
            raise errors.SchemaNotMigrated(
                "current_schema() resolves to nothing; has `qctl db migrate` created the schema?"
            )
        return str(row["schema"])

    def _start_changes(self) -> None:
        hub = self._changes_hub
        assert hub is not None
        listener = Listener(
            connect=self.connect,
            channel=CHANGES_CHANNEL,
            on_notify=self._on_change_payload,
            on_live=hub.set_live,
            # While down, a new subscriber's opening reset waits for the reconnect.
            on_down=lambda: hub.set_live(False),
            logger=self.config.logger,
            name="qctl-pg-changes",
        )
        with self._changes_lock:
            if self._changes_closed:
                return
            self._changes_listener = listener
        listener.start()

    def _on_change_payload(self, payload: str) -> None:
        if self._changes_needle not in payload:
            return  # another schema's hint, skipped without parsing it
        parsed = parse_change(payload)
        hub = self._changes_hub
        if parsed is None or hub is None:
            return
        change, schema = parsed
        if schema == self._changes_schema:  # other schemas share the channel
            hub.publish(change)

    def _close_listeners(self) -> None:
        with self._changes_lock:
            self._changes_closed = True
            listener, hub = self._changes_listener, self._changes_hub
        if listener is not None:
            listener.close()
        if hub is not None:
            hub.close()
        super()._close_listeners()
