"""Options and helpers every command group shares."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import parse
from qctl.cli.context import CliContext
from qctl.cli.errors import Refused
from qctl.cli.output import OUTPUT_HELP, OutputFormat
from qctl_store.types import JobState, Source

if TYPE_CHECKING:
    import uuid

    from qctl.cli.context import AnyStore

Output = Annotated[
    OutputFormat,
    typer.Option("--output", "-o", help=OUTPUT_HELP, case_sensitive=False),
]
Yes = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Answer yes to the confirmation (needed off a terminal)."),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Say what would be done; write nothing.")]
SourceOpt = Annotated[
    Source | None, typer.Option("--source", "-s", help="Job source (default: all).")
]
StateOpt = Annotated[JobState | None, typer.Option("--state", help="Job state.")]
KindOpt = Annotated[
    str, typer.Option("--kind", "-k", metavar="KIND", help="Job kind (default: all).")
]
MetaOpt = Annotated[
    list[str] | None,
    typer.Option("--meta", metavar="KEY=VALUE", help="Metadata key=value (repeatable)."),
]


def app(name: str) -> typer.Typer:
    """A command group with qctl's settings (plain help text: fast and greppable); its
    help line lives in the registry."""
    from qctl.cli.registry import COMMANDS

    return typer.Typer(
        name=name,
        help=COMMANDS[name].help,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )


def cli(ctx: typer.Context) -> CliContext:
    obj = ctx.find_object(CliContext)
    if obj is None:  # commands invoked without the root callback (library use)
        obj = CliContext.resolve()
        root = ctx.find_root()
        root.obj = obj
        root.call_on_close(obj.close)
    return obj


def store(ctx: typer.Context) -> AnyStore:
    """The store of this invocation, opened once (unpooled: one-shot commands)."""
    return cli(ctx).store()


def writable(ctx: typer.Context, action: str) -> AnyStore:
    """The store, after refusing the write when qctl is read-only (before any I/O)."""
    cli(ctx).require_writable(action)
    return store(ctx)


def stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def confirm(question: str, yes: bool) -> None:
    """Ask on a terminal; without one, refuse unless --yes was given."""
    if yes:
        return
    if not stdin_is_tty():
        raise Refused(f"{question} refused: stdin is not a terminal, pass --yes to confirm")
    try:
        answer = typer.confirm(question, default=False, err=True)
    except typer.Abort:
        answer = False
    if not answer:
        raise Refused("declined; nothing was changed")


def duration(value: str | None, option: str) -> timedelta | None:
    if value is None:
        return None
    try:
        return parse.parse_duration(value)
    except parse.ParseError as exc:
        raise parse.ParseError(f"{option}: {exc}") from None


def instant(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse.parse_instant(value)
    except parse.ParseError as exc:
        raise parse.ParseError(f"{option}: {exc}") from None


def json_value(value: str | None, option: str) -> Any:
    if value is None:
        return None
    try:
        return parse.parse_json(value)
    except parse.ParseError as exc:
        raise parse.ParseError(f"{option}: {exc}") from None


def meta(values: list[str] | None) -> dict[str, str]:
    try:
        return parse.parse_meta(values)
    except parse.ParseError as exc:
        raise parse.ParseError(f"--meta: {exc}") from None


def resolve(ctx: typer.Context, entity: str, text: str) -> uuid.UUID:
    return parse.resolve_id(store(ctx), entity, text)


def sources(source: Source | None) -> list[Source]:
    return [source] if source else list(Source)
