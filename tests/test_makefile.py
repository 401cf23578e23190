"""``make try`` on a fresh clone: it says what it sets up and about how long, keeps pip's
output (setuptools' warnings) in a log, and shows that log when pip fails. A stand-in
Python makes the virtualenv, so no package index is involved."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# `python -m venv DIR` copies this script to DIR/bin/python; `python -m pip ...` talks
# like pip building an editable wheel, and fails when FAKE_PIP_FAIL is set.
FAKE_PYTHON = """#!/bin/sh
if [ "$2" = venv ]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0
fi
echo "Collecting psycopg"
echo "  BuildBackendWarning: Editable installation." >&2
if [ -n "$FAKE_PIP_FAIL" ]; then
    echo "ERROR: No matching distribution found for psycopg>=3.2" >&2
    exit 1
fi
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def _setup(tmp_path: Path, fail: bool) -> subprocess.CompletedProcess[str]:
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    venv = tmp_path / "venv"
    env = {**os.environ, "FAKE_PIP_FAIL": "1" if fail else ""}
    return subprocess.run(
        ["make", "-s", "-C", str(ROOT), f"PYTHON={python}", f"VENV={venv}", f"{venv}/.installed"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_setup_says_what_and_how_long_and_keeps_pip_quiet(tmp_path: Path) -> None:
    done = _setup(tmp_path, fail=False)
    assert done.returncode == 0, done.stderr
    assert re.search(r"setting up \S+venv, 1 to 2 minutes", done.stdout)
    assert "is ready" in done.stdout
    assert "Warning" not in done.stdout + done.stderr
    assert "Collecting" not in done.stdout + done.stderr
    assert "BuildBackendWarning" in (tmp_path / "venv" / "install.log").read_text()


def test_a_failing_pip_shows_its_log_and_fails(tmp_path: Path) -> None:
    failed = _setup(tmp_path, fail=True)
    assert failed.returncode != 0
    log, _, after = failed.stderr.partition("No matching distribution found for psycopg")
    assert "BuildBackendWarning" in log
    assert "failed: pip's log is above" in after
    assert not (tmp_path / "venv" / ".installed").exists()


def test_the_quick_start_is_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert commands == ["make try", "make test"]
