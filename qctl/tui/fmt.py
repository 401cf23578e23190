"""Small text formatters shared by the dashboard's screens (pure). Text from the database
goes through ``qctl.core.sanitize`` here (``safe``, ``one_line``, ``heading``)."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from rich.text import Text

from qctl.core.sanitize import sanitize
from qctl_kit.decode import FarInstant, Instant, fold
from qctl_kit.throughput import ThroughputCount

BLOCKS = " ▁▂▃▄▅▆▇█"

STATE_STYLES = {
    "pending": "cyan",
    "scheduled": "blue",
    "active": "bold yellow",
    "dead": "bold red",
    "paused": "magenta",
    "succeeded": "green",
    "blocked": "grey50",
    "waiting": "bright_blue",
    "cancelled": "grey42",
    "uncertain": "bold bright_red",
    "skipped": "grey62",
    "running": "yellow",
    "suspended": "bold magenta",
    "compensating": "bold bright_red",
    "failed": "bold red",
}


def state_style(state: str) -> str:
    return STATE_STYLES.get(str(state), "")


def state_text(state: StrEnum) -> Text:
    return Text(state.value, state_style(state))


def heading(name: str, id: uuid.UUID, state: StrEnum) -> Text:
    """``name id state``: how a record's detail begins."""
    return Text.assemble((f"{safe(name)} ", "bold"), (f"{id}  ", "dim"), state_text(state))


def short_id(value: uuid.UUID | None) -> str:
    return "" if value is None else str(value)[:8]


def duration(td: timedelta | float | None) -> str:
    """``3d4h``, ``2h05m``, ``4m12s``, ``9s``, ``0.25s``, ``12.3s``: two units at most;
    below a minute a fraction is kept (a workflow step of 12.3 s is not one of 12 s)."""
    if td is None:
        return ""
    secs = td.total_seconds() if isinstance(td, timedelta) else float(td)
    sign = "-" if secs < 0 else ""
    secs = abs(secs)
    if secs != int(secs) and round(secs, 1) < 60:
        return f"{sign}{secs:.2f}s" if secs < 10 else f"{sign}{secs:.1f}s"
    s = int(secs)
    d, s = divmod(s, 86_400)
    h, s = divmod(s, 3_600)
    m, s = divmod(s, 60)
    if d:
        return f"{sign}{d}d{h}h"
    if h:
        return f"{sign}{h}h{m:02d}m"
    if m:
        return f"{sign}{m}m{s:02d}s"
    return f"{sign}{s}s"


def when(at: Instant | None, now: datetime | None = None) -> str:
    """An instant as ``HH:MM:SS`` today (UTC), else ``MM-DD HH:MM``; one out of
    ``datetime``'s range as stored (``infinity``)."""
    if at is None:
        return ""
    if isinstance(at, FarInstant):
        return sanitize(at)
    now = now or datetime.now(UTC)
    at = at.astimezone(UTC)
    if at.date() == now.date():
        return at.strftime("%H:%M:%S")
    return at.strftime("%m-%d %H:%M")


def full(at: Instant | None, now: datetime | None = None) -> str:
    """A detail's instant: ``2026-12-01 21:30:00 UTC (4m ago)``; one out of
    ``datetime``'s range as stored (``infinity``)."""
    if not isinstance(at, datetime):
        return when(at)
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC ({ago(at, now)})"


def ago(at: Instant | None, now: datetime | None = None) -> str:
    if at is None:
        return ""
    if isinstance(at, FarInstant):
        return sanitize(at)
    now = now or datetime.now(UTC)
    delta = now - at
    return f"{duration(delta)} ago" if delta >= timedelta(0) else f"in {duration(-delta)}"


def sparkline(values: Sequence[int | float], width: int = 0) -> str:
    vals = list(values)[-width:] if width else list(values)
    if not vals:
        return ""
    top = max(vals)
    if top <= 0:
        return BLOCKS[1] * len(vals)
    return "".join(BLOCKS[max(1, round(v / top * (len(BLOCKS) - 1)))] if v else " " for v in vals)


SPARK_MIN = 5
"""Narrower than this, a chart shows its numbers only."""


def live_text(
    live: dict[str, list[ThroughputCount]], width: int = 26, rows: int = 3, what: str = "processed"
) -> Text:
    """The busiest ``rows`` series of the last hour (a kind, a workflow name), one
    sparkline of ``processed`` per bucket each (``width`` 0: none), with the hour's
    processed and failed totals; ``what`` names what ``processed`` counts."""
    text = Text()
    busy = sorted(live.items(), key=lambda kv: (-sum(p.processed + p.failed for p in kv[1]), kv[0]))
    text.append(f"last hour per minute, {what}", "bold")
    if not busy:
        text.append(f"\n  nothing {what}", "dim")
    for label, points in busy[:rows]:
        processed = [p.processed for p in points]
        failed = sum(p.failed for p in points)
        text.append(f"\n{middle(safe(label), 10):>10} ", "bold")
        if width:
            text.append(f"{sparkline(processed, width):<{width}}", "green")
        text.append(f" {sum(processed):>4}")
        text.append(f" {failed:>3}✗", "red" if failed else "dim")
    return text


def middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in its middle where longer, keeping
    both ends ("appr…ved"): two kinds that share a long prefix never look the same."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    tail = (width - 1) // 2
    return f"{text[: width - 1 - tail]}…{text[len(text) - tail :]}"


def bar(value: int, total: int, width: int = 12) -> str:
    if total <= 0 or value <= 0:
        return ""
    n = max(1, round(value / total * width))
    return "█" * n


def safe(text: str) -> str:
    """Database text for a detail view: control characters and escape sequences shown
    escaped, line breaks kept."""
    return sanitize(text, multiline=True)


def json_text(value: Any, limit: int = 0) -> str:
    # ASCII: every control escaped; folded as every view folds (dumps recurses).
    text = json.dumps(fold(value), sort_keys=True, default=str)
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def any_text(value: Any) -> str:
    """A stored value as every screen writes it, in a cell or a detail line (the
    command line's ``qctl.cli.output.cell`` alike): None empty, a boolean yes or no, a
    list or mapping as JSON (``json_text``, hostile depths folded), anything else its
    text sanitised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | dict):
        return json_text(value)
    return safe(str(value))


def record_lines(record: dict[str, Any], json_keys: Sequence[str] = ()) -> list[str]:
    """A record's ``key: value`` lines for its detail (``any_text``), the empty ones
    left out; ``json_keys`` are documents, shown as JSON whatever their type (a JSON
    string payload quoted)."""
    return [
        f"{key}: {json_text(value) if key in json_keys else any_text(value)}"
        for key, value in record.items()
        if value not in (None, "", [])
    ]


def one_line(text: str, limit: int = 60) -> str:
    text = " ".join(safe(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counts_summary(counts: dict[Any, int]) -> Text:
    """``succeeded 3 · pending 1`` coloured per state, most advanced states first."""
    text = Text()
    grouped: dict[str, int] = defaultdict(int)
    for state, n in counts.items():
        grouped[str(state)] += n
    for i, (state, n) in enumerate(sorted(grouped.items())):
        if i:
            text.append(" · ", "dim")
        text.append(f"{state} {n}", state_style(state))
    return text
