"""Fixtures of the conformance suites beyond the shared ``store`` (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from tests.conftest import PG_DSN


@pytest.fixture
def solo_store(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[PostgresStore | SqliteStore]:
    """A migrated store on a database of its own, for a test whose calls act on every
    row of a source (``nuke_all``, ``retry_all_dead`` of every kind): on the module's
    shared store they would count and change the other tests' rows, whatever the order."""
    s: PostgresStore | SqliteStore
    if backend == "postgres":
        s = PostgresStore(PG_DSN, Config(schema=request.getfixturevalue("fresh_pg_schema")))
    else:
        s = SqliteStore(str(tmp_path / "solo.db"))
    s.migrate()
    yield s
    s.close()
