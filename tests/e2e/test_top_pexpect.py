"""The real ``qctl top`` in a pty (120x40) on a SQLite file that another process
changes: the new state appears on screen, and a retry pressed on screen reaches the
database."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from qctl_store import open_store
from qctl_store.contract import AzyncStore
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


def dead_jobs(db: Path, kind: str, n: int) -> tuple[AzyncStore, list[uuid.UUID]]:
    """A migrated store on ``db`` with ``n`` dead jobs of ``kind``, and their ids."""
    store = open_store(f"sqlite:///{db}")
    store.migrate()
    for _ in range(n):
        store.enqueue(EnqueueParams(kind=kind, max_attempts=1))
    jobs = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=n))
    for job in jobs:
        assert job.lease_token is not None
        store.dead(job.id, job.lease_token, "boom")
    return store, [job.id for job in jobs]


@contextlib.contextmanager
def top(tmp_path: Path, db: Path) -> Iterator[Screen]:
    """``qctl top`` on ``db`` in a 120x40 pty; the block drives it, then it is quit with
    ``q`` and must exit 0."""
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
        yield screen
        child.send("q")
        child.expect(pexpect.EOF, timeout=15)
    finally:
        if child.isalive():
            child.terminate(force=True)
        child.close()
    assert child.exitstatus == 0, screen.text[-2000:]


def filter_dead(screen: Screen, kind: str) -> None:
    """From the overview to the Jobs tab's dead jobs of ``kind``."""
    screen.child.send("2")
    screen.wait_for("state all")  # the Jobs tab opens on every state
    screen.child.send("t")  # the state picker: d picks dead
    screen.wait_for("show the rows in which state")
    screen.child.send("d\r")
    screen.wait_for("state dead")
    screen.child.send("/")
    screen.wait_for("error text [key=value")  # the filter prompt
    screen.child.send(kind + "\r")


def test_top_follows_another_process_and_retries(tmp_path: Path) -> None:
    db = tmp_path / "top.db"
    dead_kind, new_kind = f"e2e_dead_{uuid.uuid4().hex[:6]}", f"e2e_new_{uuid.uuid4().hex[:6]}"
    store, [job_id] = dead_jobs(db, dead_kind, 1)
    try:
        with top(tmp_path, db) as screen:
            screen.wait_for(dead_kind)
            # Another process enqueues: the dashboard shows it without a key press.
            other_process(db, f"s.enqueue(EnqueueParams(kind={new_kind!r}))")
            screen.wait_for(new_kind)
            # Jobs screen, filtered to the dead job, retried and confirmed.
            filter_dead(screen, dead_kind)
            screen.wait_for(f"filter {dead_kind}   shown 1-1 of 1")  # applied: the table has focus
            screen.child.send("R")
            screen.wait_for("Yes (y)")
            screen.child.send("y")
            end = time.monotonic() + 20
            while store.get_job(Source.QUEUE, job_id).state != JobState.PENDING:
                assert time.monotonic() < end, "the retry never reached the database"
                screen.pump()
            screen.wait_for(f"filter {dead_kind}   shown 0 of 0")  # retried: it left the dead list
            # A change made elsewhere to that job appears too: archived, it is dead again.
            other_process(db, f"s.archive_job(Source.QUEUE, uuid.UUID({str(job_id)!r}))")
            screen.wait_for(f"filter {dead_kind}   shown 1-1 of 1")
    finally:
        store.close()
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
    store, _ = dead_jobs(db, kind, 3)
    try:
        with top(tmp_path, db) as screen:
            screen.wait_for(kind)
            filter_dead(screen, kind)
            screen.wait_for(f"filter {kind}   shown 1-3 of 3")
            screen.child.send("  ")  # mark two rows
            screen.wait_for("2 marked")
            screen.child.send("R")
            screen.wait_for("Retry 2 azync jobs (2 dead: ")
            screen.child.send("y")
            screen.wait_for(f"filter {kind}   shown 1-1 of 1")  # the two left the dead list
        states = sorted(j.state for j in store.list_jobs(Source.QUEUE, JobFilter(kind=kind))[0])
    finally:
        store.close()
    assert states == [JobState.DEAD, JobState.PENDING, JobState.PENDING]


def test_top_groups_dead_jobs_by_error(tmp_path: Path) -> None:
    """``g`` in a real terminal: the dead jobs grouped by error, enter a group's jobs."""
    db = tmp_path / "groups.db"
    kind = f"e2e_grp_{uuid.uuid4().hex[:6]}"
    store, _ = dead_jobs(db, kind, 3)
    try:
        with top(tmp_path, db) as screen:
            screen.wait_for(kind)
            filter_dead(screen, kind)
            screen.wait_for(f"filter {kind}   shown 1-3 of 3")
            screen.child.send("g")
            screen.wait_for("grouped by error 1 error over 3 jobs")
            screen.wait_for("last failed")  # the grouped table's header
            screen.child.send("\r")
            screen.wait_for(f"filter {kind} error:boom   shown 1-3 of 3")
    finally:
        store.close()


def test_top_command_line_completes_and_jumps(tmp_path: Path) -> None:
    """The ``:`` command line in a real terminal: tab completes a screen and a state,
    enter goes there; an unknown name says so; esc leaves."""
    db = tmp_path / "command.db"
    kind = f"e2e_cmd_{uuid.uuid4().hex[:6]}"
    store, _ = dead_jobs(db, kind, 2)
    try:
        with top(tmp_path, db) as screen:
            screen.wait_for(kind)
            command(screen, "jo\t de\t\r")  # typed at once: tab completes in order
            screen.wait_for("state dead")
            screen.child.send("/")
            screen.wait_for("error text [key=value")
            screen.child.send(kind + "\r")
            screen.wait_for(f"filter {kind}   shown 1-2 of 2")
            command(screen, "nosuch\r")
            screen.wait_for("no screen 'nosuch'")
            command(screen, "dag\x1b")  # esc leaves: still the jobs
            screen.wait_for("Filter s Source")
            command(screen, "over\t\r")
            screen.wait_for("Overview")
            screen.wait_for(kind)
    finally:
        store.close()


def command(screen: Screen, keys: str) -> None:
    """``:``, then ``keys`` once the prompt is up."""
    screen.child.send(":")
    screen.wait_for("screens: overview, jobs, dags")
    screen.child.send(keys)
