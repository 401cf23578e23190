"""``AdminStore.throughput``'s reads on PostgreSQL (rules in ``qctl_store/throughput.py``)."""

from __future__ import annotations

from datetime import datetime

from qctl_kit.postgres.connect import Cursor
from qctl_kit.sqlfile import fill
from qctl_store import throughput
from qctl_store.postgres.admin import STATE_INDEXES, UNINDEXED_STATES, console_indexes_of
from qctl_store.postgres.base import PgBase, queries
from qctl_store.postgres.rows import utc
from qctl_store.types import JobState

Q = queries("throughput.sql")


class ThroughputMixin(throughput.Throughput, PgBase):
    def _clock(self, cur: Cursor) -> datetime:
        return cur.execute(Q.clock).fetchone()["now"]  # type: ignore[index]

    def _kinds_since(self, cur: Cursor, source: str, since: datetime) -> list[str]:
        rows = cur.execute(Q.kinds, {"source": source, "since": since}).fetchall()
        return [r["kind"] for r in rows]

    def _counts(
        self, cur: Cursor, source: str, kinds: list[str], since: datetime, width: int
    ) -> throughput.Counts:
        args = {
            "source": source,
            "since": since,
            "kinds": kinds,
            "width": width,
            "first_attempt": throughput.first_attempt(
                cur, Q.attempt_bounds, Q.attempt_probe, utc, since
            ),
            "reap_kill": throughput.REAP_KILL_PATTERN,
        }
        indexed = console_indexes_of(cur)
        sql = fill(
            Q.counts,
            **{s.value: str(STATE_INDEXES[s] in indexed).upper() for s in UNINDEXED_STATES},
        )
        rows = cur.execute(sql, args).fetchall()
        return [(r["measure"], r["kind"], r["bucket"], r["n"]) for r in rows]

    def throughput_omits(self) -> list[JobState]:
        with self.read() as cur:
            indexed = console_indexes_of(cur)
        return [s for s in UNINDEXED_STATES if STATE_INDEXES[s] not in indexed]
