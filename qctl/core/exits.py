"""qctl's exit codes, and how a failure becomes one line and a code: the one mapping
both front ends use (the command line's ``qctl.cli.errors``, the dashboard's exit)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1
    USAGE = 2
    NOT_FOUND = 3
    REFUSED = 4
    SCHEMA = 5
    UNAVAILABLE = 6
    TIMEOUT = 7
    FULL = 8
    INTERRUPTED = 130
    TERMINATED = 143


EXIT_CODE_DOCS: list[tuple[ExitCode, str]] = [
    (ExitCode.OK, "success"),
    (ExitCode.FAILURE, "runtime failure"),
    (ExitCode.USAGE, "usage error: unknown option, bad value, ambiguous or too short id prefix"),
    (
        ExitCode.NOT_FOUND,
        "not found: what the command names (a job, a workflow, a schedule, ...) does not "
        "exist or is not in the state the action needs",
    ),
    (
        ExitCode.REFUSED,
        "refused: read-only mode, confirmation declined or missing --yes, "
        "or a conflicting concurrent change",
    ),
    (
        ExitCode.SCHEMA,
        "the schema is not migrated, or at a version this release does not know "
        "(`qctl db status` says which)",
    ),
    (ExitCode.UNAVAILABLE, "the database is unavailable"),
    (
        ExitCode.TIMEOUT,
        "timed out waiting for a lock another session holds (--lock-timeout) or on one "
        "statement (--statement-timeout); the server cancelled that statement; or the server "
        "stopped answering",
    ),
    (
        ExitCode.FULL,
        "the database is full (its disk, or SQLite's max_page_count): the statement that hit "
        "it was rolled back, batches committed before it stand",
    ),
    (ExitCode.INTERRUPTED, "interrupted by Ctrl-C (qctl watch and qctl maintain exit 0)"),
    (
        ExitCode.TERMINATED,
        "terminated by SIGTERM, the statement running cancelled on the server "
        "(qctl maintain exits 0)",
    ),
]


class Refused(Exception):
    """The operator declined, or confirmation was impossible without --yes."""


class Failed(Exception):
    """A command-level failure with a message (exit 1)."""


# qctl_store is imported inside these two so that ``qctl --help`` never loads it.
def exit_code_for(exc: BaseException) -> ExitCode:
    """The documented exit code of a failure."""
    from qctl.core.parse import IdNotFound
    from qctl.core.verbs import Stopped
    from qctl_kit import errors as store_errors

    if isinstance(exc, Stopped) and exc.__cause__ is not None:
        return exit_code_for(exc.__cause__)
    if isinstance(exc, store_errors.InvalidInput):
        return ExitCode.USAGE
    if isinstance(exc, store_errors.NotFound | IdNotFound):
        return ExitCode.NOT_FOUND
    if isinstance(exc, store_errors.ReadOnly | store_errors.Conflict | Refused):
        return ExitCode.REFUSED
    if isinstance(exc, store_errors.SchemaNotMigrated | store_errors.SchemaTooNew):
        return ExitCode.SCHEMA
    if isinstance(exc, store_errors.Unavailable):
        return ExitCode.UNAVAILABLE
    if isinstance(exc, store_errors.Timeout):
        return ExitCode.TIMEOUT
    if isinstance(exc, store_errors.StorageFull):
        return ExitCode.FULL
    return ExitCode.FAILURE


def message_for(exc: BaseException) -> str:
    """One line, never a DSN password, any text from the database in it escaped."""
    from qctl.core.sanitize import sanitize
    from qctl.core.verbs import Stopped
    from qctl_kit import errors as store_errors
    from qctl_kit.dsn import redact

    if isinstance(exc, Stopped) and exc.__cause__ is not None:
        return f"stopped part-way ({exc.result.done} done): {message_for(exc.__cause__)}"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, store_errors.SchemaNotMigrated) and "qctl db migrate" not in text:
        text += "; run `qctl db migrate`"
    if isinstance(exc, store_errors.Timeout):
        text += f"; raise it with --{exc.setting.replace('_', '-')}"
    if not isinstance(exc, store_errors.StoreError | Refused | Failed):
        text = f"{type(exc).__name__}: {text}"
    return redact(" ".join(sanitize(text, multiline=True).split()))
