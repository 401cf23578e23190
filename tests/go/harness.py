"""The Go harness programs of ``tests/go`` (a Go module of this project whose ``go.mod``
requires the Go systems qctl operates), built on first use and driven over JSON lines.

Each program under ``cmd/`` runs a system's own Go code as an application would and
answers one JSON object a line per request. ``make harness`` (which ``make test`` and
``.ci/run`` run first) builds them before the tests, under its own limit; here ``go build``
only checks that nothing changed since.

Without a Go toolchain the tests that need one skip, unless ``QCTL_REQUIRE_GO=1`` (CI),
which fails them instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PG_DSN

MODULE = Path(__file__).resolve().parent
BIN = MODULE / "bin"
_built: dict[str, Path] = {}


def require_go() -> str:
    go = shutil.which("go")
    if go is None:
        if os.environ.get("QCTL_REQUIRE_GO") == "1":
            pytest.fail("QCTL_REQUIRE_GO=1 but no `go` on PATH")
        pytest.skip("no Go toolchain (`go` on PATH) for the Go harness")
    return go


def build(program: str) -> Path:
    """The harness ``cmd/<program>``, built once per test run (go build itself decides
    whether anything changed since the last one)."""
    if program not in _built:
        go = require_go()
        out = BIN / program
        done = subprocess.run(
            [go, "build", "-buildvcs=false", "-o", str(out), f"./cmd/{program}"],
            cwd=MODULE,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if done.returncode != 0:
            pytest.fail(f"go build ./cmd/{program} failed:\n{done.stderr}")
        _built[program] = out
    return _built[program]


def pgx_dsn(schema: str) -> str:
    """The test database's ``schema`` as a Go harness reaches it (pgx: the search_path in
    the DSN)."""
    sep = "&" if "?" in PG_DSN else "?"
    return f"{PG_DSN}{sep}sslmode=disable&search_path={schema}"


class HarnessError(Exception):
    """A request the Go side answered with an error."""


class Harness:
    """One running harness process; ``call`` sends a request and returns its answer."""

    def __init__(self, program: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(build(program)), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise HarnessError(f"{op}: the harness exited ({self.proc.wait(5)})")
        answer: dict[str, Any] = json.loads(line)
        if not answer.pop("ok"):
            raise HarnessError(f"{op}: {answer['error']}")
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
