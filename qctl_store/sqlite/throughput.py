"""``AdminStore.throughput`` on SQLite (rules in ``qctl_store/throughput.py``)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from qctl_store import throughput, validate
from qctl_store.sqlite.base import US, SqliteBase, Tx, from_us, queries, to_us, utc_day
from qctl_store.types import Source, ThroughputCount

Q = queries("throughput.sql")


def _first_attempt(t: Tx, since: datetime) -> int:
    bounds = t.one(Q.attempt_bounds)
    if bounds is None or bounds["lo"] is None:
        return 0

    def probe(id: int) -> tuple[int, datetime] | None:
        row = t.one(Q.attempt_probe, {"id": id})
        return None if row is None else (row["id"], from_us(row["failed_at"]))  # type: ignore[return-value]

    return throughput.first_id_since(probe, bounds["lo"], bounds["hi"], since)


class ThroughputMixin(SqliteBase):
    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        args: dict[str, object] = {"source": validate.source(source).value}
        with self.read() as t:
            now = from_us(t.now)
            assert now is not None
            width, first, count = throughput.grid(now, window, bucket)
            since = throughput.bucket_start(first, width)
            args["since"] = to_us(since)
            if kind:
                kinds = [validate.kind(kind)]
            else:
                rows = t.all(Q.kinds, {**args, "since_day": utc_day(to_us(since) or 0)})
                kinds = sorted(r["kind"] for r in rows)
            if not kinds:
                return []
            params = {
                **args,
                "kinds": json.dumps(kinds),
                "width": width * US,
                "first_attempt": _first_attempt(t, since),
                "reap_kill": throughput.REAP_KILL_PATTERN,
            }
            counts = [(r[0], r[1], r[2], r[3]) for r in t.all(Q.counts, params)]
        return throughput.fold(counts, kinds, first, count, width)
