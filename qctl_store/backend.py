"""The base of both backends' classes (``PgBase``, ``SqliteBase``): what the code they
share may use of a backend, as DBOS's ``dbos/_sys_db.py`` ``SystemDatabase`` is the
one implementation its PostgreSQL and SQLite subclasses adjust.

A backend gives reads and transactions whose cursor runs ``execute(sql, params)`` and
returns a result with ``fetchone()``, ``fetchall()`` and ``rowcount`` (a psycopg cursor;
the ``sqlite3.Cursor`` of a ``Tx``), rows indexable by column name, its named queries
(the same names in ``<backend>/queries/*.sql``), its ``Dialect`` (placeholders, the
fragments that differ, how ids and instants bind) and its ``RowMapper``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, ClassVar

from qctl_kit import errors
from qctl_kit.sqlfile import Queries, load
from qctl_store.columns import AZYNC_SQL

if TYPE_CHECKING:
    from qctl_store.config import Config
    from qctl_store.dialect import Dialect
    from qctl_store.records import RowMapper


class StoreBase(ABC):
    backend: ClassVar[str]
    """The backend's package name under ``qctl_store``."""
    dialect: ClassVar[Dialect]
    rows: ClassVar[RowMapper]
    config: Config

    @abstractmethod
    def read(self) -> AbstractContextManager[Any]:
        """A cursor for reads."""

    @abstractmethod
    def tx(self) -> AbstractContextManager[Any]:
        """A cursor inside one write transaction, committed when the block ends."""

    @abstractmethod
    def bump_stat(self, cur: Any, source: str, kind: str, column: str, n: int = 1) -> None:
        """Add ``n`` to today's ``column`` counter of (source, kind) in ``cur``'s
        transaction."""

    def bump_kinds(self, cur: Any, source: str, kinds: Iterable[str], column: str) -> None:
        """One ``bump_stat`` per kind of ``kinds``, by how often it occurs there, in kind
        order: two writers bumping the same stats rows in opposite orders could
        deadlock."""
        for kind, n in sorted(Counter(kinds).items()):
            self.bump_stat(cur, source, kind, column, n)

    def queries(self, filename: str) -> Queries:
        """The backend's named queries of ``filename`` (``events.sql``)."""
        return load(f"qctl_store.{self.backend}.queries", filename, AZYNC_SQL)

    def _mapped(self) -> AbstractContextManager[None]:
        """Around a refusal of the database as it is: the backend's own words for it
        (PostgreSQL names a configured schema that does not exist)."""
        return nullcontext()


class SchemaGate(StoreBase):
    """``require_schema`` of both backends' ``MigrateMixin``: the backend reads its
    version table, the refusals are ``check_version``'s."""

    _known_version: int | None = None
    """The schema version ``require_schema`` accepted, once per store."""

    def require_schema(self) -> int:
        """The applied schema version, after ``check_schema``'s refusals, from one read
        of the version table; accepted once per store, then answered from memory."""
        if self._known_version is None:
            where, applied, expected, pending = self._schema_versions()
            with self._mapped():
                check_version(where, applied, expected, pending)
            self._known_version = applied
        return self._known_version

    @abstractmethod
    def _schema_versions(self) -> tuple[str, int, int, list[int]]:
        """``check_version``'s arguments, from one read of the version table: the
        database named for a person, its applied version, this release's, and this
        release's versions not applied."""


def check_version(where: str, applied: int, expected: int, pending: list[int]) -> None:
    """Raise ``SchemaTooNew`` or ``SchemaNotMigrated``, naming both versions, unless the
    database ``where`` is at this release's schema version ``expected`` with no version
    ``pending``."""
    if applied > expected:
        raise errors.SchemaTooNew(
            f"{where} is at azync schema version {applied}, newer than this release's "
            f"{expected}; upgrade qctl"
        )
    if applied == 0:
        raise errors.SchemaNotMigrated(f"{where} has no azync schema yet; run `qctl db migrate`")
    if pending:
        missing = ", ".join(str(v) for v in pending)
        than = "older than" if applied < expected else "with versions missing from"
        raise errors.SchemaNotMigrated(
            f"{where} is at azync schema version {applied}, {than} this release's "
            f"{expected} (missing {missing}); run `qctl db migrate`"
        )
