"""More of DBOSClient's writes an operator needs, beside ``actions``'s workflow verbs:
send a message to a workflow (``DBOSClient.send``), change its attributes
(``update_workflow_attributes``), create and delete schedules (``create_schedule``,
``delete_schedule``), register a queue or change its limits (``register_queue``, which
persists to DBOS's ``queues`` table). Each goes through ``actions.client``, so its rows
are DBOS's own; qctl looks the target up first (DBOS ignores an unknown name, or fails
on it deep inside) and checks what DBOS would refuse before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qctl.core.errors import require_state
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.database import Database
from qctl_kit.errors import InvalidInput


@dataclass(frozen=True)
class WriteOutcome:
    """One write: its target, what it changes (``before``/``after`` where it has them)."""

    action: str
    target: str
    dry_run: bool = False
    before: Any = None
    after: Any = None
    details: dict[str, Any] = field(default_factory=dict)


def send(
    db: Database,
    workflow_id: str,
    message: Any,
    topic: str | None = None,
    idempotency_key: str | None = None,
    dry_run: bool = False,
) -> WriteOutcome:
    """Send ``message`` (a JSON value) to an unfinished workflow, which receives it in
    ``DBOS.recv(topic)``. Written in DBOS's portable JSON, which every SDK and every
    application serializer reads; an idempotency key makes a repeat a no-op (DBOS's
    deterministic message id)."""
    row = reads.get_workflow(db, workflow_id, payloads=False)
    require_state("send", f"workflow {workflow_id}", row["status"], actions.UNFINISHED, "send to")
    outcome = WriteOutcome(
        "send",
        workflow_id,
        dry_run,
        details={"topic": topic, "message": message, "idempotency_key": idempotency_key},
    )
    if not dry_run:
        from dbos import WorkflowSerializationFormat

        with actions.client(db) as c:
            c.send(
                workflow_id,
                message,
                topic,
                idempotency_key,
                serialization_type=WorkflowSerializationFormat.PORTABLE,
            )
    return outcome


def set_attributes(
    db: Database,
    workflow_id: str,
    attributes: dict[str, Any] | None,
    replace: bool = False,
    dry_run: bool = False,
) -> WriteOutcome:
    """Merge ``attributes`` into the workflow's (top-level keys), or with ``replace``
    make them its attributes (None: none), as ``update_workflow_attributes`` does."""
    if not replace and not attributes:
        raise InvalidInput("give at least one KEY=VALUE (or --replace to clear them all)")
    row = reads.get_workflow(db, workflow_id, payloads=False)
    before = row["attributes"]
    after = attributes if replace else {**(before or {}), **(attributes or {})}
    if not dry_run:
        with actions.client(db) as c:
            c.update_workflow_attributes(workflow_id, attributes, merge=not replace)
    return WriteOutcome("set-attributes", workflow_id, dry_run, before, after or None)


def create_schedule(
    db: Database,
    name: str,
    workflow_name: str,
    schedule: str,
    workflow_class_name: str | None = None,
    cron_timezone: str | None = None,
    queue_name: str | None = None,
    automatic_backfill: bool = False,
    application_name: str | None = None,
    dry_run: bool = False,
) -> WriteOutcome:
    """Create an ACTIVE schedule (``DBOSClient.create_schedule``, no context): the
    application's scheduler starts ``workflow_name`` at each time of the cron
    expression (six fields: seconds first)."""
    from croniter import croniter  # type: ignore[import-untyped]

    if not croniter.is_valid(schedule, second_at_beginning=True):
        raise InvalidInput(f"--cron: {schedule!r} is not a cron expression")
    if cron_timezone is not None:
        from zoneinfo import ZoneInfo

        try:
            ZoneInfo(cron_timezone)
        except (KeyError, ValueError):
            raise InvalidInput(f"--timezone: unknown time zone {cron_timezone!r}") from None
    if any(r["schedule_name"] == name for r in reads.list_schedules(db)):
        raise InvalidInput(f"a DBOS schedule named {name!r} exists")
    fields = {
        "workflow_name": workflow_name,
        "schedule": schedule,
        "workflow_class_name": workflow_class_name,
        "cron_timezone": cron_timezone,
        "queue_name": queue_name,
        "automatic_backfill": automatic_backfill,
        "application_name": application_name,
    }
    if not dry_run:
        with actions.client(db) as c:
            c.create_schedule(schedule_name=name, **fields)  # type: ignore[arg-type]
    return WriteOutcome("create", name, dry_run, after=fields)


def delete_schedule(db: Database, name: str, dry_run: bool = False) -> WriteOutcome:
    """Delete a schedule (``DBOSClient.delete_schedule``): it fires no more; the
    workflows it started stay."""
    row = reads.get_schedule(db, name)
    before = {k: row[k] for k in ("workflow_name", "schedule", "status")}
    if not dry_run:
        with actions.client(db) as c:
            c.delete_schedule(name)
    return WriteOutcome("delete", name, dry_run, before)


QUEUE_LIMITS = (
    "concurrency",
    "worker_concurrency",
    "rate_limit_max",
    "rate_limit_period_sec",
    "partition_concurrency",
    "partition_worker_concurrency",
    "partition_rate_limit_max",
    "partition_rate_limit_period_sec",
    "polling_interval_sec",
)
"""The limits of a queue, as DBOS's ``queues`` table names them."""


