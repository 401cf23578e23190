"""The console's opt-in indexes (``qctl db tune``) on a system's own table, one shape for
every system (azync's ``admin.CONSOLE_INDEXES``; hopper's, River's and Oban's
``ConsoleIndex``):
each named ``qctl_*``, a name no system's migrations take; created only when an operator
asks, with CREATE INDEX CONCURRENTLY, so writers are never blocked; listed by ``qctl db
status``; a read that needs one checks for it (``PRESENT``) and has a path without it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from qctl_kit.sqlfile import load

PRESENT = load("qctl_kit.postgres.queries", "tune.sql").present
"""Which of ``%(names)s`` exist, valid, on ``%(table)s``: rows of ``name``."""

INVALID = load("qctl_kit.postgres.queries", "tune.sql").invalid
"""The invalid indexes of ``%(schema)s`` (empty: the session's schema): rows of ``name``
and ``table``; ``qctl db status`` lists them on every system."""


def build(name: str, definition: str) -> tuple[str, str]:
    """The statements that build the index ``name`` from its ``definition`` (CREATE INDEX
    CONCURRENTLY), each run on its own outside any transaction: a build an interruption
    left invalid is dropped first, then redone."""
    return f"DROP INDEX CONCURRENTLY IF EXISTS {name}", definition


class Session(Protocol):
    """What an index needs of a system's database, its search_path on the system's
    schema."""

    def all(self, text: str, params: dict[str, Any]) -> list[dict[str, Any]]: ...

    def execute(self, text: str) -> int: ...


@dataclass(frozen=True)
class ConsoleIndex:
    """A system's one opt-in index: ``name`` (``qctl_*``) on ``table`` (``columns``)."""

    name: str
    table: str
    columns: str

    @property
    def definition(self) -> str:
        return (
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {self.name} ON {self.table} ({self.columns})"
        )

    def present(self, db: Session) -> list[str]:
        """Its name when the schema has it, valid; else nothing."""
        rows = db.all(PRESENT, {"table": self.table, "names": [self.name]})
        return sorted(str(r["name"]) for r in rows)

    def create(self, db: Session, dry_run: bool, writable: Callable[[], object]) -> list[str]:
        """Build it when missing (CONCURRENTLY: the system's writers go on), after
        ``writable`` (the system's refusal of a schema it does not write to); the names
        built. ``dry_run``: only the names a real run builds."""
        if self.present(db):
            return []
        if not dry_run:
            writable()
            for statement in build(self.name, self.definition):
                db.execute(statement)
        return [self.name]
