"""``qctl schedules``: DBOS's schedules (``workflow_schedules``)."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common, complete
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import (
    OutputFormat,
    emit_object,
)
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.cli.base import (
    database,
    emit_list,
    for_json,
    for_table,
    group,
    report,
    writable,
)
from qctl.systems.dbos.cli.filters import Many
from qctl_kit.errors import InvalidInput

app = group("schedules")


SCHEDULE_COLUMNS = [
    "schedule_name",
    "workflow_name",
    "schedule",
    "status",
    "last_fired_at",
    "queue_name",
    "cron_timezone",
]
ScheduleArg = Annotated[str, typer.Argument(metavar="NAME", help="Schedule name.")]


SCHEDULE_STATUSES = ("ACTIVE", "PAUSED")


@app.command("list")
def schedules_list(
    ctx: typer.Context,
    status: Annotated[
        Many,
        typer.Option(
            "--state",
            "--status",
            metavar="STATUS",
            help="ACTIVE or PAUSED (repeatable; --status: DBOS's word).",
            autocompletion=complete.choices(("ACTIVE", "PAUSED")),
        ),
    ] = None,
    name: Annotated[
        Many, typer.Option("--name", metavar="NAME", help="Workflow name (repeatable).")
    ] = None,
    prefix: Annotated[
        str, typer.Option("--prefix", metavar="TEXT", help="Schedule name prefix.")
    ] = "",
    output: Output = OutputFormat.TABLE,
) -> None:
    """Schedules (``workflow_schedules``), by name."""
    statuses = [s.upper() for s in status or []]
    bad = [s for s in statuses if s not in SCHEDULE_STATUSES]
    if bad:
        raise InvalidInput(f"--status: {bad[0]!r} is not a schedule status (ACTIVE or PAUSED)")
    rows = reads.list_schedules(database(ctx), statuses, name or [], prefix)
    emit_list(rows, SCHEDULE_COLUMNS, output)


@app.command("show")
def schedules_show(
    ctx: typer.Context, name: ScheduleArg, output: Output = OutputFormat.TABLE
) -> None:
    """One schedule, its context decoded."""
    row = reads.get_schedule(database(ctx), name)
    emit_object(for_table(row) if output == OutputFormat.TABLE else for_json(row), output)


def _schedule_act(
    ctx: typer.Context, name: str, action: str, dry_run: bool, output: OutputFormat
) -> None:
    db = writable(ctx, f"schedules {action}", dry_run)
    call = actions.pause_schedule if action == "pause" else actions.resume_schedule
    outcome = call(db, name, dry_run)
    word = f"would {action}" if dry_run else f"{action}d"
    report(outcome.__dict__, f"{word} DBOS schedule {name} (was {outcome.status})", dry_run, output)


@app.command("pause")
def schedules_pause(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Pause a schedule: it stops firing until resumed."""
    _schedule_act(ctx, name, "pause", dry_run, output)


@app.command("resume")
def schedules_resume(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Resume a paused schedule."""
    _schedule_act(ctx, name, "resume", dry_run, output)


@app.command("trigger")
def schedules_trigger(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run the schedule's workflow now (enqueued as DBOS's scheduler would)."""
    outcome = actions.trigger_schedule(writable(ctx, "schedules trigger", dry_run), name, dry_run)
    word = "would trigger" if dry_run else "triggered"
    ids = f": {', '.join(outcome.workflow_ids)}" if outcome.workflow_ids else ""
    report(outcome.__dict__, f"{word} DBOS schedule {name}{ids}", dry_run, output)


@app.command("backfill")
def schedules_backfill(
    ctx: typer.Context,
    name: ScheduleArg,
    since: Annotated[str, typer.Option("--since", metavar="INSTANT", help="From (exclusive).")],
    until: Annotated[
        str, typer.Option("--until", metavar="INSTANT", help="To (exclusive).")
    ] = "now",
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Enqueue every execution the schedule missed between --since and --until; those
    that ran are skipped (DBOS's deterministic ids)."""
    start = common.instant(since, "--since")
    end = common.instant(until, "--until")
    assert start is not None and end is not None
    db = writable(ctx, "schedules backfill", dry_run)
    if not dry_run:
        actions.backfill_schedule(db, name, start, end, dry_run=True)  # validate first
        common.confirm(f"Backfill DBOS schedule {name} from {since} to {until}?", yes)
    outcome = actions.backfill_schedule(db, name, start, end, dry_run)
    word = "would backfill" if dry_run else "backfilled"
    text = (
        f"{word} {len(outcome.workflow_ids)} run(s) of DBOS schedule {name}"
        f" ({len(outcome.already_run)} already run)"
    )
    report(outcome.__dict__, text, dry_run, output)


@app.command("create")
def schedules_create(
    ctx: typer.Context,
    name: ScheduleArg,
    workflow: Annotated[
        str, typer.Option("--workflow", metavar="NAME", help="The workflow it starts.")
    ],
    cron: Annotated[
        str,
        typer.Option("--cron", metavar="EXPR", help="Cron expression (6 fields: seconds first)."),
    ],
    workflow_class: Annotated[
        str | None,
        typer.Option("--class", metavar="CLASS", help="The workflow's class, if a method."),
    ] = None,
    timezone: Annotated[
        str | None, typer.Option("--timezone", metavar="TZ", help="IANA zone (default UTC).")
    ] = None,
    queue: Annotated[
        str | None,
        typer.Option("--queue", metavar="QUEUE", help="Enqueue on it (default: DBOS's own)."),
    ] = None,
    backfill: Annotated[
        bool,
        typer.Option("--automatic-backfill", help="Run missed times when the scheduler starts."),
    ] = False,
    application_name: Annotated[
        str | None,
        typer.Option(
            "--application-name", metavar="NAME", help="Owning application (default: none)."
        ),
    ] = None,
    dry_run: DryRun = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Create an ACTIVE schedule (DBOSClient.create_schedule): the application's
    scheduler starts the workflow at each time of the cron expression."""
    from qctl.systems.dbos import writes

    db = writable(ctx, "schedules create", dry_run)
    outcome = writes.create_schedule(
        db,
        name,
        workflow,
        cron,
        workflow_class,
        timezone,
        queue,
        backfill,
        application_name,
        dry_run,
    )
    word = "would create" if dry_run else "created"
    report(outcome.__dict__, f"{word} DBOS schedule {name} ({cron})", dry_run, output)


@app.command("delete")
def schedules_delete(
    ctx: typer.Context,
    name: ScheduleArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete a schedule (DBOSClient.delete_schedule); the workflows it started stay."""
    from qctl.systems.dbos import writes

    db = writable(ctx, "schedules delete", dry_run)
    planned = writes.delete_schedule(db, name, dry_run=True)
    if not dry_run:
        common.confirm(f"Delete DBOS schedule {name}?", yes)
    outcome = planned if dry_run else writes.delete_schedule(db, name)
    word = "would delete" if dry_run else "deleted"
    report(outcome.__dict__, f"{word} DBOS schedule {name}", dry_run, output)
