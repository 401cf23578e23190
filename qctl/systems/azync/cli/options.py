"""azync's options and helpers its command groups share: the job filter's parts, the
invocation's store (``qctl_store``'s, opened once), ids resolved by unique prefix, and the
keyset paging of its newest-first listings."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from qctl.cli.common import cli, option_value
from qctl.core import parse
from qctl.core.errors import no_such_id
from qctl_kit.errors import NotFound
from qctl_kit.values import PageCursor
from qctl_store.types import JobState, Source

if TYPE_CHECKING:
    from qctl.systems.azync.cli.database import AnyStore

SourceOpt = Annotated[
    Source | None, typer.Option("--source", "-s", help="Job source (default: all).")
]

StateOpt = Annotated[JobState | None, typer.Option("--state", help="Job state.")]

KindOpt = Annotated[
    str, typer.Option("--kind", "-k", metavar="KIND", help="Job kind (default: all).")
]

SinceOpt = Annotated[
    str | None, typer.Option("--since", metavar="INSTANT", help="Occurred at or after.")
]

UntilOpt = Annotated[
    str | None, typer.Option("--until", metavar="INSTANT", help="Occurred before.")
]

DeadAge = Annotated[
    str,
    typer.Option(
        "--older-than",
        metavar="DURATION",
        help="Died longer ago than (failed_at; the enqueue time where a row has none).",
    ),
]
"""How old the dead jobs to delete are (``jobs vacuum-dead`` and ``vacuum dead``)."""

MetaOpt = Annotated[
    list[str] | None,
    typer.Option("--meta", metavar="KEY=VALUE", help="Metadata key=value (repeatable)."),
]


def store(ctx: typer.Context) -> AnyStore:
    """The store of this invocation, opened once (unpooled: one-shot commands)."""
    from qctl.systems.azync.cli import database

    return database.store(cli(ctx))


def writable(ctx: typer.Context, action: str, planning: bool = False) -> AnyStore:
    """The store, after refusing the write when qctl is read-only (before any I/O),
    unless only planning (a plan only reads)."""
    if not planning:
        cli(ctx).require_writable(action)
    return store(ctx)


def meta(values: list[str] | None) -> dict[str, str]:
    result: dict[str, str] = option_value(parse.parse_meta, values, "--meta")
    return result


T = TypeVar("T")


def resolve(ctx: typer.Context, entity: str, text: str) -> uuid.UUID:
    return parse.resolve_id(store(ctx), entity, text)


def found(ctx: typer.Context, entity: str, text: str, get: Callable[[uuid.UUID], T]) -> T:
    """``get`` of the row ``text`` names (whole, or a unique prefix): one that names
    nothing said as every system says it (``no_such_id``)."""
    try:
        return get(resolve(ctx, entity, text))
    except NotFound:
        raise no_such_id(entity, text) from None


def sources(source: Source | None) -> list[Source]:
    return [source] if source else list(Source)


def cursor(text: str | None) -> PageCursor | None:
    """``--after``'s keyset position (None: the first page)."""
    return parse.parse_cursor(text) if text else None


def next_cursor(
    rows: Sequence[Any], limit: int, position: Callable[[Any], PageCursor]
) -> str | None:
    """The ``--after`` text of the page after ``rows``, when the page is full."""
    return parse.cursor_text(position(rows[-1])) if rows and len(rows) == limit else None


def newest_first(row: Any) -> PageCursor:
    """The position of a row of a newest-first listing by ``created_at`` (DAG runs,
    workflow executions)."""
    return PageCursor(row.created_at, row.id)


Fetch = Callable[[int, PageCursor | None], list[T]]


def counted_first(
    counted: Callable[[int, PageCursor | None], tuple[list[T], int]],
    page: Fetch[T],
    count: bool,
) -> tuple[Fetch[T], list[int]]:
    """A newest-first walk's fetch (``stream_listing``'s) and the list that receives the
    filter's total: read with the first page only, and only when ``count`` (a table
    shows it), so fetches past the first read their page alone."""
    totals: list[int] = []

    def fetch(n: int, at: PageCursor | None) -> list[T]:
        if count and not totals:
            rows, total = counted(n, at)
            totals.append(total)
            return rows
        return page(n, at)

    return fetch, totals
