"""What both backends' change streams share (``driver.ChangeNotifier``)."""

from __future__ import annotations

from datetime import UTC, datetime

from qctl_store.types import Change, ChangeEntity


def reset_change() -> Change:
    """The in-band gap signal (azync's ``Change{Entity: reset, At: time.Now()}``): minted
    by the listener, it never travels over the wire or through the log."""
    return Change(entity=ChangeEntity.RESET, at=datetime.now(UTC))
