"""``qctl context``: the named contexts of the config file, managed without an editor
(kubectl's ``config get-contexts`` / ``current-context`` / ``use-context``).

The file is edited in place (``ConfigText``): only the key or the context's table that
changes is rewritten, so comments and settings qctl does not know stay; it is written
atomically with mode 0600. ``list`` never shows a DSN's password."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from qctl import systems
from qctl.cli import common, complete
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.context import (
    AUDIT_KEEPERS,
    TIMEOUTS,
    ConfigFileError,
    ConfigText,
    config_path,
    load_config_file,
    timeout_setting,
)
from qctl.cli.output import emit_result, emit_rows, note
from qctl.cli.registry import SYSTEMLESS_COMMANDS
from qctl.core.exits import ExitCode
from qctl_kit.dsn import redact
from qctl_kit.errors import InvalidInput

app = common.app("context", SYSTEMLESS_COMMANDS["context"].help)

Name = Annotated[str, typer.Argument(metavar="NAME", help="Context name.")]
Known = Annotated[
    str, typer.Argument(metavar="NAME", help="Context name.", autocompletion=complete.contexts)
]


def _contexts(data: dict[str, Any]) -> dict[str, Any]:
    contexts = data.get("contexts", {})
    if not isinstance(contexts, dict):
        raise ConfigFileError(f"{config_path()}: contexts must be a table")
    return contexts


def _existing(data: dict[str, Any], name: str) -> dict[str, Any]:
    contexts = _contexts(data)
    if name not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        raise ConfigFileError(f"no context {name!r} in {config_path()} (known: {known})")
    return data


@app.command("list")
def list_(ctx: typer.Context, output: Output = common.OutputFormat.TABLE) -> None:
    """The contexts of the config file; CURRENT marks the one in effect."""
    current = common.cli(ctx).context_name
    rows = [
        {
            "current": "*" if name == current else "",
            "name": name,
            "dsn": redact(str(entry.get("dsn", ""))),
            "schema": entry.get("schema", ""),
            "system": entry.get("system", ""),
            "read_only": bool(entry.get("read_only", False)),
            **{key: entry.get(key, "") for key in TIMEOUTS},
            "audit": entry.get("audit", "file"),
        }
        for name, entry in sorted(_contexts(load_config_file()).items())
        if isinstance(entry, dict)
    ]
    columns = ["current", "name", "dsn", "schema", "system", "read_only", *TIMEOUTS, "audit"]
    emit_rows(rows, columns, output)


@app.command("current")
def current(ctx: typer.Context) -> None:
    """The name of the context in effect (--context, QCTL_CONTEXT or default_context)."""
    name = common.cli(ctx).context_name
    if not name:
        note("no context in effect: `qctl context use NAME` sets the default")
        raise typer.Exit(ExitCode.NOT_FOUND)
    typer.echo(name)


@app.command("use")
def use(ctx: typer.Context, name: Known, output: Output = common.OutputFormat.TABLE) -> None:
    """Make NAME the default context (default_context in the config file)."""
    data = _existing(load_config_file(), name)
    data["default_context"] = name
    text = ConfigText()
    text.set_key("default_context", name)
    text.save(data)
    emit_result({"default_context": name}, f"default context is now {name!r}", output)
    explicit = ctx.find_root().params.get("context") or os.environ.get("QCTL_CONTEXT")
    if explicit and explicit != name:
        note(f"note: --context or QCTL_CONTEXT still selects {explicit!r} where it is given")


@app.command("add")
def add(
    name: Name,
    dsn: Annotated[
        str, typer.Option("--dsn", metavar="DSN", help="postgresql://... or sqlite:///path.")
    ],
    schema: Annotated[str, typer.Option("--schema", metavar="SCHEMA", help="Schema.")] = "",
    system: Annotated[
        str,
        typer.Option(
            "--system",
            metavar=systems.choices(),
            help="The system it holds.",
            autocompletion=complete.system_names,
        ),
    ] = "",
    read_only: Annotated[
        bool | None,
        typer.Option(
            "--read-only/--no-read-only",
            help="Never write. With --replace, the replaced context's setting is kept "
            "unless given.",
            show_default=False,
        ),
    ] = None,
    statement_timeout: Annotated[
        str,
        typer.Option(
            "--statement-timeout",
            metavar="DURATION",
            help="PostgreSQL: how long one statement may run, 0 for no limit.",
        ),
    ] = "",
    lock_timeout: Annotated[
        str,
        typer.Option(
            "--lock-timeout",
            metavar="DURATION",
            help="PostgreSQL: how long a statement may wait for another session's lock, "
            "0 for no limit.",
        ),
    ] = "",
    audit: Annotated[
        str,
        typer.Option(
            "--audit",
            metavar="file|database",
            autocompletion=complete.choices(AUDIT_KEEPERS),
            help="Where its audit trail is kept: this account's local file (the default) or "
            "the database's own table (`qctl audit init` creates it), for every operator.",
        ),
    ] = "",
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a context of that name.")
    ] = False,
    password_stdin: Annotated[
        bool,
        typer.Option(
            "--password-stdin",
            help="Read the DSN's password from the first line of stdin, not the command "
            "line (which every user of the host sees in ps).",
        ),
    ] = False,
    ask_password: Annotated[
        bool,
        typer.Option(
            "--ask-password", help="Ask for the DSN's password on the terminal, unechoed."
        ),
    ] = False,
    output: Output = common.OutputFormat.TABLE,
) -> None:
    """Add a context (--dsn, and --schema, --system, --read-only, --statement-timeout,
    --lock-timeout as the root options; --audit). A PostgreSQL password is best given
    with --password-stdin or --ask-password, then kept in the DSN of the config file
    (mode 0600)."""
    from qctl_kit.dsn import check_dsn, with_password

    if not name.strip():
        raise ConfigFileError("a context name must not be empty")
    check_dsn(dsn)  # a DSN every command would refuse is refused now, not on first use
    if password_stdin and ask_password:
        raise InvalidInput("give --password-stdin or --ask-password, not both")
    if password_stdin or ask_password:
        dsn = with_password(dsn, _password(ask_password))
    if system:
        systems.get(system)
    if audit and audit not in AUDIT_KEEPERS:
        raise InvalidInput(f"--audit: {audit!r} is not file or database")
    # Kept as given (the file's form, "2s"), once it reads as every command will read it.
    limits = {"statement_timeout": statement_timeout, "lock_timeout": lock_timeout}
    limits = {key: value for key, value in limits.items() if value}
    for key, value in limits.items():
        timeout_setting(value, f"--{key.replace('_', '-')}")
    data = load_config_file()
    contexts = _contexts(data)
    if name in contexts and not replace:
        raise ConfigFileError(f"context {name!r} exists: pass --replace, or delete it first")
    entry: dict[str, Any] = {"dsn": dsn}
    entry |= {"schema": schema} if schema else {}
    entry |= {"system": system} if system else {}
    if read_only is None:  # a replaced read-only context never loses the flag silently
        read_only = bool(contexts.get(name, {}).get("read_only", False))
    entry |= {"read_only": True} if read_only else {}
    entry |= limits
    entry |= {"audit": audit} if audit else {}
    contexts[name] = entry
    data["contexts"] = contexts
    text = ConfigText()
    text.set_table(("contexts", name), entry)
    text.save(data)
    shown = ", ".join(
        [
            redact(dsn),
            *(["read-only"] if read_only else []),
            *(f"{k} {v}" for k, v in limits.items()),
            *([f"audit in the {audit}"] if audit else []),
        ]
    )
    emit_result(
        {
            "added": name,
            "dsn": redact(dsn),
            "read_only": read_only,
            **limits,
            "audit": audit or "file",
        },
        f"added context {name!r} ({shown})",
        output,
    )


def _password(ask: bool) -> str:
    """The password: asked on the terminal, unechoed, or stdin's first line."""
    if not ask:
        return sys.stdin.readline().removesuffix("\n").removesuffix("\r")
    if not common.stdin_is_tty():
        raise InvalidInput("--ask-password needs a terminal: pipe the password to --password-stdin")
    try:
        password: str = typer.prompt("Password", hide_input=True, err=True)
    except typer.Abort:
        raise InvalidInput("no password given") from None
    return password


@app.command("delete")
def delete(
    name: Known,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = common.OutputFormat.TABLE,
) -> None:
    """Delete a context (and the default_context naming it)."""
    data = _existing(load_config_file(), name)
    if dry_run:
        common.dry_run_report({"deleted": name}, f"would delete context {name!r}", output)
        return
    common.confirm(f"delete context {name!r} from {config_path()}?", yes)
    del _contexts(data)[name]
    text = ConfigText()
    text.remove_table(("contexts", name))
    if data.get("default_context") == name:
        del data["default_context"]
        text.remove_key("default_context")
    text.save(data)
    emit_result({"deleted": name}, f"deleted context {name!r}", output)
