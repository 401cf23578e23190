"""The job filter every job verb shares (``jobs list`` and the bulk verbs): its options,
the ``JobSearch`` they build, and the confirmation before a payload search scans."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from qctl.cli import common
from qctl.core.parse import ParseError
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.options import KindOpt, MetaOpt, SourceOpt, StateOpt
from qctl.systems.azync.order import newest_first
from qctl_store.listing import order_for, seeks_index
from qctl_store.types import JobSearch, JobState, Source

if TYPE_CHECKING:
    from qctl.systems.azync.cli.database import AnyStore

ErrorOpt = Annotated[
    str,
    typer.Option(
        "--error", metavar="TEXT", help="Only jobs whose last error contains TEXT (any case)."
    ),
]
PayloadOpt = Annotated[
    str | None,
    typer.Option(
        "--payload-contains",
        metavar="JSON",
        help='Only jobs whose payload contains this JSON (e.g. \'{"customer":"42"}\').',
    ),
]
AgeOpt = Annotated[
    str | None,
    typer.Option("--older-than", metavar="DURATION", help="Enqueued longer ago than."),
]
EventOpt = Annotated[
    str | None, typer.Option("--event", metavar="ID", help="The deliveries of one event.")
]
DagOpt = Annotated[
    str | None, typer.Option("--dag", metavar="ID", help="The tasks of one DAG run.")
]
RunOpt = Annotated[
    str | None,
    typer.Option("--run", metavar="ID", help="The jobs of one workflow execution."),
]

FILTERS: common.Options = [
    ("source", SourceOpt, None),
    ("kind", KindOpt, ""),
    ("state", StateOpt, None),
    ("meta", MetaOpt, None),
    ("error", ErrorOpt, ""),
    ("payload", PayloadOpt, None),
    ("older_than", AgeOpt, None),
    ("event", EventOpt, None),
    ("dag", DagOpt, None),
    ("run", RunOpt, None),
]


def filtered(with_state: bool = True) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the filter options in place of its ``search: JobSearch`` parameter
    and call it with the ``JobSearch`` they build. ``with_state=False`` leaves
    ``--state`` to a command that declares its own."""
    return common.with_options(
        "search", [f for f in FILTERS if with_state or f[0] != "state"], search
    )


SortOpt = Annotated[
    str | None,
    typer.Option(
        "--sort",
        metavar="newest|oldest",
        help="Order on the state's time column (default: the store's; dead newest failure first).",
    ),
]

SCAN_ASK = 10_000
"""A payload search that no index narrows asks first past this many candidate jobs."""


def search(
    ctx: typer.Context,
    source: Source | None = None,
    kind: str = "",
    state: JobState | None = None,
    meta: list[str] | None = None,
    error: str = "",
    payload: str | None = None,
    older_than: str | None = None,
    event: str | None = None,
    dag: str | None = None,
    run: str | None = None,
) -> JobSearch:
    """The ``JobSearch`` of the filter options (ids whole or as unique prefixes)."""
    return JobSearch(
        source=source,
        kind=kind,
        state=state,
        meta=options.meta(meta),
        error=error,
        payload=common.json_value(payload, "--payload-contains"),
        older_than=common.duration(older_than, "--older-than"),
        event_id=options.resolve(ctx, "event", event) if event else None,
        dag_id=options.resolve(ctx, "dag", dag) if dag else None,
        run_id=options.resolve(ctx, "workflow", run) if run else None,
    )


def reverse(state: JobState | None, sort: str | None) -> bool:
    """Whether ``--sort`` turns the store's order for ``state`` round: ``newest`` and
    ``oldest`` go by the state's time column; without it dead jobs list newest first
    (the ones an operator looks at) and every other state in the store's order."""
    if sort not in (None, "newest", "oldest"):
        raise ParseError(f"--sort: {sort!r} is not newest or oldest")
    if sort is None:
        return newest_first(state)
    _, descending = order_for(state)
    return descending != (sort != "oldest")


def confirm_scan(store: AnyStore, search: JobSearch, yes: bool) -> None:
    """Before a payload search that no index narrows (no kind and state, event, DAG or
    run): on a large table say it will scan, and ask (or need ``--yes``)."""
    if search.payload is None or seeks_index(search) or yes:
        return
    candidates, estimated = store.count_jobs(replace(search, payload=None, meta={}, error=""))
    if candidates > SCAN_ASK:
        about = "~" if estimated else ""
        common.confirm(
            f"--payload-contains without --kind and --state scans {about}{candidates} jobs; scan?",
            yes,
        )


__all__ = [
    "FILTERS",
    "AgeOpt",
    "DagOpt",
    "ErrorOpt",
    "EventOpt",
    "KindOpt",
    "MetaOpt",
    "PayloadOpt",
    "RunOpt",
    "SortOpt",
    "SourceOpt",
    "StateOpt",
    "confirm_scan",
    "filtered",
    "search",
]
