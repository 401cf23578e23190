"""``qctl vacuum`` on a hopper database: what hopper's leader leaves (finished batches
and workflows, delivered stream events, and history where its retention keeps it
forever or no leader runs), never the partitions it maintains."""

from __future__ import annotations

import typer

from qctl.cli import common, vacuum
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat
from qctl.systems.hopper import vacuum as ops
from qctl.systems.hopper.cli import group, writable

app = group("vacuum")

TABLES = {
    "history": "hopper_job_history",
    "batches": "hopper_batches",
    "stream_events": "hopper_stream_events",
}
"""Each target's table, as the result names it."""


def _run(
    ctx: typer.Context,
    verb: str,
    targets: tuple[str, ...],
    older_than: str,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
) -> None:
    keep = vacuum.older_than(older_than)
    db = writable(ctx, f"vacuum {verb}", dry_run)

    def removed(outcome: ops.Vacuumed) -> vacuum.Removed:
        return [(TABLES[t], outcome.counts[t]) for t in targets]

    vacuum.run(
        older_than,
        lambda: removed(ops.vacuum(db, keep, targets, dry_run=True)),
        lambda: removed(ops.vacuum(db, keep, targets)),
        lambda n: f"Delete {n} hopper row(s) older than {older_than}?",
        count_first=True,
        dry_run=dry_run,
        yes=yes,
        output=output,
        noun="hopper row(s) deleted",
    )


@app.command("all")
def vacuum_all(
    ctx: typer.Context,
    older_than: common.Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete, older than --older-than: finalized jobs in history, finished batches and
    workflows, and stream events every consumer has delivered; in batches of 1000,
    each its own transaction. hopper's leader drops history partitions past its
    retention itself (24h completed, 7 days failed by default) and is left alone: no
    partition is created or dropped here."""
    _run(ctx, "all", ops.TARGETS, older_than, dry_run, yes, output)


@app.command("history")
def vacuum_history(
    ctx: typer.Context,
    older_than: common.Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete finalized jobs (completed, cancelled, discarded) finalized longer ago than
    --older-than: for a history hopper keeps forever (a negative retention) or while no
    leader runs. Rows only; the leader's partitions stay."""
    _run(ctx, "history", ("history",), older_than, dry_run, yes, output)


@app.command("batches")
def vacuum_batches(
    ctx: typer.Context,
    older_than: common.Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete batches and workflows completed longer ago than --older-than with no live
    job left (hopper never deletes them); their jobs stay in history."""
    _run(ctx, "batches", ("batches",), older_than, dry_run, yes, output)


@app.command("streams")
def vacuum_streams(
    ctx: typer.Context,
    older_than: common.Retention,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Delete stream events created longer ago than --older-than that every consumer
    has delivered (hopper never deletes them); a later `streams seek` cannot replay
    them."""
    _run(ctx, "streams", ("stream_events",), older_than, dry_run, yes, output)
