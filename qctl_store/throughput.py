"""Backend-independent rules of ``AdminStore.throughput``: the bucket grid, the search for
the first attempt row of the window, and folding per-measure counts into rows.

The daily stats table is the only per-kind record of throughput, and it is per day. A
finer series is read from the timestamps the job rows carry, each on an index that
bounds it to the window: ``completed_at`` of succeeded jobs on
``azync_jobs_succeeded_idx``; ``enqueued_at`` of jobs on each live state's partial
index, of dead jobs on ``azync_jobs_dead_idx`` and of succeeded jobs within the
succeeded range; and ``failed_at`` of ``azync_job_attempts``, whose identity key grows
with insertion time, so the window's rows are a primary-key range found by binary
search (``first_id_since``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from qctl_kit.throughput import ThroughputCount, bucket_start, grid
from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.types import Source

Counts = Iterable[tuple[str, str, int, int]]
"""(measure, kind, bucket index, n) rows of a backend's ``counts`` statement."""

MEASURES = ("enqueued", "processed", "failed", "reaped")
REAP_KILL_PATTERN = "lease expired % times"
"""The attempt error the reaper writes when it kills a job (azync's
``driver/azyncpgx/store_maintenance.go``), as a LIKE pattern."""


def first_id_since(
    probe: Callable[[int], tuple[int, datetime] | None], lo: int, hi: int, since: datetime
) -> int:
    """The smallest id from which every row of ``lo..hi`` was written at or after
    ``since``, by binary search over an identity key whose timestamps grow with it;
    ``probe(id)`` is (id, timestamp) of the first row at or after ``id``, or None."""
    hi += 1
    while lo < hi:
        mid = (lo + hi) // 2
        row = probe(mid)
        if row is None or row[1] >= since:
            hi = mid
        else:
            lo = row[0] + 1
    return lo


class Throughput(StoreBase):
    """``AdminStore.throughput`` over three reads each backend writes in its own SQL,
    all in one ``read()``."""

    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        src = validate.source(source).value
        with self.read() as cur:
            return series(
                self._clock(cur),
                window,
                bucket,
                kind,
                lambda since: self._kinds_since(cur, src, since),
                lambda kinds, since, width: self._counts(cur, src, kinds, since, width),
            )

    @abstractmethod
    def _clock(self, cur: Any) -> datetime:
        """The backend's now."""

    @abstractmethod
    def _kinds_since(self, cur: Any, source: str, since: datetime) -> Iterable[str]:
        """The kinds of ``source`` with daily stats from ``since``'s day on."""

    @abstractmethod
    def _counts(
        self, cur: Any, source: str, kinds: list[str], since: datetime, width: int
    ) -> Counts:
        """The window's (measure, kind, bucket index, n) rows for ``fold``, buckets of
        ``width`` seconds from ``since``."""


def series(
    now: datetime,
    window: timedelta,
    bucket: timedelta,
    kind: str,
    kinds_since: Callable[[datetime], Iterable[str]],
    counts: Callable[[list[str], datetime, int], Counts],
) -> list[ThroughputCount]:
    """The series of the grid ending at ``now`` from the backend's two reads:
    ``kinds_since(since)``, the kinds with daily stats from ``since`` on (asked only when
    ``kind`` is ""), and ``counts(kinds, since, width)``, the window's rows for ``fold``."""
    width, first, count = grid(now, window, bucket)
    since = bucket_start(first, width)
    kinds = [validate.kind(kind)] if kind else sorted(kinds_since(since))
    if not kinds:
        return []
    return fold(counts(kinds, since, width), kinds, first, count, width)


def first_attempt(
    cur: Any,
    bounds_sql: str,
    probe_sql: str,
    decode_instant: Callable[[Any], datetime | None],
    since: datetime,
) -> int:
    """``first_id_since`` over ``azync_job_attempts`` with the backend's
    ``attempt_bounds`` and ``attempt_probe`` statements on ``cur`` (a cursor or ``Tx``:
    ``execute(sql, params).fetchone()``); ``decode_instant`` reads ``failed_at``."""
    bounds = cur.execute(bounds_sql, {}).fetchone()
    if bounds is None or bounds["lo"] is None:
        return 0

    def probe(id: int) -> tuple[int, datetime] | None:
        row = cur.execute(probe_sql, {"id": id}).fetchone()
        if row is None:
            return None
        at = decode_instant(row["failed_at"])
        assert at is not None
        return row["id"], at

    return first_id_since(probe, bounds["lo"], bounds["hi"], since)


def fold(
    rows: Counts,
    kinds: Iterable[str],
    first: int,
    count: int,
    width: int,
) -> list[ThroughputCount]:
    """(measure, kind, bucket index, n) rows as one zero-filled series per kind (every
    kind of ``kinds`` and every kind with a count), ordered by kind, then time."""
    series: dict[str, list[ThroughputCount]] = {}

    def of(kind: str) -> list[ThroughputCount]:
        if kind not in series:
            series[kind] = [
                ThroughputCount(kind=kind, start=bucket_start(first + i, width))
                for i in range(count)
            ]
        return series[kind]

    for kind in kinds:
        of(kind)
    for measure, kind, index, n in rows:
        offset = int(index) - first
        if measure in MEASURES and 0 <= offset < count:
            point = of(kind)[offset]
            setattr(point, measure, getattr(point, measure) + int(n))
    return [point for kind in sorted(series) for point in series[kind]]