def set_queue_limits(
    db: Database, name: str, changes: dict[str, Any], dry_run: bool = False
) -> WriteOutcome:
    """Register queue ``name`` or change its limits (``DBOSClient.register_queue``,
    always updating): the limits in ``changes`` (None: no limit) replace the queue's,
    the others stay. Executors read them at their next poll; an application that
    registers the queue itself at start-up sets its own again."""
    bad = [k for k in changes if k not in QUEUE_LIMITS]
    if bad:
        raise InvalidInput(f"unknown queue limit {bad[0]!r}")
    if not changes:
        raise InvalidInput("give at least one limit to set")
    rows = db.all(
        f"SELECT {', '.join(QUEUE_LIMITS)}, application_name FROM {{t}}queues WHERE name = %s",
        [name],
    )
    before = {k: rows[0][k] for k in QUEUE_LIMITS} if rows else None
    after = {**(before or dict.fromkeys(QUEUE_LIMITS)), **changes}
    if after["polling_interval_sec"] is None:
        after["polling_interval_sec"] = 1.0  # DBOS's default
    for rate in ("", "partition_"):
        if (after[f"{rate}rate_limit_max"] is None) != (
            after[f"{rate}rate_limit_period_sec"] is None
        ):
            raise InvalidInput(
                f"a {rate.replace('_', ' ')}rate limit needs both its count and period"
            )
    from dbos._queue import Queue

    try:  # DBOS's own checks, before anything is written
        Queue._validate_queue(
            name=name,
            concurrency=None,
            worker_concurrency=after["worker_concurrency"],
            global_concurrency=after["concurrency"],
            partition_concurrency=after["partition_concurrency"],
            partition_worker_concurrency=after["partition_worker_concurrency"],
            partition_limiter=_limiter(after, "partition_"),
            polling_interval_sec=after["polling_interval_sec"],
            limiter=_limiter(after, ""),
        )
    except Exception as exc:  # DBOSException or ValueError: its message is the reason
        raise InvalidInput(f"queue {name}: {exc}") from None
    if not dry_run:
        with actions.client(db) as c:
            c.register_queue(
                name,
                global_concurrency=after["concurrency"],
                worker_concurrency=after["worker_concurrency"],
                limiter=_limiter(after, ""),
                partition_concurrency=after["partition_concurrency"],
                partition_worker_concurrency=after["partition_worker_concurrency"],
                partition_limiter=_limiter(after, "partition_"),
                polling_interval_sec=after["polling_interval_sec"],
                on_conflict="always_update",
                application_name=rows[0]["application_name"] if rows else None,
            )
    return WriteOutcome("set-limits", name, dry_run, before, after)


def _limiter(limits: dict[str, Any], prefix: str) -> Any:
    count = limits[f"{prefix}rate_limit_max"]
    if count is None:
        return None
    return {"limit": count, "period": limits[f"{prefix}rate_limit_period_sec"]}
