"""Throughput series on a grid of whole buckets, as every system's dashboard charts them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from qctl_kit.errors import InvalidInput
from qctl_kit.values import duration

MAX_BUCKETS = 10_000


@dataclass
class ThroughputCount:
    """One bucket of one kind's throughput: azync's ``AdminStore.throughput``, the
    dashboards' charts of every system.

    ``processed`` counts succeeded jobs by ``completed_at``; ``failed`` the attempt rows
    by ``failed_at``, but for the reaper's kills, which are ``reaped``; ``enqueued`` the
    jobs by ``enqueued_at`` whatever their state now, so a later pause or cancel never
    rewrites the past. On PostgreSQL jobs now paused, cancelled, uncertain or skipped are
    read on the console's index of each state (``tune``) and left out without it
    (``throughput_omits``: nothing else bounds them without reading the whole table). Not
    counted: a reap that returned a job to pending (it writes no attempt row and no
    timestamp of its own; the daily stats count it per day)."""

    kind: str
    start: datetime
    enqueued: int = 0
    processed: int = 0
    failed: int = 0
    reaped: int = 0


def grid(now: datetime, window: timedelta, bucket: timedelta) -> tuple[int, int, int]:
    """(bucket width in seconds, index of the first bucket, bucket count): whole buckets
    of ``bucket`` aligned on the Unix epoch, the last one holding ``now``, together
    covering at least ``window``."""
    duration(window, "window")
    duration(bucket, "bucket")
    width = int(bucket.total_seconds())
    if width < 1 or bucket != timedelta(seconds=width):
        raise InvalidInput("bucket must be a whole number of seconds, at least 1")
    if window <= timedelta(0):
        raise InvalidInput("window must be positive")
    count = math.ceil(window.total_seconds() / width)
    if count > MAX_BUCKETS:
        raise InvalidInput(f"window / bucket is {count} buckets (at most {MAX_BUCKETS})")
    last = int(now.timestamp()) // width
    return width, last - count + 1, count


def bucket_start(index: int, width: int) -> datetime:
    return datetime.fromtimestamp(index * width, UTC)
