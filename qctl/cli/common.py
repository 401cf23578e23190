"""Options and helpers every command group shares."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import parse
from qctl.cli.context import CliContext
from qctl.cli.errors import Refused
from qctl.cli.output import OUTPUT_HELP, OutputFormat, emit_result
from qctl_store.types import JobState, Source

if TYPE_CHECKING:
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
PageLimit = Annotated[int, typer.Option("--limit", "-n", metavar="N", min=1, help="Rows per page.")]
Offset = Annotated[int, typer.Option("--offset", metavar="N", min=0, help="Skip this many.")]
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


def _option_value(parser: Callable[[Any], Any], value: Any, option: str) -> Any:
    """``parser(value)``, its error message prefixed by the option that carried it."""
    try:
        return parser(value)
    except parse.ParseError as exc:
        raise parse.ParseError(f"{option}: {exc}") from None


def proceed(
    dry_run: bool, yes: bool, output: OutputFormat, record: dict[str, Any], would: str, ask: str
) -> bool:
    """The gate of a destructive verb: with ``dry_run`` print what it would do
    (``record`` marked ``"dry_run": true``) and return False; else confirm with ``ask``."""
    if dry_run:
        emit_result({"dry_run": True, **record}, would, output)
        return False
    confirm(ask, yes)
    return True


def duration(value: str | None, option: str) -> timedelta | None:
    return None if value is None else _option_value(parse.parse_duration, value, option)


def instant(value: str | None, option: str) -> datetime | None:
    return None if value is None else _option_value(parse.parse_instant, value, option)


def json_value(value: str | None, option: str) -> Any:
    return None if value is None else _option_value(parse.parse_json, value, option)


def meta(values: list[str] | None) -> dict[str, str]:
    result: dict[str, str] = _option_value(parse.parse_meta, values, "--meta")
    return result


def resolve(ctx: typer.Context, entity: str, text: str) -> uuid.UUID:
    return parse.resolve_id(store(ctx), entity, text)


def sources(source: Source | None) -> list[Source]:
    return [source] if source else list(Source)


@dataclass(frozen=True)
class Target:
    """What ``act`` acts on: a DAG run or a workflow execution."""

    group: str
    """The command group, for the read-only refusal (``dags``)."""
    entity: str
    """The id-prefix entity (``dag``)."""
    label: str
    """The noun in messages (``DAG``)."""
    get: Callable[[AnyStore, uuid.UUID], Any]
    """The row (with ``name`` and ``state``) shown before a destructive act."""


def act(
    ctx: typer.Context,
    target: Target,
    id: str,
    action: str,
    done: str,
    output: OutputFormat,
    call: Callable[[AnyStore, uuid.UUID], None],
    *,
    destructive: bool = False,
    yes: bool = False,
    dry_run: bool = False,
) -> None:
    """Resolve ``id`` and ``call`` the store on it; destructive acts show the row and
    confirm first, and with ``dry_run`` only say what they would do."""
    if not dry_run:
        cli(ctx).require_writable(f"{target.group} {action}")
    st = store(ctx)
    ident = resolve(ctx, target.entity, id)
    if destructive:
        row = target.get(st, ident)
        what = f"{target.label} {row.name} {ident} ({row.state})"
        record = {"id": ident, "action": action, "state": row.state}
        if not proceed(
            dry_run, yes, output, record, f"would {action} {what}", f"{action.capitalize()} {what}?"
        ):
            return
    call(st, ident)
    emit_result({"id": ident, "action": action}, f"{done} {target.label} {ident}", output)
