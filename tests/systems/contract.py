"""What each system's tests give the contract suite (``test_contract.py``), as River's
driver tests take a driver: a module ``tests/<system>/contract.py`` per registered system
with

- ``database()``: a context manager yielding a ``Target``: a fresh database of the system
  (made by the system's own software where it runs here) holding a few rows of each kind
  its verbs act on, and the root options that point qctl at it;
- ``WRITES``: every verb that writes ("noun verb" → arguments that would write, without
  ``--yes``/``--dry-run``, naming rows the verb would change; None for a verb the system
  refuses outright, as DBOS's ``db migrate``);
- ``REAL_WRITE``: the arguments of one write that changes nothing the other tests'
  arguments need (``--yes`` added), run for real and audited;
- ``handle(target)``: a context manager yielding what the dashboard (``QctlTop``) reads
  for the target, opened as ``qctl top`` opens it;
- ``BACKENDS`` (optional): the backends its databases live on, PostgreSQL first
  (``("postgres",)`` when absent); for each further one ``database(backend)`` yields a
  target there, and the suites run over every one.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import psycopg


@dataclass(frozen=True)
class Target:
    args: list[str]
    """Root options: ``--dsn``, and ``--schema`` where the system's default is not it."""
    dsn: str
    schema: str
    """The PostgreSQL schema holding the system's tables ("" for SQLite)."""
    settle: Callable[[], None] | None = None
    """Waits until the system's own processes answered every signal sent so far (their
    answers change rows after the command that signalled has returned)."""


class Provider(Protocol):
    WRITES: dict[str, list[str] | None]
    REAL_WRITE: list[str]

    def database(self) -> contextlib.AbstractContextManager[Target]: ...

    def handle(self, target: Target) -> contextlib.AbstractContextManager[Any]: ...


DEFAULT_BACKEND = "postgres"


def backends(provider: ModuleType) -> tuple[str, ...]:
    """The backends of a provider's databases (``BACKENDS``)."""
    return tuple(getattr(provider, "BACKENDS", (DEFAULT_BACKEND,)))


def open_database(provider: ModuleType, backend: str) -> contextlib.AbstractContextManager[Target]:
    """The provider's database on ``backend``."""
    if backend == DEFAULT_BACKEND:
        database: contextlib.AbstractContextManager[Target] = provider.database()
        return database
    other: contextlib.AbstractContextManager[Target] = provider.database(backend)
    return other


def target_id(name: str, backend: str) -> str:
    """A target's test id: the system's name, and the backend where it is not the first."""
    return name if backend == DEFAULT_BACKEND else f"{name}-{backend}"


def snapshot(target: Target) -> dict[str, list[str]]:
    """Every row of every table of the system's schema (or SQLite file), as text."""
    if target.dsn.startswith("postgres"):
        with psycopg.connect(target.dsn, autocommit=True) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s", (target.schema,)
                )
            ]
            return {
                t: sorted(repr(r) for r in conn.execute(f'SELECT * FROM "{target.schema}"."{t}"'))
                for t in tables
            }
    path = target.dsn.removeprefix("sqlite://")
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as lite:
        names = [r[0] for r in lite.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: sorted(repr(r) for r in lite.execute(f'SELECT * FROM "{n}"')) for n in names}


@contextlib.contextmanager
def unchanged(target: Target) -> Iterator[None]:
    """Asserts that the body leaves every row of the target as it found it."""
    if target.settle:
        target.settle()
    before = snapshot(target)
    yield
    if target.settle:
        target.settle()
    after = snapshot(target)
    changed = [t for t in sorted(set(before) | set(after)) if before.get(t) != after.get(t)]
    assert not changed, f"rows changed in {changed}"
