"""``AdminStore.throughput`` on SQLite (rules in ``qctl_store/throughput.py``): instants
bind as µs, the kinds as a JSON array, the stats day as its UTC ``YYYY-MM-DD``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from qctl_store import throughput, validate
from qctl_store.sqlite.base import US, SqliteBase, from_us, queries, to_us, utc_day
from qctl_store.types import Source, ThroughputCount

Q = queries("throughput.sql")


class ThroughputMixin(SqliteBase):
    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        src = validate.source(source).value
        with self.read() as t:
            now = from_us(t.now)
            assert now is not None

            def kinds_since(since: datetime) -> list[str]:
                day = utc_day(to_us(since) or 0)
                return [r["kind"] for r in t.all(Q.kinds, {"source": src, "since_day": day})]

            def counts(kinds: list[str], since: datetime, width: int) -> throughput.Counts:
                params = {
                    "source": src,
                    "since": to_us(since),
                    "kinds": json.dumps(kinds),
                    "width": width * US,
                    "first_attempt": throughput.first_attempt(
                        t, Q.attempt_bounds, Q.attempt_probe, from_us, since
                    ),
                    "reap_kill": throughput.REAP_KILL_PATTERN,
                }
                return [(r[0], r[1], r[2], r[3]) for r in t.all(Q.counts, params)]

            return throughput.series(now, window, bucket, kind, kinds_since, counts)
