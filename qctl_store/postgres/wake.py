"""Wakeups on the store's NOTIFY channel (azync's ``driver/azyncpgx/listener.go``).

Writers send ``pg_notify(<channel>, '<source>:<kind>')`` (``PgBase.notify_in_tx`` and
``notify_after_commit``); ``wake()`` subscribes to them through one lazily started
LISTEN connection per store. Each subscriber has a buffer of 64 wakes and a full buffer
drops silently: a wake is only a hint, and pollers catch up anyway.
"""

from __future__ import annotations

import threading

from qctl_kit import errors
from qctl_kit.postgres.listener import Listener
from qctl_kit.streams import Hub, Subscription
from qctl_store.config import WAKE_BUFFER
from qctl_store.postgres.base import PgBase
from qctl_store.types import Source, Wake

_lazy_init = threading.Lock()


def parse_wake(payload: str) -> Wake | None:
    """``"<source>:<kind>"`` split on the first colon (kinds may contain colons).
    None for a payload azync drops (no colon, empty source or kind) and for a source
    that is not one of azync's four."""
    source, colon, kind = payload.partition(":")
    if not colon or not source or not kind:
        return None
    try:
        return Wake(source=Source(source), kind=kind)
    except ValueError:
        return None


class WakeMixin(PgBase):
    _wake_hub: Hub[Wake] | None = None
    _wake_listener: Listener | None = None

    def wake(self) -> Subscription[Wake] | None:
        if self.config.poll_only:
            return None
        with _lazy_init:
            if self._closed:
                raise errors.Unavailable("listener is closed")
            if self._wake_hub is None:
                listener = Listener(
                    connect=self.connect,
                    channel=self.config.channel,
                    on_notify=self._on_wake_payload,
                    logger=self.config.logger,
                )
                self._wake_listener = listener
                self._wake_hub = Hub(WAKE_BUFFER, on_first=listener.start)
            hub = self._wake_hub
        return hub.subscribe()

    def _on_wake_payload(self, payload: str) -> None:
        wake = parse_wake(payload)
        if wake is not None and self._wake_hub is not None:
            self._wake_hub.publish(wake)

    def _close_listeners(self) -> None:
        with _lazy_init:
            listener, hub = self._wake_listener, self._wake_hub
        if listener is not None:
            listener.close()
        if hub is not None:
            hub.close()
        super()._close_listeners()
