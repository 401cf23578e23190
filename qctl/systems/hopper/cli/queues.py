"""``qctl queues`` on a hopper database: list, pause, resume, limit (hopper's own
``hopper queues list|pause|resume|limit``, with the same notices to its clients) and
throughput."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows, note
from qctl.cli.verbs import changed_limits, queue_command
from qctl.core.audit import describe
from qctl.core.parse import ParseError
from qctl.core.sqldb import row_record
from qctl.systems.hopper import actions, reads
from qctl.systems.hopper.cli import database, group, writable

app = group("queues")

COLUMNS = [
    "queue",
    "paused",
    "available",
    "scheduled",
    "retryable",
    "running",
    "pending",
    "oldest_available",
    "completed_last_minute",
    "global_limit",
    "rate_per_sec",
    "rate_burst",
    "partition_limit",
    "aging_seconds",
]

NameArg = Annotated[str, typer.Argument(metavar="QUEUE", help="Queue name.")]


def queue_rows(db: Any) -> list[dict[str, Any]]:
    """Every queue hopper knows or has live jobs in: its depths and its limits."""
    limits = {q.name: row_record(q) for q in reads.list_queues(db)}
    rows = []
    for depth in reads.queue_depths(db):
        row = {**row_record(depth), **limits.get(depth.queue, {})}
        row.pop("name", None)
        rows.append(row)
    return rows


@app.command("list")
def list_queues(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: pause, live jobs by state, how long the oldest claimable job has
    waited, completions in the last minute, and its cluster-wide limits (empty:
    unlimited). The states are counted on `qctl db tune`'s index where it exists, else
    by reading every live job (hopper's schema has no index that tells them apart)."""
    emit_rows(queue_rows(database(ctx)), COLUMNS, output)


def _said(c: actions.LimitsChanged) -> str:
    """What a change of limits does: its dry run, its question and its result."""
    new = " (a new queue row)" if c.before is None else ""
    return f"set the limits of hopper queue {c.queue}{new}: {changed_limits(c.before, c.limits)}"


queue_command(
    app,
    actions.PAUSE,
    writable,
    "Stop every client claiming from queues, as hopper's QueuePause does (paused_at set,"
    " a queue row made where hopper has none, NOTIFY hopper_control pause:QUEUE). Running"
    " jobs finish.",
)
queue_command(
    app,
    actions.RESUME,
    writable,
    "Let clients claim from paused queues again, as hopper's QueueResume does (paused_at"
    " cleared, NOTIFY hopper_control resume:QUEUE).",
)


@app.command("limit")
def limit(
    ctx: typer.Context,
    name: NameArg,
    global_: Annotated[
        int, typer.Option("--global", min=0, help="Max running jobs across all clients.")
    ] = 0,
    rate: Annotated[
        float, typer.Option("--rate", min=0, help="Max claims per second across all clients.")
    ] = 0.0,
    burst: Annotated[int, typer.Option("--burst", min=0, help="Token bucket size for --rate.")] = 0,
    partition: Annotated[
        int, typer.Option("--partition", min=0, help="Max running jobs per partition key.")
    ] = 0,
    aging: Annotated[
        str | None,
        typer.Option(
            "--aging", metavar="DURATION", help="Raise a waiting job's priority per this period."
        ),
    ] = None,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Replace the queue's cluster-wide limits, as ``hopper queues limit`` does: a limit
    not given (or 0) is removed; NOTIFY hopper_control limit:QUEUE."""
    age = common.duration(aging, "--aging") or timedelta(0)
    db = writable(ctx, "queues limit", dry_run)

    def set_limits(dry: bool) -> actions.LimitsChanged:
        return actions.set_limits(db, name, global_, rate, burst, partition, age, dry)

    plan = set_limits(True)
    target = describe(common.cli(ctx).audit_where())
    said = _said(plan)
    if common.proceed(dry_run, yes, output, plan, said, f"S{said[1:]} on {target}?"):
        result = set_limits(False)
        common.done(result, _said(result), output)


BUCKETS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1)}


@app.command("throughput")
def throughput(
    ctx: typer.Context,
    last: Annotated[
        str, typer.Option("--last", metavar="DURATION", help="How far back (default 1h).")
    ] = "1h",
    by: Annotated[
        str, typer.Option("--by", metavar="minute|hour", help="Bucket size (default minute).")
    ] = "minute",
    queue: Annotated[
        list[str] | None,
        typer.Option("--queue", "-q", metavar="QUEUE", help="Only this queue (repeatable)."),
    ] = None,
    per_queue: Annotated[
        bool, typer.Option("--per-queue", help="One row per queue and bucket.")
    ] = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueued, completed, failed (discarded) and cancelled jobs per minute or hour.

    Read on indexes over the window only: enqueued are the jobs, live or finalized,
    whose id (hopper's UUIDv7) was made in the bucket; completed, failed and cancelled
    the jobs history holds by the time they were finalized. A queue with DeleteCompleted
    leaves no completed rows, and retention removes what is older than it keeps.

    \b
    Example:
      qctl queues throughput --last 6h --by hour --queue emails
    """
    bucket = BUCKETS.get(by)
    if bucket is None:
        raise ParseError(f"--by: {by!r} is not minute or hour")
    window = common.duration(last, "--last") or timedelta(0)
    if window < bucket:
        raise ParseError(f"--last: must be at least one {by}")
    points = reads.throughput(database(ctx), window, bucket, queue, per_queue)
    if not any(getattr(p, m) for p in points for m in reads.MEASURES):
        note(f"no jobs were enqueued or finalized in the last {last}")
    columns = ["start", *(["queue"] if per_queue else []), *reads.MEASURES]
    emit_rows([row_record(p) for p in points], columns, output)
