"""Maintenance passes on PostgreSQL: promotion, reaping, vacuums and the dev reset
(azync's ``driver/azyncpgx/store_maintenance.go`` and ``store_admin.go``).

Bulk work runs in batches of at most ``config.maintenance_batch`` rows (fewer when a
batch's transaction runs long: ``batches.batched_tx``), each batch its own transaction,
repeated until a batch comes back short: no statement or transaction ever holds
millions of rows, and concurrent maintainers split the work (SKIP LOCKED).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from qctl_kit import errors
from qctl_kit.postgres.connect import Cursor
from qctl_kit.sqlfile import fill
from qctl_store import validate
from qctl_store.batches import Nuke, batched_tx, reap_batches
from qctl_store.listing import kind_clause, stats_retention_days
from qctl_store.postgres.base import PgBase, queries, seconds
from qctl_store.postgres.rows import DIALECT
from qctl_store.types import Source

Q = queries("maintenance.sql")

ESTIMATE_REFRESH_ROWS = 10_000
"""Rows a bulk change touches from which the planner's statistics of ``azync_jobs`` are
refreshed right after it (ANALYZE): estimated counts come from them, and autovacuum's
next analyze may be minutes away, so a vacuum or a bulk retry of a hundred thousand jobs
would leave them visibly wrong meanwhile."""


def refreshed(store: PgBase, changed: int) -> int:
    """``changed``, after refreshing the job table's statistics when it is large enough
    (best effort: behind a lock, or for a role that does not own the table, they are
    left to autovacuum)."""
    if changed >= ESTIMATE_REFRESH_ROWS and not store.config.read_only:
        try:
            with store.tx() as cur:
                cur.execute(Q.analyze_jobs)
        except errors.StoreError:
            pass
    return changed


def run_batches(store: PgBase, sql: str, args: dict[str, Any]) -> int:
    """``batches.batched_tx`` of one ``LIMIT %(batch)s`` statement; the rows affected."""

    def step(cur: Cursor, batch: int) -> int:
        cur.execute(sql, {**args, "batch": batch})
        return cur.rowcount

    return refreshed(store, batched_tx(store, step))


def keyset_batches(store: PgBase, sql: str, args: dict[str, Any], key: tuple[str, ...]) -> int:
    """``batches.batched_tx`` of one statement that picks a batch in an index's order
    after the last batch's ``key`` columns (bound as ``after_<column>``, NULL for the
    first batch) and returns how many rows it ``picked``, how many of them it changed
    (``n``: a row another session changed first is picked, not changed) and its last key,
    ordered by the server (kind's collation is not Python's); the rows changed. The walk
    goes on while batches are picked full."""
    after: dict[str, Any] = {f"after_{c}": None for c in key}
    changed = 0

    def step(cur: Cursor, batch: int) -> int:
        nonlocal changed
        row = cur.execute(sql, {**args, **after, "batch": batch}).fetchone()
        if row is None:
            return 0
        after.update({f"after_{c}": row[c] for c in key})
        changed += int(row["n"])
        return int(row["picked"])

    batched_tx(store, step)
    return refreshed(store, changed)


class MaintenanceMixin(Nuke, PgBase):
    def promote_due(self, source: Source, kinds: list[str]) -> int:
        if not kinds:
            return 0
        args = {"source": validate.source(source).value, "kinds": validate.kinds(kinds)}
        return run_batches(self, Q.promote_due, args)

    def reap_expired(self, source: Source, kinds: list[str], max_reaps: int) -> tuple[int, int]:
        if not kinds:
            return 0, 0
        source = validate.source(source)
        args = {
            "source": source.value,
            "kinds": validate.kinds(kinds),
            "max_reaps": validate.non_negative(max_reaps, "max_reaps"),
        }
        return reap_batches(
            self,
            source,
            lambda cur, batch: cur.execute(Q.reap_expired, {**args, "batch": batch}).fetchall(),
        )

    def vacuum_stats(self, source: Source, retention: timedelta) -> int:
        source = validate.source(source)
        if not (days := stats_retention_days(retention)):
            return 0
        with self.tx() as cur:
            cur.execute(Q.vacuum_stats, {"source": source.value, "days": days})
            return cur.rowcount

    def vacuum_idempotency(self, source: Source) -> int:
        with self.tx() as cur:
            cur.execute(Q.vacuum_idempotency, {"source": validate.source(source).value})
            return cur.rowcount

    def vacuum_completed(self, source: Source, retention: timedelta) -> int:
        source = validate.source(source)
        if not validate.retention(retention):
            return 0  # zero retention keeps everything (azync's rule)
        args = {"source": source.value, "retention": retention.total_seconds()}
        return keyset_batches(self, Q.vacuum_completed, args, ("completed_at", "id"))

    def vacuum_dead(self, source: Source, kind: str, older_than: timedelta) -> int:
        where, args = kind_clause(DIALECT, source, kind)
        args["older_than"] = seconds(older_than, "older_than")
        return run_batches(self, fill(Q.vacuum_dead, where=where), args)
