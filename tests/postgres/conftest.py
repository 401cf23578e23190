"""PostgreSQL-only modules: the backend, a store seeded with bulk rows by the module's
``seed`` function, and the statement recording the plan checks EXPLAIN."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import sql

from qctl_store.postgres import PostgresStore, admin
from tests.conftest import PG_DSN, StoreFactory, raw_pg


@pytest.fixture(scope="module")
def backend() -> str:
    return "postgres"


@pytest.fixture(scope="module")
def store(store_factory: StoreFactory, request: pytest.FixtureRequest) -> PostgresStore:
    """The module's store; a module with a ``seed(conn)`` function gets its rows
    (inserted on another session), and the schema's tables are vacuumed and analyzed
    so plans see their sizes (only this schema's: the database is shared)."""
    s = store_factory()
    assert isinstance(s, PostgresStore)
    seed = getattr(request.module, "seed", None)
    if seed is not None:
        with raw_pg(s.schema) as c:
            seed(c)
            tables = c.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchall()
            c.execute(
                sql.SQL("VACUUM ANALYZE {}").format(
                    sql.SQL(", ").join(sql.Identifier(t) for (t,) in tables)
                )
            )
    return s


@pytest.fixture
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Estimate huge states past 1,000 rows, so a small table takes that path."""
    monkeypatch.setattr(admin, "ESTIMATE_THRESHOLD", 1000)


def _recording(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch, method: str
) -> list[tuple[str, Any]]:
    """Every statement run through the store's ``method`` cursors, with its arguments."""
    seen: list[tuple[str, Any]] = []
    cursor = getattr(store, method)

    class Recording:
        def __init__(self, cur: Any) -> None:
            object.__setattr__(self, "_cur", cur)

        def execute(self, sql: str, args: Any = None, **kw: Any) -> Any:
            seen.append((sql, args))
            return self._cur.execute(sql, args, **kw)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._cur, name)

        def __setattr__(self, name: str, value: Any) -> None:  # a row_factory, say
            setattr(self._cur, name, value)

    @contextmanager
    def recording() -> Iterator[Any]:
        with cursor() as cur:
            yield Recording(cur)

    monkeypatch.setattr(store, method, recording)
    return seen


@pytest.fixture
def statements(store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every statement the store's reads execute during the test, with its arguments."""
    return _recording(store, monkeypatch, "read")


@pytest.fixture
def writes(store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every one-statement write (``write()``) the store executes during the test."""
    return _recording(store, monkeypatch, "write")


def plans(store: PostgresStore, seen: list[tuple[str, Any]]) -> list[str]:
    """The plan of every recorded statement (EXPLAINs of estimates excepted)."""
    out = []
    with psycopg.connect(PG_DSN, options=f"-c search_path={store.schema}") as c:
        for sql, args in seen:
            if sql.lstrip().upper().startswith("EXPLAIN"):
                continue
            rows = c.execute("EXPLAIN " + sql, args).fetchall()
            out.append("\n".join(r[0] for r in rows))
    assert out, "no statement was recorded"
    return out


def terminate_backends(application_name: str, query_like: str = "%") -> list[bool]:
    """End every session named ``application_name`` (whose current or last statement is
    ``LIKE query_like``) from another connection, as a server restart or an operator's kill
    would; one flag per backend (True: it ended).

    It waits up to 5 s for each backend to exit: by then its FATAL message is in the
    client's socket, so the pool's checkout check sees the session dead. Without the wait
    the check can pass on a session still exiting and the next statement fails."""
    with psycopg.connect(PG_DSN, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = %s AND query LIKE %s AND pid <> pg_backend_pid()",
            (application_name, query_like),
        ).fetchall()
    return [ended for (ended,) in rows]
