"""``qctl queues`` on a DBOS database: depths, oldest age, limits."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from qctl.cli.common import Output
from qctl.cli.output import (
    OutputFormat,
    emit_detail,
    emit_rows,
)
from qctl.systems.dbos import reads
from qctl.systems.dbos.cli.base import (
    database,
    for_json,
    for_table,
    from_ms,
    group,
)

app = group("queues")


QUEUE_COLUMNS = [
    "queue_name",
    "enqueued",
    "pending",
    "delayed",
    "oldest_enqueued_age",
    "concurrency",
    "worker_concurrency",
    "rate_limit_max",
    "rate_limit_period_sec",
    "partition_concurrency",
]
QUEUED_COLUMNS = [
    "workflow_id",
    "status",
    "name",
    "priority",
    "queue_partition_key",
    "app_version",
    "created_at",
]


def _with_age(row: dict[str, Any]) -> dict[str, Any]:
    oldest = row["oldest_enqueued_at"]
    age = None if oldest is None else datetime.now(UTC) - from_ms(oldest)  # type: ignore[operator]
    return {**row, "oldest_enqueued_age": age}


@app.command("list")
def queues_list(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: enqueued, running (pending) and delayed workflows, the oldest
    enqueued one's age, and the queue's concurrency and rate limits."""
    rows = reads.queue_stats(database(ctx))
    emit_rows([for_table(_with_age(r)) for r in rows], QUEUE_COLUMNS, output, full=rows)


@app.command("show")
def queues_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="QUEUE", help="Queue name.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """One queue, and its running then enqueued workflows, in the order DBOS dequeues
    them (priority, then oldest first)."""
    from qctl.core.errors import NoSuchName

    db = database(ctx)
    row = next((r for r in reads.queue_stats(db) if r["queue_name"] == name), None)
    if row is None:
        raise NoSuchName("queues show", f"no DBOS queue named {name!r}")
    waiting = reads.queue_workflows(db, name, 50)
    emit_detail(
        output,
        for_table(_with_age(row)),
        {**row, "workflows": [for_json(w) for w in waiting]},
        [([for_table(w) for w in waiting], QUEUED_COLUMNS)],
    )
