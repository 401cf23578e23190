"""The ``qctl`` root command: root options, the command groups, and the one place
where failures become one line on stderr and a documented exit code."""

from __future__ import annotations

import copy
import importlib
import os
import sys
from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup
from typer.models import DefaultPlaceholder

from qctl import __version__, systems
from qctl.cli.argv import arrange, undecodable
from qctl.cli.complete import COMPLETE_VAR, answer, contexts, system_names, values_of
from qctl.cli.errors import closed_pipe, fail, failed, interrupted
from qctl.core.exits import ExitCode, message_for
from qctl.systems import Entry

if TYPE_CHECKING:
    from typer._click import Command, Context, HelpFormatter
    from typer.models import CommandInfo


class Verbs(TyperGroup):
    """A noun's group that makes a verb's click command when the verb is first looked
    up: typer reads every option of every verb to make them (``jobs``: 11 verbs, ~20 ms),
    and a command line runs one."""

    typer_app: typer.Typer
    pending: dict[str, CommandInfo]
    order: list[str]

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.order)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        info = self.pending.pop(cmd_name, None)
        if info is not None:
            self.commands[cmd_name] = _taking_yes(
                typer.main.get_command_from_info(
                    info,
                    pretty_exceptions_short=self.typer_app.pretty_exceptions_short,
                    rich_markup_mode=self.typer_app.rich_markup_mode,
                )
            )
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        if args and args[0] not in self.order:  # a typo: "Did you mean" needs them all
            for verb in list(self.pending):
                self.get_command(ctx, verb)
        return super().resolve_command(ctx, args)


def _audit_fails(exc: BaseException) -> None:
    """The error line of a write that fails, for its audit entry (as stderr says it)."""
    from qctl.core import audit

    if isinstance(exc, KeyboardInterrupt):
        audit.fails("interrupted")
    elif isinstance(exc, typer.Abort):
        audit.fails("aborted; nothing was changed")
    elif isinstance(exc, Exception) and not (isinstance(exc, typer.Exit) and exc.exit_code == 0):
        formatted = getattr(exc, "format_message", None)
        audit.fails(formatted() if callable(formatted) else message_for(exc))


def _warn(text: str) -> None:
    from qctl.core.sanitize import sanitize

    sys.stderr.write(f"qctl: warning: {sanitize(text)}\n")


def _taking_yes(command: Command) -> Command:
    """``command`` and every verb under it built so far, each taking ``--yes``/``-y``:
    a verb that never asks accepts it, hidden and ignored, so a script can pass it to
    every verb alike; and ``--reason``, and its kinds, queues and ids completed from the
    database (``qctl.cli.complete``)."""
    from typer.core import TyperOption

    if isinstance(command, Verbs):
        return command  # its verbs get it as they are made (get_command)
    for sub in getattr(command, "commands", {}).values():
        _taking_yes(sub)
    if hasattr(command, "commands"):
        return command
    # Help is made from docstrings, whose literals are reStructuredText's (``x``): help
    # quotes as its other text does (`x`).
    command.help = command.help and command.help.replace("``", "`")
    for param in command.params:
        param._custom_shell_complete = param._custom_shell_complete or values_of(param)
        if getattr(param, "help", None):
            param.help = param.help.replace("``", "`")  # type: ignore[attr-defined]
    taken = {name for p in command.params for name in getattr(p, "opts", [])}
    names = [n for n in ("--yes", "-y") if n not in taken]
    if "--yes" in names:
        command.params.append(
            TyperOption(param_decls=names, is_flag=True, hidden=True, expose_value=False)
        )
    if "--reason" in taken:  # the verb's own (why a run is paused): the audit trail's too
        own = next(p for p in command.params if "--reason" in getattr(p, "opts", []))
        own.callback = own.callback or _reason
    else:
        # Shown on the writes: the verbs that dry-run, and those marked by common.writes
        # (a signal, an enqueue); accepted by every verb.
        writes = "--dry-run" in taken or getattr(command.callback, "qctl_writes", False)
        command.params.append(
            TyperOption(
                param_decls=["--reason"],
                metavar="TEXT",
                envvar="QCTL_REASON",
                help="Why: recorded with this write in the audit trail (qctl audit; "
                "env QCTL_REASON).",
                hidden=not writes,
                expose_value=False,
                callback=_reason,
            )
        )
    return command


def _reason(ctx: Context, param: Any, value: str | None) -> str | None:
    from qctl.core import audit

    audit.give_reason(value)
    return value


