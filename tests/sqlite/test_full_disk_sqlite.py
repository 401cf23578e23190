"""A full SQLite database (SQLITE_FULL: its disk, or ``PRAGMA max_page_count``) is
``StorageFull``, exit 8 with its own line, never "unavailable" (exit 6); the write that
hit it leaves nothing behind, what committed before stands."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from qctl.core.exits import ExitCode, exit_code_for, message_for
from qctl_kit.errors import StorageFull
from qctl_store import Config
from qctl_store.sqlite import SqliteStore
from qctl_store.types import EnqueueParams, JobSearch

QCTL = Path(sys.executable).parent / "qctl"
BIG = {"blob": "x" * 20_000}


def test_max_page_count_is_storage_full(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "q.db"), Config())
    store.migrate()
    conn = store._conn()
    [(pages,)] = conn.execute("PRAGMA page_count").fetchall()
    conn.execute(f"PRAGMA max_page_count = {pages + 40}")
    kind = f"k_{uuid.uuid4().hex[:8]}"
    written = 0
    with pytest.raises(StorageFull) as raised:
        for _ in range(1000):
            store.enqueue(EnqueueParams(kind=kind, payload=BIG))
            written += 1
    assert written > 0
    assert exit_code_for(raised.value) == ExitCode.FULL == 8
    line = message_for(raised.value)
    assert "database or disk is full" in line and "rolled back" in line, line
    assert "unavailable" not in line
    conn.execute("PRAGMA max_page_count = 1073741823")
    # The failed enqueue left no row.
    assert store.count_jobs(JobSearch(kind=kind), exact=True)[0] == written
    store.close()


@contextlib.contextmanager
def tiny_filesystem(path: Path) -> Iterator[None]:
    """A 1 MiB tmpfs at ``path`` (root only: skipped where mounting is refused)."""
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(path)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_full_disk_exits_8_with_one_line(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    with tiny_filesystem(disk):
        dsn = f"sqlite:///{disk / 'q.db'}"
        env = {**os.environ, "QCTL_READ_ONLY": ""}

        def qctl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(QCTL), "--dsn", dsn, *args], capture_output=True, text=True, env=env
            )

        assert qctl("db", "migrate", "--yes").returncode == 0
        payload = '{"blob": "' + "x" * 60_000 + '"}'
        for _ in range(40):
            done = qctl("jobs", "enqueue", "k", "--payload", payload)
            if done.returncode:
                break
        assert done.returncode == 8, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert "database or disk is full" in done.stderr
        assert "Traceback" not in done.stderr
        # Still readable, full as it is.
        assert qctl("jobs", "list", "-o", "json").returncode == 0
