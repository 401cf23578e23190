"""Reads leave the filesystem as they found it, and a DSN libpq cannot use is a usage
error (exit 2), not an unavailable server."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def qctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qctl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_a_device_as_database_gets_no_lock_file_beside_it(tmp_path: Path) -> None:
    """``--dsn /dev/null`` used to create ``/dev/null-qctl-lock``."""
    device = Path("/dev/null")
    before = set(device.parent.iterdir())
    result = qctl("--dsn", str(device), "jobs", "list")
    assert result.returncode == 5, result.stderr
    assert set(device.parent.iterdir()) - before == set()


@pytest.mark.parametrize("root", [[], ["--read-only"]], ids=["plain", "read-only"])
@pytest.mark.parametrize(
    "read", [["jobs", "list"], ["queues", "list"], ["db", "status"], ["dags", "list"]]
)
def test_a_read_of_the_embedded_default_before_it_exists_creates_nothing(
    tmp_path: Path, root: list[str], read: list[str]
) -> None:
    """A read before any write reads an empty database; only a write creates the
    embedded default (``XDG_DATA_HOME`` pointing at a directory that does not exist)."""
    data = tmp_path / "nonexistent" / "x"
    env = {"XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    result = qctl(*root, *read, env=env)
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr  # "no rows" goes to stderr, as a note
    assert "no rows" in said or "not created yet" in said, said
    assert not (tmp_path / "nonexistent").exists()


def test_the_first_write_creates_the_embedded_default_and_reads_then_see_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "nonexistent" / "x"
    env = {"XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert qctl("jobs", "list", env=env).returncode == 0
    enqueued = qctl("jobs", "enqueue", "first.use", env=env)
    assert enqueued.returncode == 0, enqueued.stderr
    assert (data / "qctl" / "qctl.db").is_file()
    listed = qctl("jobs", "list", "-o", "json", env=env)
    assert [j["kind"] for j in json.loads(listed.stdout)] == ["first.use"]


@pytest.mark.parametrize("dsn", ["service=nosuch_qctl_test", "postgresql:///test?service=nosuch"])
def test_an_unknown_service_is_a_usage_error(dsn: str, tmp_path: Path) -> None:
    result = qctl("--dsn", dsn, "jobs", "list", env={"PGSERVICEFILE": str(tmp_path / "none")})
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("qctl: error: malformed PostgreSQL DSN")


def test_migrate_refuses_a_device(tmp_path: Path) -> None:
    """``db migrate`` on ``/dev/null`` used to write ``/dev/null-journal``."""
    device = Path("/dev/null")
    before = set(device.parent.iterdir())
    result = qctl("--dsn", str(device), "db", "migrate")
    assert result.returncode == 2, result.stderr
    assert "/dev/null is not a regular file" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert set(device.parent.iterdir()) - before == set()


@pytest.fixture(params=["azync", "dbos"])
def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, list[str], list[str]]:
    """An SQLite file of each system with SQLite files, one row in it, closed (a WAL
    database, which needs a ``-shm`` file beside it to be read unless opened immutable):
    its path, a listing that shows the row and a write."""
    path = tmp_path / "queue.db"
    if request.param == "dbos":
        from tests.dbos.fixtures import make_sqlite_system_db

        make_sqlite_system_db(path)
        with contextlib.closing(sqlite3.connect(path)) as conn, conn:
            conn.execute(
                "INSERT INTO workflow_status (workflow_uuid, status, name)"
                " VALUES ('ro-wf', 'SUCCESS', 'ro.kind')"
            )
        return path, ["workflows", "list"], ["workflows", "delete", "ro-wf", "--yes"]
    from qctl_store import Config
    from qctl_store.sqlite import SqliteStore
    from qctl_store.types import EnqueueParams

    store = SqliteStore(str(path), Config(create_database=True))
    store.migrate()
    store.enqueue(EnqueueParams(kind="ro.kind"))
    store.close()
    return path, ["jobs", "list"], ["jobs", "enqueue", "ro.other", "--yes"]


def read_only_filesystem(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """``path``'s filesystem reported read-only (root may write anything, and a real
    read-only mount needs privileges the tests lack)."""
    real = os.statvfs

    def statvfs(p: Any) -> Any:
        result = real(p)
        if Path(p).resolve().parent != path.parent:
            return result
        fields = list(result)
        fields[8] |= os.ST_RDONLY  # f_flag
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", statvfs)


@pytest.mark.parametrize("how", ["read-only filesystem", "unwritable file", "--read-only"])
def test_an_unwritable_file_is_read_and_a_write_refused(
    migrated: tuple[Path, list[str], list[str]], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    from typer.testing import CliRunner

    from qctl.cli.main import app

    path, listing, write = migrated
    root = ["--dsn", f"sqlite:///{path}"]
    if how == "read-only filesystem":
        read_only_filesystem(monkeypatch, path)
    elif how == "unwritable file":
        real = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode, **kw: mode != os.W_OK and real(p, mode, **kw)
        )
    else:
        root.append("--read-only")
    files = sorted(path.parent.glob("queue.db*"))
    listed = CliRunner().invoke(app, [*root, *listing, "-o", "json"])
    assert listed.exit_code == 0, listed.output
    assert [r.get("kind") or r.get("name") for r in json.loads(listed.stdout)] == ["ro.kind"]
    written = CliRunner().invoke(app, [*root, *write])
    assert written.exit_code == 4, written.output
    [line] = written.stderr.splitlines()
    assert "write was refused" in line or "read-only" in line, line
    if how == "read-only filesystem":  # immutable: no -wal, -shm or lock file either
        assert sorted(path.parent.glob("queue.db*")) == files