def _verbs(target: typer.Typer) -> Verbs:
    """``target``'s group with its verbs left to make on first use (its sub-groups are
    made now)."""
    bare = copy.copy(target)
    bare.registered_commands = []
    bare.info = copy.copy(target.info)
    bare.info.cls = Verbs
    group = typer.main.get_group(bare)
    assert isinstance(group, Verbs)
    group.typer_app = target
    group.pending = {
        info.name or typer.main.get_command_name(info.callback.__name__): info
        for info in target.registered_commands
        if info.callback is not None
    }
    group.order = [*group.pending, *group.commands]
    return group


def build(name: str, entry: Entry) -> Command:
    """The click command of a registry entry (imports its module)."""
    target = getattr(importlib.import_module(entry.module), entry.attr)
    if not isinstance(target, typer.Typer):
        holder = typer.Typer(rich_markup_mode=None, add_completion=False)
        holder.command(name)(target)
        target = holder
    # A group of several verbs that sets no click class of its own.
    many = len(target.registered_commands) > 1 and isinstance(target.info.cls, DefaultPlaceholder)
    command = _verbs(target) if many else _taking_yes(typer.main.get_command(target))
    command.name = name
    return command


def _nouns() -> dict[str, Entry]:
    """Every top-level noun of every system (azync's registry first), then qctl's own."""
    from qctl.cli.registry import SYSTEMLESS_COMMANDS
    from qctl.systems import all_nouns

    return {**all_nouns(), **SYSTEMLESS_COMMANDS}


def cli_context(ctx: Context) -> Any:
    """The invocation's ``CliContext``, made once from the root options (the root group
    needs it before its callback runs: the system decides which commands exist)."""
    from qctl.cli.context import CliContext

    root = ctx.find_root()
    if not isinstance(root.obj, CliContext):
        p = root.params
        # Completing a word (click parses resiliently only then): what a database slow
        # to answer says comes too late, whatever limits the line or a context sets.
        limit = "1s" if root.resilient_parsing else None
        root.obj = CliContext.resolve(
            dsn=p.get("dsn"),
            schema=p.get("schema"),
            context=p.get("context"),
            read_only=bool(p.get("read_only")),
            no_color=bool(p.get("no_color")),
            wide=bool(p.get("wide")),
            system=p.get("system"),
            statement_timeout=limit or p.get("statement_timeout"),
            lock_timeout=limit or p.get("lock_timeout"),
        )
        root.call_on_close(root.obj.close)
        from qctl.core import audit

        audit.keep_in(root.obj.audit_table if root.obj.audit == "database" else None)
    return root.obj


def _system_entry(ctx: Context, name: str) -> Entry:
    """The system's implementation of noun ``name``; a noun it lacks is a usage error
    saying what to use instead."""
    from typer._click.exceptions import UsageError

    from qctl.cli.registry import SYSTEMLESS_COMMANDS
    from qctl_kit.errors import StoreError

    if name in SYSTEMLESS_COMMANDS:
        return _nouns()[name]
    if ctx.meta.get(HELP_ONLY) or ctx.resilient_parsing:
        # Help and completion (click parses resiliently only then) describe the command
        # tree: the database's system when it answers, else the first system with the
        # noun (an unreachable database never hides help).
        try:
            entry = cli_context(ctx).system().commands.get(name)
        except StoreError:  # unreachable, not migrated, a bad DSN or config file
            entry = None
        return entry or _nouns()[name]
    system = cli_context(ctx).system()
    entry = system.commands.get(name)
    if entry is None:
        raise UsageError(systems.lacking(system, name), ctx=None)
    return entry


HELP_ONLY = "qctl.help_only"
"""``ctx.meta`` key: the line asks for a command's help, not to run it."""


class _ClosedPipe(Exception):
    """stdout's reader went away (not an ``OSError``, which click turns into exit 1)."""


