"""The real ``qctl top`` in a pty on a DBOS SQLite system database that a DBOS
application is working: it says it polls, shows the application's queues on the
overview and a workflow it runs in the browser, and quits on ``q``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from tests.dbos.fixtures import App
from tests.e2e.test_top_pexpect import Screen

pytestmark = pytest.mark.timeout(120)

QCTL = Path(sys.executable).parent / "qctl"


def test_top_on_a_dbos_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    app = App(url)
    try:
        env = dict(os.environ, TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
        child = pexpect.spawn(
            str(QCTL),
            ["--dsn", url, "top", "--refresh", "0.5"],
            env=env,
            encoding="utf-8",
            dimensions=(40, 160),
            timeout=30,
        )
        screen = Screen(child)
        screen.wait_for("polling")
        screen.wait_for("every 0.5s")
        screen.wait_for("every_second")  # the application's schedule fired, on screen
        app.enqueue("checkout", "pty-1", 3, id="pty-checkout")
        child.send("2")  # the Workflows tab
        screen.wait_for("pty-checkout")
        child.send("q")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    finally:
        app.stop()
