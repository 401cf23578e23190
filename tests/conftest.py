"""Shared fixtures: stores on both backends, each test module in its own fresh
PostgreSQL schema (dropped afterwards) or its own SQLite file.

PostgreSQL comes from ``QCTL_TEST_PG_DSN`` (default the local ``test`` database). When
it is unreachable the PostgreSQL tests skip, unless ``QCTL_REQUIRE_PG=1`` (CI), which
fails the run instead.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from qctl_kit.streams import Subscription
from qctl_store import Config, open_store
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import Change
from tests.conformance.helpers import await_change, is_reset

PG_DSN = os.environ.get("QCTL_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")

# Every write a test makes appends to the audit trail (qctl.core.audit): never to the
# operator's own, here or in the qctl processes the tests start.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="qctl-test-state-")
BACKENDS = ["sqlite", "postgres"]

# A run started in the background by a shell without job control (``nohup make test &``)
# inherits SIGINT ignored, and so would every qctl it starts: the tests that press Ctrl-C
# would wait out their timeouts. Caught here, it is delivered again in each child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_pg_state: dict[str, str | None] = {}


def pg_unreachable_reason() -> str | None:
    if "reason" not in _pg_state:
        try:
            with psycopg.connect(PG_DSN, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _pg_state["reason"] = None
        except psycopg.Error as exc:
            _pg_state["reason"] = f"PostgreSQL unreachable at {PG_DSN}: {exc}".splitlines()[0]
    return _pg_state["reason"]


def require_pg() -> None:
    reason = pg_unreachable_reason()
    if reason is None:
        return
    if os.environ.get("QCTL_REQUIRE_PG") == "1":
        pytest.fail(f"QCTL_REQUIRE_PG=1 but {reason}")
    pytest.skip(reason)


def _schema_name(request: pytest.FixtureRequest) -> str:
    mod = re.sub(r"[^a-z0-9]+", "_", request.module.__name__.rsplit(".", 1)[-1].lower())
    return f"qt_{mod[:30]}_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def pg_schema(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, empty schema for this test module; dropped with CASCADE afterwards."""
    require_pg()
    schema = _schema_name(request)
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield schema
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def fresh_pg_schema(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh schema for one test (migration and isolation tests)."""
    require_pg()
    schema = _schema_name(request)
    yield schema
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextlib.contextmanager
def own_pg_database() -> Iterator[str]:
    """A PostgreSQL database of its own (a unique name), dropped afterwards with whatever
    sessions are still on it: its DSN. For what a schema cannot hold apart: a fixed
    schema name (a demo's), a table per database (the audit's), its sessions killed."""
    require_pg()
    name = f"qctl_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_DSN.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def fresh_pg_database() -> Iterator[str]:
    """``own_pg_database`` for one test."""
    with own_pg_database() as dsn:
        yield dsn


@pytest.fixture(params=BACKENDS)
def azync_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated azync database of one test's own: an SQLite file, or a PostgreSQL
    database (``own_pg_database``); its DSN."""

    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            dsn = f"sqlite:///{tmp_path / 'own.db'}"
        else:
            dsn = stack.enter_context(own_pg_database())
        store = open_store(dsn)
        store.migrate()
        store.close()
        yield dsn


StoreFactory = Callable[..., PostgresStore | SqliteStore]


def _open(
    backend: str, schema: str, sqlite_path: Path, **config: object
) -> PostgresStore | SqliteStore:
    if backend == "postgres":
        return PostgresStore(PG_DSN, Config(schema=schema, **config))  # type: ignore[arg-type]
    return SqliteStore(str(sqlite_path), Config(**config))  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def module_db(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, Path]]:
    """(backend, schema, sqlite path) of this module's database, migrated."""
    schema = request.getfixturevalue("pg_schema") if backend == "postgres" else ""
    path = tmp_path_factory.mktemp("sqlite") / "qctl.db"
    s = _open(backend, schema, path)
    s.migrate()
    s.close()
    yield backend, schema, path


@pytest.fixture(scope="module")
def store_factory(module_db: tuple[str, str, Path]) -> Iterator[StoreFactory]:
    """Opens more stores on this module's database (other sessions, other configs)."""
    backend, schema, path = module_db
    opened: list[PostgresStore | SqliteStore] = []

    def factory(**config: object) -> PostgresStore | SqliteStore:
        s = _open(backend, schema, path, **config)
        opened.append(s)
        return s

    yield factory
    for s in opened:
        s.close()


@pytest.fixture(scope="module")
def store(store_factory: StoreFactory) -> PostgresStore | SqliteStore:
    """One store shared by every test of the module, as azync's suites share one
    (``driver/drivertest/conformance.go``): tests stay apart by unique kinds and names."""
    return store_factory()


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the operator's config file or touches their default database;
    the command-line and DBOS suites use it for every test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for var in (
        "QCTL_DSN",
        "QCTL_SCHEMA",
        "QCTL_CONTEXT",
        "QCTL_READ_ONLY",
        "QCTL_SYSTEM",
        "QCTL_REASON",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def changes(store: PostgresStore | SqliteStore) -> Iterator[Subscription[Change]]:
    sub = store.changes()
    assert sub is not None, "both backends push change hints unless poll-only"
    yield sub
    sub.close()


@pytest.fixture
def live(changes: Subscription[Change]) -> Subscription[Change]:
    """A subscription past its opening reset (Go's ``subscribeLive``)."""
    await_change(changes, "the opening reset", is_reset)
    return changes


def raw_pg(schema: str) -> psycopg.Connection[Any]:
    """A plain autocommit connection in ``schema``: another session, outside the store."""
    return psycopg.connect(PG_DSN, autocommit=True, options=f"-c search_path={schema}")


@contextlib.contextmanager
def raw_sqlite(path: str) -> Iterator[sqlite3.Connection]:
    """A plain autocommit connection of another writer to the SQLite file ``path``."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        yield conn
    finally:
        conn.close()
