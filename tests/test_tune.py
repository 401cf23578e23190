"""A system's opt-in console index (``qctl_kit.postgres.tune.ConsoleIndex``, hopper's,
River's and Oban's ``db tune``): listed only when valid, a dry run names what a real run
builds and writes nothing, the write check runs before the build, a build an interrupted
one left invalid is redone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from qctl_kit.errors import InvalidInput
from qctl_kit.postgres.tune import ConsoleIndex
from tests.conftest import PG_DSN

INDEX = ConsoleIndex("qctl_tuned_queue_id", "tuned", "queue, id")


class Session:
    """What the index needs of a system's database: ``all`` and ``execute``."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def all(self, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        cur = self.conn.execute(text, params)
        names = [c.name for c in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def execute(self, text: str) -> int:
        return self.conn.execute(text).rowcount


@pytest.fixture
def db(pg_schema: str) -> Iterator[Session]:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{pg_schema}"')
        conn.execute("DROP TABLE IF EXISTS tuned")
        conn.execute("CREATE TABLE tuned (id bigint PRIMARY KEY, queue text)")
        conn.execute("INSERT INTO tuned VALUES (1, 'a'), (2, 'a')")
        yield Session(conn)


def indexes(db: Session) -> list[str]:
    rows = db.all("SELECT indexname FROM pg_indexes WHERE tablename = 'tuned'", {})
    return sorted(r["indexname"] for r in rows)


def ok() -> None:
    pass


def refuse() -> None:
    raise InvalidInput("not writable")


def test_dry_run_then_build_then_nothing(db: Session) -> None:
    assert INDEX.present(db) == []
    assert INDEX.create(db, dry_run=True, writable=refuse) == [INDEX.name]
    with pytest.raises(InvalidInput):
        INDEX.create(db, dry_run=False, writable=refuse)
    assert indexes(db) == ["tuned_pkey"]
    assert INDEX.create(db, dry_run=False, writable=ok) == [INDEX.name]
    assert INDEX.present(db) == [INDEX.name]
    assert INDEX.create(db, dry_run=False, writable=refuse) == []  # nothing left to write


def test_an_invalid_build_is_redone(db: Session) -> None:
    with pytest.raises(psycopg.errors.UniqueViolation):
        db.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {INDEX.name} ON tuned (queue)")
    assert INDEX.name in indexes(db) and INDEX.present(db) == []
    assert INDEX.create(db, dry_run=False, writable=ok) == [INDEX.name]
    assert INDEX.present(db) == [INDEX.name]
    definition = db.all(
        "SELECT indexdef FROM pg_indexes WHERE indexname = %(n)s", {"n": INDEX.name}
    )
    assert "UNIQUE" not in definition[0]["indexdef"]
