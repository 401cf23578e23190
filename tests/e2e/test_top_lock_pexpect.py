"""The real ``qctl top`` in a pty on PostgreSQL while another session holds a lock on the
job table: the status bar says the dashboard waits for a lock and names its holder (not
"disconnected"), and ``q`` or Ctrl-C quit at once, the waiting statements cancelled on
the server, however long the lock timeout."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pexpect
import psycopg
import pytest

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from tests.cli.test_timeouts import blocked_by
from tests.conftest import PG_DSN
from tests.e2e.test_top_pexpect import QCTL, Screen

pytestmark = [pytest.mark.timeout(120), pytest.mark.pg]


@pytest.fixture
def schema(pg_schema: str) -> str:
    store = PostgresStore(PG_DSN, Config(schema=pg_schema))
    store.migrate()
    store.close()
    return pg_schema


@pytest.fixture
def holder() -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(PG_DSN, application_name="qctl-test-holder") as conn:
        yield conn
        conn.rollback()


@pytest.mark.parametrize("key", ["q", "\x03"], ids=["q", "ctrl-c"])
def test_top_behind_a_lock_says_so_and_quits_at_once(
    schema: str, holder: psycopg.Connection[Any], key: str
) -> None:
    env = dict(os.environ, TERM="xterm-256color", NO_COLOR="1")
    args = ["--dsn", PG_DSN, "--schema", schema, "--lock-timeout", "60s"]
    child = pexpect.spawn(
        str(QCTL),
        [*args, "--statement-timeout", "120s", "top", "--refresh", "1"],
        dimensions=(40, 200),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
    )
    screen = Screen(child)
    try:
        screen.wait_for("updated")
        holder.execute(f'LOCK TABLE "{schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
        child.send("r")
        screen.wait_for("● waiting for a lock ")
        screen.wait_for(f"waiting for a lock held by pid {holder.info.backend_pid} (user postgres")
        assert "disconnected" not in screen.text
        assert blocked_by(holder.info.backend_pid)  # the dashboard's reads wait on it
        child.send(key)
        child.expect(pexpect.EOF, timeout=30)
    finally:
        if child.isalive():
            child.terminate(force=True)
        child.close()
    assert child.exitstatus == 0, screen.text[-2000:]
    assert "Traceback" not in child.before
    assert blocked_by(holder.info.backend_pid) == []  # cancelled, not left waiting
