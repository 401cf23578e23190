"""``qctl queues``: per-kind depths and daily throughput."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output, SourceOpt
from qctl.cli.output import OutputFormat, as_dict, emit_detail, emit_rows, rows_of
from qctl_store.types import Source

app = common.app("queues")

DEPTH_COLUMNS = [
    "pending",
    "scheduled",
    "active",
    "dead",
    "paused",
    "succeeded",
    "oldest_pending_age",
]
DAILY_COLUMNS = ["date", "enqueued", "processed", "failed", "reaped"]


ESTIMABLE = ("succeeded", "paused")
"""The depths ``live_depths`` may take from statistics on a huge table."""


def shown(record: dict[str, Any]) -> dict[str, Any]:
    """A depths record for tables and CSV: no oldest-pending age when nothing is pending
    (the store's 0 would read as "just enqueued"); JSON keeps the store's value."""
    return record if record["pending"] else {**record, "oldest_pending_age": None}


def marked(record: dict[str, Any]) -> dict[str, Any]:
    """A table row: estimated counts read ``~N``."""
    if not record["estimated"]:
        return record
    return {**record, **{c: f"~{record[c]}" for c in ESTIMABLE}}


@app.command("list")
def list_queues(
    ctx: typer.Context,
    source: SourceOpt = None,
    exact: Annotated[
        bool,
        typer.Option("--exact", help="Count every state exactly (scans huge tables)."),
    ] = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Depths of every (source, kind). Pending, scheduled, active, dead, paused,
    succeeded and the age of the oldest pending job.

    Live states are always exact. On a huge PostgreSQL table succeeded and paused come
    from the planner's statistics, shown as ~N in tables and with "estimated": true in
    JSON and CSV; --exact counts them (a scan of the whole table)."""
    store = common.store(ctx)
    rows: list[dict[str, Any]] = []
    for src in common.sources(source):
        depths, estimated = (store.kind_depths(src), False) if exact else store.live_depths(src)
        for kind, d in sorted(depths.items()):
            rows.append({"source": src, "kind": kind, **as_dict(d), "estimated": estimated})
    columns = ["source", "kind", *DEPTH_COLUMNS]
    if output == OutputFormat.TABLE:
        emit_rows([marked(shown(r)) for r in rows], columns, output)
    else:
        emit_rows([shown(r) for r in rows], [*columns, "estimated"], output, full=rows)


@app.command("stats")
def stats(
    ctx: typer.Context,
    kind: Annotated[str, typer.Argument(metavar="KIND", help="Job kind.")],
    source: Annotated[Source, typer.Option("--source", "-s", help="Job source.")] = Source.QUEUE,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Depths of one kind and its daily series."""
    depths, daily = common.store(ctx).stats(source, kind)
    emit_detail(
        output,
        shown({"source": source, "kind": kind, **as_dict(depths)}),
        {"source": source, "kind": kind, "depths": depths, "daily": daily},
        [(rows_of(daily), DAILY_COLUMNS)],
    )


@app.command("daily")
def daily(
    ctx: typer.Context, source: SourceOpt = None, output: Output = OutputFormat.TABLE
) -> None:
    """Daily enqueued / processed / failed / reaped totals per source."""
    store = common.store(ctx)
    rows = [
        {"source": src, **as_dict(day)}
        for src in common.sources(source)
        for day in store.all_daily(src)
    ]
    emit_rows(rows, ["source", *DAILY_COLUMNS], output)
