"""The failures an operator meets before any job exists: an unreachable server
(``Unavailable``, never leaking the DSN's password), a database nobody migrated
(``SchemaNotMigrated`` on the first store call) and a database migrated by a newer
release (``SchemaTooNew`` from ``migrate()`` and ``check_schema()``, touching nothing).
Each test gets a database of its own."""

from __future__ import annotations

import sqlite3
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from qctl_kit.errors import SchemaNotMigrated, SchemaTooNew, Unavailable
from qctl_store import Config, open_store
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import EnqueueParams, JobFilter, Source
from tests.conftest import PG_DSN, require_pg

SECRET = "s3cr3t-pw"
UNREACHABLE_URL = f"postgresql://u:{SECRET}@127.0.0.1:1/x"
UNREACHABLE_KV = f"host=127.0.0.1 port=1 user=u password={SECRET} dbname=x"


def full_text(exc: BaseException) -> str:
    """Everything a traceback of ``exc`` would print, chained causes included."""
    return "".join(traceback.format_exception(exc)) + repr(exc)


# --- unreachable server --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dsn", "pooled"),
    [(UNREACHABLE_URL, False), (UNREACHABLE_KV, False), (UNREACHABLE_URL, True)],
    ids=["url", "keyvalue", "url-pooled"],
)
def test_unreachable_server_is_unavailable_without_leaking_the_password(
    dsn: str, pooled: bool
) -> None:
    with pytest.raises(Unavailable) as info:
        PostgresStore(dsn, Config(pooled=pooled))
    assert SECRET not in full_text(info.value)
    assert "127.0.0.1" in str(info.value), "the message still says which server"


def test_open_store_reports_unreachable_server_the_same_way() -> None:
    with pytest.raises(Unavailable) as info:
        open_store(UNREACHABLE_URL, Config(pooled=False))
    assert SECRET not in full_text(info.value)


# --- a database per test -------------------------------------------------------------------


@dataclass
class FreshDB:
    """An empty database of one backend: stores open on it, raw SQL runs against it."""

    backend: str
    open: Callable[[], PostgresStore | SqliteStore]
    execute: Callable[[str], list[tuple[object, ...]]]
    version_table: str = "azync_migrations"


@pytest.fixture
def fresh_db(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FreshDB]:
    opened: list[PostgresStore | SqliteStore] = []

    def track(s: PostgresStore | SqliteStore) -> PostgresStore | SqliteStore:
        opened.append(s)
        return s

    if backend == "postgres":
        require_pg()
        schema = request.getfixturevalue("fresh_pg_schema")
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')

        def pg_execute(sql: str) -> list[tuple[object, ...]]:
            with psycopg.connect(PG_DSN, autocommit=True) as conn:
                conn.execute(f'SET search_path = "{schema}"')
                cur = conn.execute(sql)
                return cur.fetchall() if cur.description else []

        yield FreshDB(
            backend, lambda: track(PostgresStore(PG_DSN, Config(schema=schema))), pg_execute
        )
    else:
        path = tmp_path / "fresh.db"
        sqlite3.connect(path).close()  # an empty file, as a typo'd path would create

        def sqlite_execute(sql: str) -> list[tuple[object, ...]]:
            with sqlite3.connect(path) as conn:
                return list(conn.execute(sql).fetchall())

        yield FreshDB(backend, lambda: track(SqliteStore(str(path))), sqlite_execute)
    for s in opened:
        s.close()


STORE_CALLS: dict[str, Callable[[PostgresStore | SqliteStore], object]] = {
    "enqueue": lambda s: s.enqueue(EnqueueParams(kind="k")),
    "list_jobs": lambda s: s.list_jobs(Source.QUEUE, JobFilter(), 0, 0),
    "kind_depths": lambda s: s.kind_depths(Source.QUEUE),
}


@pytest.mark.parametrize("call", list(STORE_CALLS), ids=list(STORE_CALLS))
def test_unmigrated_database_raises_schema_not_migrated(fresh_db: FreshDB, call: str) -> None:
    store = fresh_db.open()
    with pytest.raises(SchemaNotMigrated, match=r"(?i)migrat"):
        STORE_CALLS[call](store)


def test_check_schema_on_an_unmigrated_database(fresh_db: FreshDB) -> None:
    with pytest.raises(SchemaNotMigrated):
        fresh_db.open().check_schema()


def test_check_schema_passes_once_migrated(fresh_db: FreshDB) -> None:
    store = fresh_db.open()
    store.migrate()
    store.check_schema()
    assert store.enqueue(EnqueueParams(kind="k")) is True


def _versions(db: FreshDB) -> list[tuple[object, ...]]:
    return db.execute(f"SELECT version_id, is_applied FROM {db.version_table} ORDER BY id")


def test_database_migrated_past_this_release_is_schema_too_new(fresh_db: FreshDB) -> None:
    fresh_db.open().migrate()
    fresh_db.execute(
        f"INSERT INTO {fresh_db.version_table} (version_id, is_applied) VALUES (999, true)"
    )
    before = _versions(fresh_db)

    store = fresh_db.open()
    with pytest.raises(SchemaTooNew, match="999"):
        store.migrate()
    with pytest.raises(SchemaTooNew, match="999"):
        store.check_schema()
    assert _versions(fresh_db) == before, "a too-new database is left untouched"