class QctlGroup(TyperGroup):
    """The root group: builds subcommands on first use (see ``registry``), runs the
    command and maps every failure to one line and a code."""

    def list_commands(self, ctx: Context) -> list[str]:
        return list(_nouns())

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        from qctl.systems import all_aliases

        name = all_aliases().get(cmd_name, cmd_name)
        if name not in _nouns():
            return None
        entry = _system_entry(ctx, name)
        if cmd_name not in self.commands:
            command = build(name, entry)
            if cmd_name != name:  # the singular alias: works, never listed
                command.name = cmd_name
                command.hidden = True
            self.commands[cmd_name] = command
        return self.commands[cmd_name]

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        from typer._click.exceptions import UsageError

        help_names = ctx.help_option_names
        words = args[: args.index("--")] if "--" in args else args
        ctx.meta[HELP_ONLY] = any(a in help_names for a in words[1:])
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            # Commands are built on first use, so suggest from the table, not self.commands.
            if (
                args
                and exc.message.startswith("No such command")
                and "Did you mean" not in exc.message
            ):
                from difflib import get_close_matches

                from qctl.systems import all_aliases

                names = [*self.list_commands(ctx), *all_aliases()]
                matches = get_close_matches(args[0], names, n=1)
                if matches:
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {matches[0]!r}?"
            raise

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        rows = [(n, e.help) for n, e in _nouns().items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: Context) -> Any:
        try:
            rv = super().invoke(ctx)
            # What is still buffered goes now: a reader that went away shows here, not
            # in click's own handler (which exits 1 for a closed pipe).
            sys.stdout.flush()
            return rv
        except BrokenPipeError:
            raise _ClosedPipe from None
        except BaseException as exc:
            _audit_fails(exc)
            raise

    def _main_shell_completion(
        self, ctx_args: MutableMapping[str, Any], prog_name: str, complete_var: str | None = None
    ) -> None:
        if os.environ.get(complete_var or COMPLETE_VAR):
            answer(self, ctx_args, prog_name)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        code = self._run(args, prog_name or "qctl", complete_var, **extra)
        from qctl.core import audit

        audit.finish(int(code), _warn)
        audit.keep_in(None)  # the next invocation in this process says where its trail is
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(
        self, args: Sequence[str] | None, prog_name: str, complete_var: str | None, **extra: Any
    ) -> int:
        from typer._click import exceptions as click_exc

        argv = list(sys.argv[1:] if args is None else args)
        for arg in argv:
            if undecodable(arg):
                shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                return fail(f"argument {shown!r} is not valid UTF-8", ExitCode.USAGE)
        try:
            rv = super().main(
                arrange(argv), prog_name, complete_var, standalone_mode=False, **extra
            )
            sys.stdout.flush()  # the help, or what a command left buffered (see invoke)
        except click_exc.NoArgsIsHelpError as exc:
            sys.stderr.write(exc.format_message() + "\n")
            return ExitCode.USAGE
        except click_exc.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            return fail(" ".join(exc.format_message().split()) + hint, ExitCode.USAGE)
        except click_exc.ClickException as exc:
            return fail(" ".join(exc.format_message().split()), exc.exit_code)
        except typer.Abort:
            return fail("aborted; nothing was changed", ExitCode.REFUSED)
        except (BrokenPipeError, _ClosedPipe):
            return closed_pipe()
        except KeyboardInterrupt:  # one raised outside typer's own handling of it
            return interrupted()
        except Exception as exc:
            return failed(exc)
        if rv == ExitCode.INTERRUPTED:  # typer's answer to a KeyboardInterrupt
            return interrupted()
        return rv if isinstance(rv, int) else ExitCode.OK


app = typer.Typer(
    name="qctl",
    cls=QctlGroup,
    help=f"{systems.summary()} (PostgreSQL or SQLite).",
    epilog="Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 refused, "
    "5 schema not migrated or unknown, 6 unavailable, 7 timed out, 8 database full. "
    "See qctl(1).",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"qctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn",
            metavar="DSN",
            help="postgresql://... or sqlite:///path (env QCTL_DSN; default: the embedded "
            "database). A password in it shows in ps: use a context, QCTL_DSN or PGPASSFILE.",
            show_default=False,
        ),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            metavar="SCHEMA",
            help=f"PostgreSQL schema of the system's tables (default: {systems.schemas()}) "
            "(env QCTL_SCHEMA).",
        ),
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context",
            metavar="NAME",
            help="Named context from $XDG_CONFIG_HOME/qctl/config.toml (env QCTL_CONTEXT).",
            autocompletion=contexts,
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option("--read-only", help="Refuse every write (env QCTL_READ_ONLY=1)."),
    ] = False,
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            metavar=systems.choices(),
            help="The system the database holds, when it holds several (env QCTL_SYSTEM; "
            "default: detected from its tables).",
            autocompletion=system_names,
        ),
    ] = None,
    statement_timeout: Annotated[
        str | None,
        typer.Option(
            "--statement-timeout",
            metavar="DURATION",
            help="PostgreSQL: how long one statement (a read, one batch of a bulk verb) may "
            "run, 0 for no limit (env QCTL_STATEMENT_TIMEOUT; default 10s, none for db "
            "migrate and db tune).",
            show_default=False,
        ),
    ] = None,
    lock_timeout: Annotated[
        str | None,
        typer.Option(
            "--lock-timeout",
            metavar="DURATION",
            help="PostgreSQL: how long a statement may wait for a lock another session "
            "holds, 0 for no limit (env QCTL_LOCK_TIMEOUT; default 5s).",
            show_default=False,
        ),
    ] = None,
    no_color: Annotated[
        bool, typer.Option("--no-color", help="No colours (env NO_COLOR).")
    ] = False,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Tables show long values whole on a terminal too (in a pipe or a file "
            "they always do).",
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """The root options: where the database is and how to treat it."""
    cli_context(ctx)
