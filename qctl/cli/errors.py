"""The command line's end of a failure: the line on stderr and the exit code
(``qctl.core.exits`` maps each failure), SIGTERM, Ctrl-C and a reader gone away."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from types import FrameType

from qctl.core.exits import ExitCode, exit_code_for, message_for


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is: a statement waiting on the
    server is cancelled there (psycopg cancels on KeyboardInterrupt), cleanup runs, and
    what stops cleanly on Ctrl-C may choose to on SIGTERM (maintain does)."""

    received = False


def _terminate(signum: int, frame: FrameType | None) -> None:
    Terminated.received = True
    raise Terminated


def on_sigterm() -> None:
    """Raise ``Terminated`` on SIGTERM from now on (the console script's main thread)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)


def interrupted() -> int:
    """The exit code of an interruption: 143 and one line after SIGTERM, else 130."""
    if Terminated.received:
        return fail("terminated (SIGTERM)", ExitCode.TERMINATED)
    return ExitCode.INTERRUPTED


def closed_pipe() -> ExitCode:
    """The reader of stdout went away (``qctl jobs list | head``): it has what it asked
    for, so qctl stops quietly with 0, as a pipeline under ``set -o pipefail`` expects.
    stdout and stderr point at /dev/null, so the interpreter's last flush cannot
    complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        # A stream without a descriptor (a test runner's) has nothing to flush later.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    return ExitCode.OK


def fail(message: str, code: int) -> int:
    sys.stderr.write(f"qctl: error: {message}\n")
    return code


def failed(exc: Exception) -> int:
    """One line on stderr (a traceback with ``QCTL_DEBUG``) and the documented code."""
    if os.environ.get("QCTL_DEBUG"):
        import traceback

        from qctl_kit.dsn import redact

        sys.stderr.write(redact(traceback.format_exc()))
    return fail(message_for(exc), exit_code_for(exc))
