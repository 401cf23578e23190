"""A connection to a hopper database (PostgreSQL), its ``search_path`` set to hopper's
schema, gated on the version hopper's migrator recorded in ``hopper_schema``.

hoppermigrate applies numbered migrations and records one ``hopper_schema`` row per
applied version (``hoppermigrate/hoppermigrate.go``, ``driver/internal/pgsql``
``MigrationApply``). qctl's writes are transcriptions of hopper's code at schema version
8 (``hoppermigrate/migrations/001`` to ``008``): on any other version they are refused
(exit 5, both versions named), since an older schema lacks what they write and a newer
hopper may write differently. Reads go ahead on any version (a missing table or column
is exit 5 too). qctl never migrates a hopper database and never takes hopper's
migration advisory lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from qctl.core.changes import Hint
from qctl.core.sqldb import SqlDatabase
from qctl_kit.errors import SchemaTooNew

KNOWN_VERSIONS: dict[int, str] = {
    1: "schema",
    2: "messaging",
    3: "flow_control",
    4: "workflows",
    5: "streams",
    6: "autovacuum",
    7: "vacuum_truncate",
    8: "function_schema",
}
"""hoppermigrate's migrations qctl knows (``hoppermigrate/migrations/00N_<name>``)."""
WRITES_AT = 8
"""The schema version of the hopper code qctl's writes are transcribed from."""
SUPPORTED = (
    "hopper schema version 8 (hoppermigrate 001_schema..008_function_schema) for writes;"
    " reads of versions 1..8"
)


class UnsupportedSchema(SchemaTooNew):
    """The hopper schema is at a version qctl does not write to; exit 5."""


@dataclass(frozen=True)
class SchemaState:
    """What ``hopper_schema`` says: the applied versions, in order."""

    applied: tuple[int, ...]

    @property
    def version(self) -> int:
        return max(self.applied, default=0)

    @property
    def unknown(self) -> tuple[int, ...]:
        return tuple(v for v in self.applied if v not in KNOWN_VERSIONS)

    @property
    def writable(self) -> bool:
        return self.applied == tuple(range(1, WRITES_AT + 1))

    def refusal(self) -> str:
        found = ", ".join(map(str, self.applied)) or "none"
        why = (
            f"version {self.version} is newer than qctl knows (a newer hopper)"
            if self.unknown
            else f"version {self.version}, not {WRITES_AT}"
        )
        return (
            f"hopper schema at version {self.version} (applied: {found}): {why}; qctl writes"
            f" to hopper schema version {WRITES_AT} only and never migrates a hopper database"
        )


class Database(SqlDatabase):
    """A hopper database (PostgreSQL), its ``search_path`` the hopper schema
    (``--schema``, else ``hopper``, as hopper's ``Config.Schema``); ``state`` is what
    ``hopper_schema`` says, read again by every write's transaction."""

    label = "hopper"
    marker = "hopper_jobs"
    default_schema = "hopper"
    unsupported = UnsupportedSchema
    channels = {
        "hopper_insert": "jobs",
        "hopper_control": "jobs",
        "hopper_done": "jobs",
        "hopper_leader": "clients",
    }
    """``driver/driver.go``'s channels: ChannelInsert (a queue name), ChannelControl
    (``cancel:<id>``, ``pause:<queue>``, ``resume:<queue>``, ``limit:<queue>``),
    ChannelDone (an awaited job's id), ChannelLeader (``resigned``). They are not per
    schema: a notice may be another hopper installation's in the same database (a
    refresh too many, never one too few)."""

    def __init__(self, dsn: str, schema: str = "", **session: Any) -> None:
        """``session``: ``SqlDatabase``'s (``read_only``, the timeouts)."""
        super().__init__(dsn, schema, **session)
        # JIT compiles for longer than any of qctl's reads runs (tens of milliseconds on
        # the dashboard's aggregate over a large history, for nothing).
        self.all("SELECT set_config('jit', 'off', false)")
        self.state = self._read_state()

    def missing(self, detail: str) -> SchemaTooNew:
        version = getattr(self, "state", None)
        at = f"schema version {version.version}; " if version else ""
        return UnsupportedSchema(
            f"hopper schema {self.schema!r} lacks what qctl reads: {detail} ({at}{SUPPORTED})"
        )

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        from psycopg import errors as pgerr

        try:
            with super()._errors():
                yield
        except pgerr.UndefinedColumn as exc:  # an older hopper schema
            raise self.missing(str(exc.diag.message_primary)) from None

    def require_writable(self) -> None:
        """Refuse a write (before any dry run reads) on a schema version qctl does not
        write to."""
        if not self.state.writable:
            raise UnsupportedSchema(self.state.refusal())

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write's transaction, which reads the schema version again first (a hopper
        upgrade may have migrated since qctl connected): nothing is written to a version
        qctl does not know."""
        with super().transaction():
            self.state = self._read_state()
            self.require_writable()
            yield

    def _read_state(self) -> SchemaState:
        rows = self.all("SELECT version FROM hopper_schema ORDER BY version")
        return SchemaState(tuple(int(r["version"]) for r in rows))

    def hint(self, channel: str, payload: str) -> Hint:
        """ChannelInsert names a queue, ChannelDone a job, ChannelControl ``cancel:<id>``
        or ``pause|resume|limit:<queue>``."""
        if channel == "hopper_insert":
            return Hint("jobs", queue=payload, bulk=True)
        if channel == "hopper_done":
            return Hint("jobs", ids=(payload,))
        verb, _, name = payload.partition(":")
        if channel == "hopper_control" and verb == "cancel":
            return Hint("jobs", ids=(name,))
        if channel == "hopper_control" and name:
            return Hint("queues", queue=name)
        return super().hint(channel, payload)
