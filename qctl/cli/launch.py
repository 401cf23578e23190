"""The console script: it runs the dashboard's plain line and the root help without Typer.

``qctl top`` is the one command whose start-up the operator waits on: the common line
(root options, ``top``, ``--refresh``) runs the dashboard here, on every system, without
importing Typer and the command tree (~40 ms before Textual can start). ``qctl --help``
prints ``help.txt``, Typer's own output generated from the command tree (``make
generate``; a test keeps it current), where Typer would write exactly that text.
Any other line, and any line this module does not fully understand (a subcommand's
help, a bad value, a repeated option, completion), goes to ``qctl.cli.main``, which also
maps every failure the same way (``failed``)."""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from qctl import startup
from qctl.cli.argv import ROOT_FLAGS, ROOT_OPTIONS, arrange, undecodable
from qctl.cli.complete import COMPLETE_VAR
from qctl.cli.errors import closed_pipe, fail, failed, interrupted, on_sigterm
from qctl.core.exits import ExitCode

if TYPE_CHECKING:
    from qctl.cli.context import CliContext
    from qctl_kit.postgres.watch import Blocker

MIN_REFRESH = 0.2
"""``--refresh``'s least value, here and in ``qctl.cli.common.Refresh``."""
ROOT_HELP = os.path.join(os.path.dirname(__file__), "help.txt")
"""``qctl --help`` as Typer writes it at 80 columns or more (``scripts/generate_docs.py``)."""
HELP_WIDTH = 80
"""click wraps help at the terminal's width up to 80 columns: at 80 or more, one text."""


def root_help(argv: Sequence[str]) -> str | None:
    """The generated root help when ``argv`` asks for it alone and Typer would write
    that very text (a terminal of ``HELP_WIDTH`` columns or more, as click measures it:
    ``COLUMNS``, else stdout's terminal, else 80); None otherwise."""
    if list(argv) not in (["--help"], ["-h"]):
        return None
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = HELP_WIDTH
    if columns < HELP_WIDTH:
        return None
    try:
        with open(ROOT_HELP, encoding="utf-8") as f:
            return f.read()
    except OSError:  # an install without it: Typer writes the help
        return None


def top_line(argv: Sequence[str]) -> tuple[dict[str, str | bool], float] | None:
    """The root options (as the root callback's parameters) and ``--refresh`` of a plain
    ``qctl [root options] top [--refresh SECONDS]`` line; None for any other line."""
    if "--" in argv or any(undecodable(arg) for arg in argv):
        return None
    if not any(arg == "top" for arg in argv) or any(arg in ROOT_OPTIONS for arg in argv[-1:]):
        return None  # not the dashboard, or ``arrange``'s usage error
    args = arrange(argv)
    options: dict[str, str | bool] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        name, eq, value = args[i].partition("=")
        given: str | bool
        if name in ROOT_OPTIONS:
            if not eq:
                i += 1
                value = args[i]
            key, given = name[2:].replace("-", "_"), value
        elif args[i] in ROOT_FLAGS:
            key, given = args[i][2:].replace("-", "_"), True
        else:
            return None
        if key in options:
            return None  # repeated: as click takes it
        options[key] = given
        i += 1
    if args[i : i + 1] != ["top"]:
        return None
    rest = args[i + 1 :]
    if not rest:
        return options, 2.0
    if len(rest) == 2 and rest[0] == "--refresh":
        text = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--refresh="):
        text = rest[0].partition("=")[2]
    else:
        return None
    try:
        refresh = float(text)
    except ValueError:
        return None
    return (options, refresh) if refresh >= MIN_REFRESH else None


def preload_reads(c: CliContext) -> dict[str, Callable[[Any], Any]]:
    """The reads ``qctl top`` starts before Textual is imported (``System.preloads``), by
    pane, their modules and the database's opener imported here, in the thread that goes
    on to import Textual, before any other starts: a package imported by two threads at
    once can fail in one (CPython takes it out of ``sys.modules`` for an instant as its
    import ends: ``KeyError: 'qctl_store'`` in the other)."""
    from qctl import systems

    system = c.system()
    systems.load(system.database)
    return {pane: systems.load(ref) for pane, ref in system.preloads.items()}


def dashboard(c: CliContext, refresh: float) -> int:
    """``qctl top`` on the database of ``c``, whatever system it holds; the exit code
    (1: the dashboard printed the line)."""
    from qctl import systems
    from qctl.core.sanitize import sanitize
    from qctl.tui.preload import Preload

    system = c.system()
    lock_waits: list[tuple[float, str]] = []

    def lock_wait(blocker: Blocker) -> None:  # the status bar names the lock's holder
        lock_waits.append((time.monotonic(), sanitize(blocker.line())))

    # Opening the database and the first tab's reads run while Textual is imported.
    reads = preload_reads(c)
    opened = Preload(lambda: c.handle(pooled=True, on_lock_wait=lock_wait))

    def start(read: Callable[[Any], Any]) -> Preload[Any]:
        return Preload(lambda: read(opened.result()))

    preloads = {pane: start(read) for pane, read in reads.items()}
    from qctl.tui.app import run

    handle = opened.result()
    try:
        return run(
            handle,
            system=systems.load(system.screens),
            location=c.describe(),
            read_only=c.read_only,
            poll_interval=refresh,
            preloads=preloads,
            lock_waits=lock_waits,
            audit_where=c.audit_where(),
            audit_table=c.audit_table() if c.audit == "database" else None,
        )
    finally:
        # The database closes when the command ends: never under a read still running
        # (a dashboard that ended before its first frame never took its preloads).
        for preload in preloads.values():
            preload.join()


def _top(options: dict[str, str | bool], refresh: float) -> int:
    """Run the dashboard of the database the root options name."""
    from qctl.cli.context import CliContext

    c = CliContext.resolve(**options)  # type: ignore[arg-type]
    try:
        return dashboard(c, refresh)
    finally:
        c.close()


def run() -> None:
    """The console script."""
    # The collector resumes after the dashboard's first frame (``QctlTop``), or once
    # the command tree of any other line is imported.
    startup.pause()
    on_sigterm()
    # Shell completion is click's: neither fast path answers it.
    completing = COMPLETE_VAR in os.environ
    if not completing and (text := root_help(sys.argv[1:])) is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except OSError as exc:
            sys.exit(closed_pipe() if exc.errno == errno.EPIPE else failed(exc))
        sys.exit(ExitCode.OK)
    line = None if completing else top_line(sys.argv[1:])
    code = None
    if line is not None:
        # What ``qctl.cli.main`` makes of a failure, without click.
        try:
            code = _top(*line)
        except EOFError:
            sys.stderr.write("\n")
            code = fail("aborted; nothing was changed", ExitCode.REFUSED)
        except KeyboardInterrupt:
            code = interrupted()
        except OSError as exc:
            code = closed_pipe() if exc.errno == errno.EPIPE else failed(exc)
        except Exception as exc:
            code = failed(exc)
    if code is None:
        from qctl.cli.main import app

        startup.resume()
        app()
    sys.exit(code)
