"""Reads leave the filesystem as they found it, and a DSN libpq cannot use is a usage
error (exit 2), not an unavailable server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_a_read_only_read_of_the_default_database_makes_no_directory(tmp_path: Path) -> None:
    data = tmp_path / "nonexistent" / "x"
    result = qctl("--read-only", "jobs", "list", env={"XDG_DATA_HOME": str(data)})
    assert result.returncode == 6, result.stderr
    assert not (tmp_path / "nonexistent").exists()


@pytest.mark.parametrize("dsn", ["service=nosuch_qctl_test", "postgresql:///test?service=nosuch"])
def test_an_unknown_service_is_a_usage_error(dsn: str, tmp_path: Path) -> None:
    result = qctl("--dsn", dsn, "jobs", "list", env={"PGSERVICEFILE": str(tmp_path / "none")})
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("qctl: error: malformed PostgreSQL DSN")
