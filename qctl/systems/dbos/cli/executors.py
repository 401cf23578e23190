"""``qctl executors`` on a DBOS database: who runs what, and the recovery of a dead
executor's PENDING workflows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.errors import WrongState
from qctl.core.parse import format_duration
from qctl.core.verbs import SAMPLE
from qctl.systems.dbos import executors
from qctl.systems.dbos.cli.base import database, from_ms, group, report, writable
from qctl.systems.dbos.cli.filters import AppNameOpt, VersionOpt

app = group("executors")

COLUMNS = [
    "executor_id",
    "pending",
    "started",
    "completed",
    "last_active",
    "idle",
    "app_versions",
    "application_names",
]


def _row(ex: executors.Executor) -> dict[str, Any]:
    last = from_ms(ex["last_active_at"])
    return {
        **ex,
        "last_active": last,
        "idle": datetime.now(UTC) - last if isinstance(last, datetime) else None,
        "app_versions": ", ".join(ex["app_versions"]),
        "application_names": ", ".join(ex["application_names"]),
    }


@app.command("list")
def executors_list(
    ctx: typer.Context,
    window: Annotated[
        str,
        typer.Option(
            "--window",
            metavar="DURATION",
            help="Count workflows started and finished this far back.",
        ),
    ] = "1h",
    output: Output = OutputFormat.TABLE,
) -> None:
    """Executors (the executor_id of their workflows), most recently active first: their
    PENDING workflows, those they started and finished within --window, and their
    latest activity. DBOS records no heartbeat: an executor that has been idle long
    with PENDING workflows is likely dead (`qctl executors recover`)."""
    span = common.duration(window, "--window") or timedelta(0)
    rows = executors.list_executors(database(ctx), int(span.total_seconds() * 1000))
    emit_rows([_row(r) for r in rows], COLUMNS, output, full=rows)


IdleFor = Annotated[
    str,
    typer.Option(
        "--idle-for",
        metavar="DURATION",
        help="Refuse an executor active more recently than this (it may be alive).",
    ),
]
Force = Annotated[
    bool,
    typer.Option("--force", help="Recover even an executor active within --idle-for."),
]


@app.command("recover")
def executors_recover(
    ctx: typer.Context,
    executor_ids: Annotated[
        list[str], typer.Argument(metavar="EXECUTOR_ID...", help="The dead executors.")
    ],
    application_version: VersionOpt = None,
    application_name: AppNameOpt = None,
    idle_for: IdleFor = "5m",
    force: Force = False,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Recover dead executors' PENDING workflows, as DBOS's recovery (and Conductor's)
    does: each goes back on its queue (or DBOS's internal one) and the next executor
    of its application version runs it on from its last recorded step. Only for
    executors that are gone: a live one's workflows would be taken from it and run
    twice. DBOS records no heartbeat, so an executor that started, finished or
    recorded a step within --idle-for (default 5m) is refused, in the dry run too,
    unless --force."""
    db = writable(ctx, "executors recover", dry_run)
    options: dict[str, Any] = {
        "app_version": tuple(application_version or ()),
        "application_name": tuple(application_name or ()),
    }
    window = common.duration(idle_for, "--idle-for") or timedelta(0)
    planned = executors.recover(db, executor_ids, dry_run=True, **options)
    last = executors.last_active(db, planned.executor_ids, max(_ms(window), 1))
    now = datetime.now(UTC)
    idle = {e: now - at for e, t in last.items() if isinstance(at := from_ms(t), datetime)}
    recent = [f"{e} was active {format_duration(d)} ago" for e, d in idle.items() if d < window]
    if recent and not force:
        raise WrongState(
            "executors recover",
            f"DBOS executor {'; '.join(recent)} (within --idle-for {format_duration(window)}):"
            " it may be alive, and its workflows would run twice; wait, or use --force",
        )
    versions = ", ".join(f"{n} of {v or 'no version'}" for v, n in planned.by_version.items())
    who = ", ".join(f"{e} ({executors.activity(last[e])})" for e in planned.executor_ids)
    if dry_run:
        record = {**planned.__dict__, "last_active_at": last}
        sample = [{"workflow_id": w} for w in planned.workflow_ids[:SAMPLE]]
        common.dry_run_report(
            record,
            f"would re-enqueue {planned.count} PENDING DBOS workflow(s) of {who}"
            + (f" ({versions})" if versions else ""),
            output,
            sample,
            ["workflow_id"],
            len(planned.workflow_ids),
        )
        return
    if planned.count:
        common.confirm(
            f"Re-enqueue {planned.count} PENDING DBOS workflow(s) of {who} ({versions})?", yes
        )
    result = executors.recover(db, executor_ids, **options)
    skipped = f"; {result.skipped} were taken meanwhile" if result.skipped else ""
    report(
        {**result.__dict__, "last_active_at": last},
        f"re-enqueued {result.count} PENDING DBOS workflow(s) of"
        f" {', '.join(result.executor_ids)}{skipped}",
        False,
        output,
    )


def _ms(value: timedelta) -> int:
    return int(value.total_seconds() * 1000)
