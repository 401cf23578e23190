"""The errors every system's database code raises, whatever the system (azync's store,
DBOS, hopper, ...); the front-ends map each class to an exit code.

``NotFound`` is raised exactly where the Go contract returns its not-found error
(``driver.IsNotFound``, which tests the type); its message names the operation in words
that fit any system and any row (azync's Go driver says ``azync: <op>: job not found in
expected state`` of DAGs and workflows too). Everything else a caller can act on has its
own class.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


class StoreError(Exception):
    """Base class of every error the toolkit and the systems raise on purpose."""


class NotFound(StoreError):
    """The target row is missing or not in the state the operation expects."""

    def __init__(self, op: str, detail: str = "") -> None:
        self.op = op
        msg = f"{op}: not found, or not in a state that allows it"
        super().__init__(f"{msg} ({detail})" if detail else msg)


class InvalidInput(StoreError, ValueError):
    """A parameter is rejected at the API edge; nothing was written."""


class Unavailable(StoreError):
    """The backend cannot be reached or the connection was lost."""


class Timeout(StoreError):
    """PostgreSQL cancelled a statement: it waited longer than the session's
    ``lock_timeout`` for a lock another session holds, or ran longer than its
    ``statement_timeout``. The statement is gone from the server and its transaction
    rolled back; ``setting`` names which limit it hit, ``limit`` its value when known;
    ``holder``: the session the statement waited behind, as the session watch saw it
    (``qctl_kit.postgres.watch.Blocker.line``), when it did."""

    def __init__(self, setting: str, limit: timedelta | None = None, holder: str = "") -> None:
        self.setting = setting
        self.limit = limit
        after = f" after {limit.total_seconds():g}s" if limit else ""
        what = (
            holder or "waiting for a lock held by another session"
            if setting == "lock_timeout"
            else "running one statement"
        )
        super().__init__(f"timed out{after} {what} ({setting})")


class NoAnswer(Timeout):
    """The server sent nothing for ``seconds`` while a statement ran, past the point
    where it would have cancelled the statement itself (a paused or unreachable
    server): the client gave the connection up."""

    def __init__(self, seconds: float) -> None:
        StoreError.__init__(
            self, f"timed out: the server did not answer for {seconds:g}s (paused or unreachable)"
        )
        self.setting = "statement_timeout"
        self.limit = None


class SchemaNotMigrated(StoreError):
    """The database has no schema of the system (or an older one): run ``qctl db migrate``."""


class SchemaTooNew(StoreError):
    """The database was migrated past the versions this release knows."""


class StorageFull(StoreError):
    """The database could not grow: its disk is full (SQLite's SQLITE_FULL, PostgreSQL's
    disk_full) or it reached its size limit (SQLite's ``max_page_count``). The statement
    that hit it was rolled back; batches committed before it stand."""


class ReadOnly(StoreError):
    """A write was attempted on a session or store opened read-only."""


class Conflict(StoreError):
    """A concurrent writer won; the operation may be retried."""


class UniqueViolation(Conflict):
    """A unique index refused the row: another row already holds the key."""


@dataclass
class Done:
    """What bulk work had committed when an exception stopped it: ``rows`` in
    ``batches`` transactions (rows of steps finished before count, their batches not)."""

    rows: int = 0
    batches: int = 0


def add_done(exc: BaseException, rows: int, batches: int = 0) -> None:
    """Record on ``exc``, as it passes up through the loops of bulk work (any exception:
    a timeout, a lost server, Ctrl-C), what each loop had committed before it."""
    if rows or batches:
        done = done_before(exc) or Done()
        done.rows += rows
        done.batches += batches
        exc.qctl_done = done  # type: ignore[attr-defined]


def done_before(exc: BaseException) -> Done | None:
    """What the bulk work ``exc`` stopped had committed (``add_done``), if any."""
    done = getattr(exc, "qctl_done", None)
    return done if isinstance(done, Done) else None


def not_unicode(exc: UnicodeEncodeError, what: str = "a text argument") -> InvalidInput:
    """The error for text without a UTF-8 form, showing the offending characters."""
    bad = exc.object[exc.start : exc.end]
    return InvalidInput(f"{what} is not valid Unicode text ({bad!r}, {exc.reason})")
