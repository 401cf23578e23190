"""``qctl vacuum`` on a hopper database: deleting what hopper's leader leaves, never what
it maintains (``queries/vacuum.sql`` says which is which, from
``driver/internal/pgsql/history.go`` HistoryMaintain at schema version 8).

Each kind of row goes in short transactions of at most ``VACUUM_BATCH`` rows (fewer while
they run long: ``qctl_kit.batches.BatchSize``), each opened by
``Database.transaction`` (which reads the schema version again and refuses any but 8),
in key order after the last key deleted, so a pass never walks what it deleted. No
partition is created, attached or dropped: the leader's partition maintenance and its
advisory lock are left alone, and a batch holds its row locks only briefly.
``dry_run=True`` counts and deletes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from qctl.core.parse import retention_age
from qctl.systems.hopper import reads
from qctl.systems.hopper.database import Database
from qctl_kit.batches import BatchSize, sized_batches
from qctl_kit.config import MAINTENANCE_BATCH_SECONDS
from qctl_kit.errors import InvalidInput, add_done

VACUUM_BATCH = 1000
TARGETS = ("history", "batches", "stream_events")
"""What a vacuum deletes: finalized jobs, finished batches and workflows, delivered
stream events."""


@dataclass
class Vacuumed:
    before: datetime
    """The cutoff: the database's now() less --older-than."""
    counts: dict[str, int] = field(default_factory=dict)
    """Rows deleted (a dry run: that would be) per target."""
    dry_run: bool = False


def vacuum(
    db: Database,
    older_than: timedelta,
    targets: tuple[str, ...] = TARGETS,
    dry_run: bool = False,
    batch: int = VACUUM_BATCH,
) -> Vacuumed:
    """Delete ``targets`` older than ``older_than`` (see ``TARGETS``)."""
    db.require_writable()
    retention_age(older_than)
    unknown = set(targets) - set(TARGETS)
    if unknown:
        raise InvalidInput(f"nothing to vacuum called {', '.join(sorted(unknown))}")
    q = reads.queries("vacuum.sql")
    now = (db.one(reads.queries("reads.sql").clock) or {})["now"]
    outcome = Vacuumed(now - older_than, dry_run=dry_run)
    for target in targets:
        params: dict[str, Any] = {"before": outcome.before, "batch": batch}
        if dry_run:
            outcome.counts[target] = int((db.one(q[f"count_{target}"], params) or {})["n"])
            continue
        try:
            outcome.counts[target] = _delete(db, q[f"vacuum_{target}"], params, target)
        except BaseException as exc:  # the targets before this one are done
            add_done(exc, sum(outcome.counts.values()))
            raise
    return outcome


def _delete(db: Database, statement: str, params: dict[str, Any], target: str) -> int:
    """Batches of one statement, each after the last key the one before deleted, until one
    comes back short; rows deleted."""
    if target == "stream_events":
        params.update(after_xid="0", after_seq=0)
    else:
        params["after"] = None

    def step(_tx: None, batch: int) -> int:
        rows = db.all(statement, {**params, "batch": batch})
        if target == "stream_events" and rows:
            xid, seq = max((int(r["xid"]), int(r["seq"])) for r in rows)
            params.update(after_xid=str(xid), after_seq=seq)
        elif rows:
            params["after"] = max(r["id"] for r in rows)
        return len(rows)

    size = BatchSize(params["batch"], MAINTENANCE_BATCH_SECONDS)
    return sized_batches(size, db.transaction, step).rows
