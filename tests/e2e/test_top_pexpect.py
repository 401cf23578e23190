"""The real ``qctl top`` in a pty (120x40) on a SQLite file that another process
changes: the new state appears on screen, and a retry pressed on screen reaches the
database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pexpect
import pytest

from qctl_store import open_store
from qctl_store.types import DequeueParams, EnqueueParams, JobFilter, JobState, Source

pytestmark = pytest.mark.timeout(120)

QCTL = Path(sys.executable).parent / "qctl"
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class Screen:
    """Accumulates what the app wrote, without escape sequences, to wait for text."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.text = ""

    def pump(self, timeout: float = 0.1) -> None:
        try:
            chunk = self.child.read_nonblocking(1_000_000, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        self.text += ANSI.sub("", chunk)

    def wait_for(self, needle: str, timeout: float = 20.0) -> None:
        end = time.monotonic() + timeout
        start = len(self.text)
        while needle not in self.text[start:]:
            if time.monotonic() > end:
                lines = self.text[-20000:].splitlines()
                tail = "\n".join(line for line in lines if line.strip(" │╭╮╰╯─"))
                raise AssertionError(f"{needle!r} not shown within {timeout}s; tail:\n{tail}")
            self.pump()

    def settle(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump()


def other_process(db: Path, code: str) -> None:
    """Run a store write in a separate process, as a worker elsewhere would."""
    script = (
        "import uuid\n"
        "from qctl_store import open_store\n"
        "from qctl_store.types import *\n"
        f"s = open_store('sqlite:///{db}')\n{code}\ns.close()\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_top_follows_another_process_and_retries(tmp_path: Path) -> None:
    db = tmp_path / "top.db"
    dead_kind, new_kind = f"e2e_dead_{uuid.uuid4().hex[:6]}", f"e2e_new_{uuid.uuid4().hex[:6]}"
    store = open_store(f"sqlite:///{db}")
    store.migrate()
    store.enqueue(EnqueueParams(kind=dead_kind, max_attempts=1))
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=dead_kind))
    assert job.lease_token is not None
    store.dead(job.id, job.lease_token, "boom")

    env = dict(os.environ, TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    env.pop("QCTL_DSN", None)
    child = pexpect.spawn(
        str(QCTL),
        ["--dsn", f"sqlite:///{db}", "top", "--refresh", "1"],
        dimensions=(40, 120),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
    )
    screen = Screen(child)
    try:
        screen.wait_for(dead_kind)
        # Another process enqueues: the dashboard shows it without a key press.
        other_process(db, f"s.enqueue(EnqueueParams(kind={new_kind!r}))")
        screen.wait_for(new_kind)
        # Jobs screen, filtered to the dead job, retried and confirmed.
        child.send("2")
        screen.wait_for("state pending")  # the Jobs tab opens on a live state
        child.send("ttt")
        screen.wait_for("state dead")
        child.send("/")
        screen.wait_for("kind [key=value")
        child.send(dead_kind + "\r")
        screen.wait_for(f"filter {dead_kind}   1-1 of 1")  # applied: the table has focus again
        child.send("R")
        screen.wait_for("Yes (y)")
        child.send("y")
        end = time.monotonic() + 20
        while store.get_job(Source.QUEUE, job.id).state != JobState.PENDING:
            assert time.monotonic() < end, "the retry never reached the database"
            screen.pump()
        screen.wait_for(f"filter {dead_kind}   0 of 0")  # retried: it left the dead list
        # A change made elsewhere to that job appears too: archived, it is dead again.
        other_process(db, f"s.archive_job(Source.QUEUE, uuid.UUID({str(job.id)!r}))")
        screen.wait_for(f"filter {dead_kind}   1-1 of 1")
        child.send("q")
        child.expect(pexpect.EOF, timeout=15)
    finally:
        if child.isalive():
            child.terminate(force=True)
        store.close()
    child.close()
    assert child.exitstatus == 0, screen.text[-2000:]
    assert store_state(db, dead_kind) == JobState.DEAD


def store_state(db: Path, kind: str) -> JobState:
    s = open_store(f"sqlite:///{db}")
    try:
        [j], _ = s.list_jobs(Source.QUEUE, JobFilter(kind=kind))
        return j.state
    finally:
        s.close()


def test_top_marks_rows_and_retries_them(tmp_path: Path) -> None:
    db = tmp_path / "marks.db"
    kind = f"e2e_mark_{uuid.uuid4().hex[:6]}"
    store = open_store(f"sqlite:///{db}")
    store.migrate()
    for _ in range(3):
        store.enqueue(EnqueueParams(kind=kind, max_attempts=1))
    for job in store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=3)):
        assert job.lease_token is not None
        store.dead(job.id, job.lease_token, "boom")

    env = dict(os.environ, TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    env.pop("QCTL_DSN", None)
    child = pexpect.spawn(
        str(QCTL),
        ["--dsn", f"sqlite:///{db}", "top", "--refresh", "1"],
        dimensions=(40, 120),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
    )
    screen = Screen(child)
    try:
        screen.wait_for(kind)
        child.send("2")
        screen.wait_for("state pending")
        child.send("ttt")
        screen.wait_for("state dead")
        child.send("/")
        screen.wait_for("kind [key=value")
        child.send(kind + "\r")
        screen.wait_for(f"filter {kind}   1-3 of 3")
        child.send("  ")  # mark two rows
        screen.wait_for("2 marked")
        child.send("R")
        screen.wait_for("retry 2 marked job(s)?")
        child.send("y")
        screen.wait_for(f"filter {kind}   1-1 of 1")  # the two left the dead list
        child.send("q")
        child.expect(pexpect.EOF, timeout=15)
    finally:
        if child.isalive():
            child.terminate(force=True)
    child.close()
    assert child.exitstatus == 0, screen.text[-2000:]
    states = sorted(j.state for j in store.list_jobs(Source.QUEUE, JobFilter(kind=kind))[0])
    store.close()
    assert states == [JobState.DEAD, JobState.PENDING, JobState.PENDING]
