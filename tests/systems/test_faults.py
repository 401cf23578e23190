"""Faults look the same on every system (PostgreSQL): a statement waiting behind another
session's lock names the holder (pid, user, application, query, age) on the command
line when its lock timeout ends it, and on the dashboard while it waits; once the lock
is released the dashboard's next refreshes succeed, lock after lock.

Each system's database comes from its provider (``tests/<system>/contract.py``); the
holder locks every table of the system's schema, as a migration or an operator's stuck
transaction would."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from qctl import systems
from qctl.cli.context import CliContext
from qctl.cli.main import app
from qctl.tui.app import LOCKED, QctlTop
from tests.conftest import require_pg
from tests.systems.contract import Target
from tests.systems.test_contract import NAMES, provider, system
from tests.tui.helpers import until

pytestmark = [pytest.mark.timeout(300), pytest.mark.pg]

HOLDER = "qctl-test-holder"


@pytest.fixture(scope="module", params=NAMES)
def target(request: pytest.FixtureRequest) -> Iterator[tuple[str, Target]]:
    require_pg()
    with provider(request.param).database() as t:
        yield request.param, t


@pytest.fixture
def holder(target: tuple[str, Target]) -> Iterator[psycopg.Connection[Any]]:
    _, t = target
    with psycopg.connect(t.dsn, application_name=HOLDER) as conn:
        yield conn
        conn.rollback()


def lock_all(holder: psycopg.Connection[Any], t: Target) -> None:
    """Every table of the system's schema, ACCESS EXCLUSIVE, in ``holder``'s transaction."""
    tables = [
        f'"{t.schema}"."{r[0]}"'
        for r in holder.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (t.schema,)
        )
    ]
    assert tables
    holder.execute(f"LOCK TABLE {', '.join(tables)} IN ACCESS EXCLUSIVE MODE")


def a_list(name: str) -> list[str]:
    """A read every system has: the list of its first noun among these."""
    nouns = system(name).commands
    return [next(n for n in ("jobs", "workflows", "queues") if n in nouns), "list"]


def named(line: str, pid: int) -> bool:
    return f"waiting for a lock held by pid {pid} (user postgres, application '{HOLDER}'" in line


def test_a_read_behind_a_lock_names_the_holder(
    target: tuple[str, Target], holder: psycopg.Connection[Any]
) -> None:
    name, t = target
    lock_all(holder, t)
    result = CliRunner().invoke(app, [*t.args, "--lock-timeout", "1s", *a_list(name)])
    assert result.exit_code == 7, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("qctl: error: timed out after 1s ") and named(
        line, holder.info.backend_pid
    )
    assert line.endswith("(lock_timeout); raise it with --lock-timeout"), line


def test_a_write_behind_a_lock_names_the_holder(
    target: tuple[str, Target], holder: psycopg.Connection[Any]
) -> None:
    name, t = target
    lock_all(holder, t)
    args = [*t.args, "--lock-timeout", "1s", *provider(name).REAL_WRITE, "--yes"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 7, result.output
    line = result.stderr.splitlines()[-1]
    assert named(line, holder.info.backend_pid), line


def test_the_dashboard_names_the_holder_and_refreshes_after_each_release(
    target: tuple[str, Target], holder: psycopg.Connection[Any]
) -> None:
    """As ``qctl top`` opens it (``qctl.cli.launch.dashboard``), with a lock timeout
    longer than the wait: the status bar says who holds the lock; after the holder
    ends its transaction the dashboard refreshes without error, three times over."""
    name, t = target
    c = CliContext.resolve(dsn=t.dsn, schema=t.schema, lock_timeout="60s", system=name)
    lock_waits: list[tuple[float, str]] = []
    handle = c.handle(
        pooled=True, on_lock_wait=lambda b: lock_waits.append((time.monotonic(), b.line()))
    )
    pid = holder.info.backend_pid

    async def main() -> None:
        top = QctlTop(
            handle,
            system=systems.load(system(name).screens),
            location="faults",
            poll_interval=0.5,
            lock_waits=lock_waits,
        )
        async with top.run_test(size=(200, 50)) as pilot:
            await until(pilot, lambda: top.refresh_count >= 1, 20)
            for _ in range(3):
                lock_all(holder, t)
                await until(pilot, lambda: top.mode == LOCKED, 20)
                assert named(top.locked_by, pid), top.locked_by
                holder.rollback()
                done = top.refresh_count

                def recovered(n: int = done) -> bool:
                    return top.refresh_count >= n + 3 and top.mode != LOCKED

                await until(pilot, recovered, 20)
                assert top.connection_error == "", top.connection_error

    try:
        asyncio.run(main())
    finally:
        c.close()
