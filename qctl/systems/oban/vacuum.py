"""``qctl vacuum`` on an Oban database: what Oban's pruner deletes (finished jobs older
than a cutoff, ``queries/actions.sql`` prune_jobs), for a deployment whose pruner is off,
keeps more than the operator wants, or has no leader.

In short transactions of at most ``VACUUM_BATCH`` rows (fewer while they run long:
``qctl_kit.batches.BatchSize``), in id order after the last id deleted; executing and
waiting jobs are never touched. ``dry_run=True`` counts and deletes nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from qctl.core.parse import retention_age
from qctl.systems.oban import reads
from qctl.systems.oban.database import PY, Database
from qctl_kit.batches import BatchSize, sized_batches
from qctl_kit.config import MAINTENANCE_BATCH_SECONDS

VACUUM_BATCH = 1000


def prune(
    db: Database, older_than: timedelta, dry_run: bool = False, batch: int = VACUUM_BATCH
) -> int:
    """Finished jobs older than ``older_than`` deleted (a dry run: that would be)."""
    db.writable()
    retention_age(older_than)
    q = reads.queries("actions.sql")
    now = (db.one(q.clock) or {})["now"]
    params: dict[str, Any] = {"before": now - older_than, "py": db.flavour == PY, "after": None}
    if dry_run:
        return int((db.one(q.count_prunable, params) or {})["n"])

    def step(_tx: None, size: int) -> int:
        rows = db.all(q.prune_jobs, {**params, "batch": size})
        if rows:
            params["after"] = max(int(r["id"]) for r in rows)
        return len(rows)

    return sized_batches(BatchSize(batch, MAINTENANCE_BATCH_SECONDS), db.transaction, step).rows
