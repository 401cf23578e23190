"""Maintenance sweeps on SQLite: promote due jobs, reap expired leases, vacuums.

Bulk work runs in batches of at most ``config.maintenance_batch`` rows (fewer when a
batch's transaction runs long: ``batches.batched_tx``), each batch its own short write
transaction, so other processes sharing the file interleave between batches instead of
waiting for one long lock.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from typing import Any

from qctl_kit import values
from qctl_kit.sqlfile import fill
from qctl_store import validate
from qctl_store.batches import Nuke, batched_tx, reap_batches
from qctl_store.listing import kind_clause, stats_retention_days
from qctl_store.sqlite.base import US, SqliteBase, Tx, queries, td_us, utc_day
from qctl_store.sqlite.jobs import insert_attempt
from qctl_store.sqlite.rows import DIALECT
from qctl_store.types import Source

Q = queries("maintenance.sql")


def run_batches(store: SqliteBase, sql: str, params: dict[str, Any]) -> int:
    """``batches.batched_tx`` of one ``LIMIT :batch`` statement; the rows affected."""
    return batched_tx(
        store, lambda t, batch: t.execute(sql, {**params, "now": t.now, "batch": batch}).rowcount
    )


def _kinds(kinds: list[str]) -> str:
    return json.dumps(validate.kinds(kinds))


class MaintenanceMixin(Nuke, SqliteBase):
    def promote_due(self, source: Source, kinds: list[str]) -> int:
        source = validate.source(source)
        if not kinds:
            return 0
        return run_batches(self, Q.promote_due, {"source": source.value, "kinds": _kinds(kinds)})

    def reap_expired(self, source: Source, kinds: list[str], max_reaps: int) -> tuple[int, int]:
        source = validate.source(source)
        validate.non_negative(max_reaps, "max_reaps")
        if not kinds:
            return 0, 0
        params = {"source": source.value, "kinds": _kinds(kinds), "max_reaps": max_reaps}

        def step(t: Tx, batch: int) -> list[sqlite3.Row]:
            rows = t.all(Q.reap_expired, {**params, "now": t.now, "batch": batch})
            for r in rows:
                if r["died"]:
                    insert_attempt(t, r["id"], r["attempt"], r["last_error"])
            return rows

        return reap_batches(self, source.value, step)

    def vacuum_stats(self, source: Source, retention: timedelta) -> int:
        source = validate.source(source)
        if not (days := stats_retention_days(retention)):
            return 0
        with self.tx() as t:
            cutoff = utc_day(t.now - days * 86_400 * US)
            return t.execute(
                Q.vacuum_stats, {"source": source.value, "cutoff_day": cutoff}
            ).rowcount

    def vacuum_idempotency(self, source: Source) -> int:
        source = validate.source(source)
        with self.tx() as t:
            return t.execute(Q.vacuum_idempotency, {"source": source.value, "now": t.now}).rowcount

    def vacuum_completed(self, source: Source, retention: timedelta) -> int:
        source = validate.source(source)
        if not validate.retention(retention):
            return 0
        return run_batches(
            self, Q.vacuum_completed, {"source": source.value, "retention": td_us(retention)}
        )

    def vacuum_dead(self, source: Source, kind: str, older_than: timedelta) -> int:
        where, params = kind_clause(DIALECT, source, kind)
        params["older_than"] = td_us(values.duration(older_than, "older_than"))
        return run_batches(self, fill(Q.vacuum_dead, where=where), params)
