"""The console's opt-in indexes (``qctl db tune``) on a system's own table, one shape for
every system (azync's ``admin.CONSOLE_INDEXES``, hopper's ``qctl.systems.hopper.tune``):
each named ``qctl_*``, a name no system's migrations take; created only when an operator
asks, with CREATE INDEX CONCURRENTLY, so writers are never blocked; listed by ``qctl db
status``; a read that needs one checks for it (``PRESENT``) and has a path without it."""

from __future__ import annotations

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
