"""``AdminStore.throughput`` on PostgreSQL (rules in ``qctl_store/throughput.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from qctl_store import throughput, validate
from qctl_store.postgres.base import PgBase, queries
from qctl_store.postgres.rows import utc
from qctl_store.types import Source, ThroughputCount

Q = queries("throughput.sql")


class ThroughputMixin(PgBase):
    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        src = validate.source(source).value
        with self.read() as cur:
            now = cur.execute(Q.clock).fetchone()["now"]  # type: ignore[index]

            def kinds_since(since: datetime) -> list[str]:
                rows = cur.execute(Q.kinds, {"source": src, "since": since}).fetchall()
                return [r["kind"] for r in rows]

            def counts(kinds: list[str], since: datetime, width: int) -> throughput.Counts:
                args = {
                    "source": src,
                    "since": since,
                    "kinds": kinds,
                    "width": width,
                    "first_attempt": throughput.first_attempt(
                        cur, Q.attempt_bounds, Q.attempt_probe, utc, since
                    ),
                    "reap_kill": throughput.REAP_KILL_PATTERN,
                }
                rows = cur.execute(Q.counts, args).fetchall()
                return [(r["measure"], r["kind"], r["bucket"], r["n"]) for r in rows]

            return throughput.series(now, window, bucket, kind, kinds_since, counts)
