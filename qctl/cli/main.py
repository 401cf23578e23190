"""The ``qctl`` root command: root options, the command groups, and the one place
where failures become one line on stderr and a documented exit code."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from qctl import __version__
from qctl.cli import (
    dags,
    db,
    events,
    jobs,
    maintain,
    queues,
    replay,
    subscribers,
    vacuum,
    watch,
    workflows,
)
from qctl.cli.context import CliContext
from qctl.cli.errors import ExitCode, exit_code_for, message_for


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"qctl: error: {message}\n")
    return code


class QctlGroup(TyperGroup):
    """The root group: runs the command and maps every failure to one line and a code."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        code = self._run(args, prog_name or "qctl", complete_var, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(
        self, args: Sequence[str] | None, prog_name: str, complete_var: str | None, **extra: Any
    ) -> int:
        from typer._click import exceptions as click_exc

        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_exc.NoArgsIsHelpError as exc:
            sys.stderr.write(exc.format_message() + "\n")
            return ExitCode.USAGE
        except click_exc.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            return _fail(" ".join(exc.format_message().split()) + hint, ExitCode.USAGE)
        except click_exc.ClickException as exc:
            return _fail(" ".join(exc.format_message().split()), exc.exit_code)
        except typer.Abort:
            return _fail("aborted; nothing was changed", ExitCode.REFUSED)
        except BrokenPipeError:
            # The reader went away (``qctl jobs list | head``): stop quietly.
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
            return ExitCode.FAILURE
        except Exception as exc:
            if os.environ.get("QCTL_DEBUG"):
                traceback.print_exc()
            return _fail(message_for(exc), exit_code_for(exc))
        return rv if isinstance(rv, int) else ExitCode.OK


app = typer.Typer(
    name="qctl",
    cls=QctlGroup,
    help="Operator console for azync job stores (PostgreSQL or the embedded SQLite database).",
    epilog="Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 refused, "
    "5 not migrated / too new, 6 unavailable. See qctl(1).",
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
            "database).",
            show_default=False,
        ),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option("--schema", metavar="SCHEMA", help="PostgreSQL schema of azync's tables (env QCTL_SCHEMA)."),
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context",
            metavar="NAME",
            help="Named context from $XDG_CONFIG_HOME/qctl/config.toml (env QCTL_CONTEXT).",
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option("--read-only", help="Refuse every write (env QCTL_READ_ONLY=1)."),
    ] = False,
    no_color: Annotated[
        bool, typer.Option("--no-color", help="No colours (env NO_COLOR).")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Operator console for azync job stores."""
    obj = CliContext.resolve(
        dsn=dsn, schema=schema, context=context, read_only=read_only, no_color=no_color
    )
    ctx.obj = obj
    ctx.call_on_close(obj.close)


GROUPS: list[tuple[typer.Typer, str, str]] = [
    (db.app, "db", ""),
    (jobs.app, "jobs", "job"),
    (dags.app, "dags", "dag"),
    (events.app, "events", "event"),
    (subscribers.app, "subscribers", "subscriber"),
    (queues.app, "queues", "queue"),
    (workflows.app, "workflows", "workflow"),
    (vacuum.app, "vacuum", ""),
]
for group, name, alias in GROUPS:
    app.add_typer(group, name=name)
    if alias:
        app.add_typer(group, name=alias, hidden=True)

app.command("maintain")(maintain.maintain)
app.command("replay")(replay.replay)
app.command("nuke")(replay.nuke)
app.command("watch")(watch.watch)


def _register_optional() -> None:
    """``top`` and ``demo`` live in modules of their own (the dashboard imports
    textual only when ``qctl top`` runs, so those modules must import it lazily);
    registered when present."""
    for name in ("top", "demo"):
        if importlib.util.find_spec(f"qctl.cli.{name}") is None:
            continue
        module = importlib.import_module(f"qctl.cli.{name}")
        app.command(name)(getattr(module, name))


_register_optional()


def run() -> None:
    """The console script."""
    app()
