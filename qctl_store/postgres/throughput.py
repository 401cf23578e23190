"""``AdminStore.throughput`` on PostgreSQL (rules in ``qctl_store/throughput.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from qctl_store import throughput, validate
from qctl_store.postgres.base import Cursor, PgBase, queries
from qctl_store.types import Source, ThroughputCount

Q = queries("throughput.sql")


def _first_attempt(cur: Cursor, since: datetime) -> int:
    cur.execute(Q.attempt_bounds)
    bounds = cur.fetchone()
    if bounds is None or bounds["lo"] is None:
        return 0

    def probe(id: int) -> tuple[int, datetime] | None:
        cur.execute(Q.attempt_probe, {"id": id})
        row = cur.fetchone()
        return None if row is None else (row["id"], row["failed_at"])

    return throughput.first_id_since(probe, bounds["lo"], bounds["hi"], since)


class ThroughputMixin(PgBase):
    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        args: dict[str, object] = {"source": validate.source(source).value}
        with self.read() as cur:
            cur.execute(Q.clock)
            now = cur.fetchone()["now"]  # type: ignore[index]
            width, first, count = throughput.grid(now, window, bucket)
            since = throughput.bucket_start(first, width)
            args["since"] = since
            if kind:
                kinds = [validate.kind(kind)]
            else:
                cur.execute(Q.kinds, args)
                kinds = sorted(r["kind"] for r in cur.fetchall())
            if not kinds:
                return []
            cur.execute(
                Q.counts,
                {
                    **args,
                    "kinds": kinds,
                    "width": width,
                    "first_attempt": _first_attempt(cur, since),
                    "reap_kill": throughput.REAP_KILL_PATTERN,
                },
            )
            rows = [(r["measure"], r["kind"], r["bucket"], r["n"]) for r in cur.fetchall()]
        return throughput.fold(rows, kinds, first, count, width)
