"""Shell completion of the values the command tree cannot know: the contexts of the
config file, and from the database the states of the system it holds, its kinds, queues
and ids.

The scripts in ``completions/`` complete commands, options and fixed choices without
starting Python; for such a value they run ``qctl`` with ``_QCTL_COMPLETE`` set and
the line up to the cursor in ``COMP_LINE`` (bash's words would split a DSN at its
colons), and click's completion answers: it resolves the command the words name (the
database's system when it answers, ``qctl.cli.main._system_entry``) and asks the
parameter, which lists its choices or reads them here. The answer is one value a line.
On any failure, or past ``DEADLINE`` (a database slow to answer), the answer is empty
and nothing is printed: the shell then offers nothing, as for a word it cannot
complete."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

# Imported by the root command of every line: what only completing needs is imported then.
if TYPE_CHECKING:
    from types import FrameType

    from typer._click.core import Command, Context, Parameter

COMPLETE_VAR = "_QCTL_COMPLETE"
"""Set by the completion scripts when they ask ``qctl`` for values."""
DEADLINE = 1.5
"""Seconds a completion may take, database included."""
TIMEOUT = "1s"
"""The statement and lock timeouts of its sessions."""

Completer = Callable[["Context", "Parameter", str], list[str]]


class _Late(Exception):
    """``DEADLINE`` passed."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    import signal

    def late(signum: int, frame: FrameType | None) -> None:
        raise _Late

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def answer(cli: Command, ctx_args: MutableMapping[str, Any], prog_name: str) -> NoReturn:
    """Print the completions of the last word of ``COMP_LINE`` and exit."""
    from typer._click.shell_completion import split_arg_string
    from typer._completion_classes import BashComplete

    from qctl.cli.argv import completing

    os.environ.setdefault("PGCONNECT_TIMEOUT", "1")  # unless the DSN says otherwise
    line = os.environ.get("COMP_LINE", "")
    values: list[str] = []
    with contextlib.suppress(Exception), _deadline(DEADLINE):
        words = split_arg_string(line)
        incomplete = "" if not line or line[-1].isspace() else words.pop()
        shell = BashComplete(cli, ctx_args, prog_name, "")
        items = shell.get_completions(completing(words[1:]), incomplete)
        values = [str(item.value) for item in items]
    sys.stdout.write("".join(f"{value}\n" for value in values))
    sys.stdout.flush()
    sys.exit(0)


def contexts(incomplete: str) -> list[str]:
    """The names of the config file's contexts."""
    from qctl.cli.context import load_config_file

    with contextlib.suppress(Exception):
        names = load_config_file().get("contexts", {})
        return sorted(n for n in names if isinstance(n, str) and n.startswith(incomplete))
    return []


def choices(values: Sequence[str]) -> Callable[[str], list[str]]:
    """A completer of fixed ``values`` (an option typed as text that takes a few)."""

    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


def system_names(incomplete: str) -> list[str]:
    from qctl import systems

    return [s.name for s in systems.systems() if s.name.startswith(incomplete)]


def database(what: str) -> Completer:
    """A parameter's completer of ``what`` (``kind``, ``queue``, ``id``) from the
    database of the words' root options, through its system's ``values``."""

    def complete(ctx: Context, param: Parameter, incomplete: str) -> list[str]:
        from qctl import systems
        from qctl.cli.context import CliContext
        from qctl_kit.dsn import default_database_path

        c = ctx.find_root().obj  # made from the root options as the command was resolved
        if not isinstance(c, CliContext):
            return []
        if not c.dsn and not default_database_path().exists():
            return []  # completion never creates the embedded database
        system = c.system()
        if not system.values:
            return []
        noun = ctx.command_path.split()[1]
        noun = systems.all_aliases().get(noun, noun)
        found = systems.load(system.values)(c.handle(), noun, what, incomplete)
        return [v for v in found if v.startswith(incomplete)]

    return complete


def values_of(param: Parameter) -> Completer | None:
    """The database completer a verb's parameter takes by its name: ``--kind``,
    ``--queue`` and an ``ID`` argument."""
    names = set(getattr(param, "opts", []))
    if names & {"--kind"}:
        return database("kind")
    if names & {"--queue"}:
        return database("queue")
    if param.param_type_name == "argument" and "ID" in (param.metavar or ""):
        return database("id")
    return None
