"""The refusals every system's actions share, and what counts as a lost connection.

Each is a ``qctl_store`` error, so a front-end maps it like the store's own: ``WrongVerb``
and ``Strands`` are usage errors (exit 2), ``WrongState`` and ``NoSuchName`` are not-found (exit 3).
Their text is the whole message, one line, saying why and what to do instead.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import Enum

from qctl_kit import errors
from qctl_kit.errors import InvalidInput, NotFound, StoreError


class WrongVerb(InvalidInput):
    """The row exists, but this verb must not act on it: another verb owns it (a DAG
    task is retried through its DAG). The message names the verb to use instead."""


class Strands(InvalidInput):
    """The system's own manager would do it, but on this row it strands work (a saga
    left half undone, a step run twice): refused unless the operator forces it. The
    message says what would break, what to do instead and that ``--force`` overrides."""


class _Refusal(NotFound):
    def __init__(self, op: str, message: str) -> None:
        self.op = op
        StoreError.__init__(self, message)


class WrongState(_Refusal):
    """The row is not in a state the action accepts: "job e4b6360a is succeeded; pause
    needs pending or scheduled"."""


def require_state(op: str, subject: str, state: str, needs: Collection[str], action: str) -> None:
    """Raise ``WrongState`` unless ``state`` is one of ``needs``: "{subject} is {state};
    {action} needs A or B", the states named in their enum's order (as given for plain
    strings), so a set reads the same on every run."""
    if state in needs:
        return
    wanted = [s for s in type(state) if s in needs] if isinstance(state, Enum) else list(needs)
    raise WrongState(op, f"{subject} is {state}; {action} needs {' or '.join(wanted)}")


class NoSuchName(_Refusal):
    """A name the operator typed matches nothing: "no kind named X" (a typo must not
    read as an empty success)."""


def no_such_id(what: str, text: object, whole: bool = True) -> NoSuchName:
    """The one wording, on every system, of an id that names nothing: "no job '42'" for
    an id typed whole, "no job id starts with '0192f3a1'" for a prefix of one."""
    typed = repr(str(text))
    said = f"no {what} {typed}" if whole else f"no {what} id starts with {typed}"
    return NoSuchName(f"get {what}", said)


def is_connection_error(error: BaseException) -> bool:
    """The database is unreachable, the session was lost, or the schema is not (or no
    longer) one qctl reads: what a long-running front-end waits out instead of failing on."""
    return isinstance(
        error, errors.Unavailable | errors.SchemaNotMigrated | errors.SchemaTooNew | OSError
    ) or type(error).__module__.startswith("psycopg")
