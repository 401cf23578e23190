"""How DBOS's values are drawn: statuses coloured, epoch milliseconds as times, decoded
payloads as their text (escaped by ``qctl.tui.fmt``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from qctl.tui import fmt
from qctl_kit.decode import Instant, elapsed, from_epoch

STATUS_STYLES = {
    "PENDING": fmt.state_style("running"),
    "ENQUEUED": fmt.state_style("pending"),
    "DELAYED": fmt.state_style("scheduled"),
    "SUCCESS": fmt.state_style("succeeded"),
    "ERROR": fmt.state_style("failed"),
    "CANCELLED": fmt.state_style("cancelled"),
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED": fmt.state_style("dead"),
}


def status(value: str) -> Text:
    return Text(value, STATUS_STYLES.get(value, ""))


def instant(ms: Any) -> Instant | None:
    return from_epoch(ms, 1000)


def ago(ms: Any, now: datetime) -> str:
    """How long ago, as ``fmt.ago`` (a ``Column``'s ``time``)."""
    return fmt.ago(instant(ms), now)


def when(ms: Any, now: datetime) -> str:
    """``HH:MM:SS`` today, else ``MM-DD HH:MM`` (UTC)."""
    return fmt.when(instant(ms), now)


def full(ms: Any, now: datetime) -> str:
    """A detail's instant: ``2026-12-01 21:30:00 UTC (4m ago)``."""
    return fmt.full(instant(ms), now)


def took(start_ms: Any, end_ms: Any) -> str:
    span = elapsed(instant(start_ms), instant(end_ms))
    return "" if span is None else fmt.duration(span)


def value(decoded: Any, limit: int = 80) -> str:
    """A decoded payload (``payload.Decoded``) or database text, on one line."""
    if decoded is None:
        return ""
    text = decoded.text() if hasattr(decoded, "text") else str(decoded)
    return fmt.one_line(text, limit)
