"""``qctl queues`` on a DBOS database: depths, oldest age, limits."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
    emit_detail,
    emit_rows,
)
from qctl.cli.verbs import changed_limits, no_queue_command
from qctl.systems.dbos import reads
from qctl.systems.dbos.cli.base import (
    database,
    for_json,
    for_table,
    from_ms,
    group,
    report,
    writable,
)

app = group("queues")

# DBOS's client and its queues table have no pause; a concurrency of 0 starts nothing.
no_queue_command(
    app,
    "pause",
    "DBOS cannot pause a queue; `qctl queues set-limits QUEUE --concurrency 0` lets none of"
    " its workflows start (running ones finish)",
)
no_queue_command(
    app,
    "resume",
    "DBOS cannot pause a queue; `qctl queues set-limits QUEUE --concurrency none` lifts a"
    " concurrency of 0",
)


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


def _with_age(row: reads.QueueStats) -> dict[str, Any]:
    oldest = from_ms(row["oldest_enqueued_at"])
    age = datetime.now(UTC) - oldest if isinstance(oldest, datetime) else None
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


def _limit(text: str | None, flag: str, kind: type = int) -> Any:
    """A limit as typed: a number, or ``none`` (no limit)."""
    if text is None or text.lower() == "none":
        return None
    try:
        value = kind(text)
    except ValueError:
        from qctl_kit.errors import InvalidInput

        raise InvalidInput(f"{flag}: {text!r} is not a number (or none)") from None
    return value


LIMIT_FLAGS = {
    "concurrency": ("--concurrency", int, "Running at once, across executors."),
    "worker_concurrency": ("--worker-concurrency", int, "Running at once per executor."),
    "rate_limit_max": ("--rate-limit", int, "Started per --rate-period."),
    "rate_limit_period_sec": ("--rate-period", float, "The rate limit's period (seconds)."),
    "partition_concurrency": ("--partition-concurrency", int, "Per partition, at once."),
    "partition_worker_concurrency": (
        "--partition-worker-concurrency",
        int,
        "Per partition and executor.",
    ),
    "partition_rate_limit_max": ("--partition-rate-limit", int, "Per partition and period."),
    "partition_rate_limit_period_sec": (
        "--partition-rate-period",
        float,
        "The partition rate limit's period (seconds).",
    ),
    "polling_interval_sec": ("--polling-interval", float, "How often executors poll (s)."),
}
"""``queues set-limits``' options: DBOS's column, flag, type, help."""


def _limit_option(key: str) -> Any:
    flag, _, text = LIMIT_FLAGS[key]
    return Annotated[str | None, typer.Option(flag, metavar="N", help=f"{text} none: no limit.")]


STOPPING = {"concurrency", "worker_concurrency", "partition_concurrency"}
STOPPING |= {"partition_worker_concurrency"}
"""Limits at which 0 lets no workflow of the queue start."""


def _changes(ctx: typer.Context, **limits: str | None) -> dict[str, Any]:
    return {
        key: _limit(text, LIMIT_FLAGS[key][0], LIMIT_FLAGS[key][1])
        for key, text in limits.items()
        if text is not None
    }


@app.command("set-limits")
@common.with_options("changes", [(k, _limit_option(k), None) for k in LIMIT_FLAGS], _changes)
def queues_set_limits(
    ctx: typer.Context,
    changes: dict[str, Any],
    name: Annotated[str, typer.Argument(metavar="QUEUE", help="Queue name.")],
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Register a queue or change its limits (DBOSClient.register_queue, persisted in
    DBOS's queues table): the limits given replace the queue's, the others stay.
    Executors apply them at their next poll; an application that registers the queue
    at start-up sets its own again then."""
    from qctl.systems.dbos import writes

    db = writable(ctx, "queues set-limits", dry_run)
    planned = writes.set_queue_limits(db, name, changes, dry_run=True)
    what = changed_limits(planned.before, planned.after, STOPPING)
    if not dry_run:
        verb = "Register" if planned.before is None else "Change the limits of"
        common.confirm(f"{verb} DBOS queue {name} ({what})?", yes)
    outcome = planned if dry_run else writes.set_queue_limits(db, name, changes)
    word = "would set" if dry_run else "set"
    report(outcome.__dict__, f"{word} the limits of DBOS queue {name}: {what}", dry_run, output)
