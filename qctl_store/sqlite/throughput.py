"""``AdminStore.throughput``'s reads on SQLite (rules in ``qctl_store/throughput.py``):
instants bind as µs, the kinds as a JSON array, the stats day as its UTC ``YYYY-MM-DD``."""

from __future__ import annotations

import json
from datetime import datetime

from qctl_store import throughput
from qctl_store.sqlite.base import US, SqliteBase, Tx, from_us, queries, to_us, utc_day

Q = queries("throughput.sql")


class ThroughputMixin(throughput.Throughput, SqliteBase):
    def _clock(self, cur: Tx) -> datetime:
        now = from_us(cur.now)
        assert now is not None
        return now

    def _kinds_since(self, cur: Tx, source: str, since: datetime) -> list[str]:
        day = utc_day(to_us(since) or 0)
        return [r["kind"] for r in cur.all(Q.kinds, {"source": source, "since_day": day})]

    def _counts(
        self, cur: Tx, source: str, kinds: list[str], since: datetime, width: int
    ) -> throughput.Counts:
        params = {
            "source": source,
            "since": to_us(since),
            "kinds": json.dumps(kinds),
            "width": width * US,
            "first_attempt": throughput.first_attempt(
                cur, Q.attempt_bounds, Q.attempt_probe, from_us, since
            ),
            "reap_kill": throughput.REAP_KILL_PATTERN,
        }
        return [(r[0], r[1], r[2], r[3]) for r in cur.all(Q.counts, params)]
