"""The River demo's real clients: the Go program ``riverdemo/`` (its own ``go.mod`` pins
River v0.51.2, riverpgxv5 and pgx), built with the machine's ``go`` into a directory of
its own, under ``$XDG_CACHE_HOME/qctl/`` for the demo (``demo_dir``); built once and
reused while its stamp names the same sources and toolchain.

The toolchain: ``$QCTL_RIVERDEMO_GO`` when set, else ``go`` on ``PATH``.

The standard library alone: ``make harness`` runs this before qctl's own environment
exists (``tests/river/riverdemo_env.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from qctl.core.paths import demo_cache

VERSION = "0.51.2"
SOURCES = ("main.go", "go.mod", "go.sum")
MISSING = "no Go toolchain (`go` on PATH) to build River's clients with"
PROGRAM = "riverdemo"
STAMP = "qctl-riverdemo.json"
LOG = "build.log"
"""go build's output, in the build's directory: named when a build fails."""


def demo_dir() -> Path:
    """The demo's build: ``$XDG_CACHE_HOME/qctl/riverdemo-v<version>``."""
    return demo_cache(f"riverdemo-v{VERSION}")


def toolchain() -> str | None:
    """The ``go`` to build with, or None."""
    chosen = os.environ.get("QCTL_RIVERDEMO_GO")
    if chosen is not None:
        return shutil.which(chosen) if chosen else None
    return shutil.which("go")


def _source() -> Path:
    return Path(str(files("qctl.systems.river").joinpath("riverdemo")))


def _stamp(go: str) -> dict[str, str]:
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update((_source() / name).read_bytes())
    return {"sources": digest.hexdigest(), "go": os.path.realpath(go)}


def ready(where: Path, go: str | None = None) -> Path | None:
    """The program built in ``where`` from these sources with this machine's ``go``, else
    None."""
    go = go or toolchain()
    program = where / PROGRAM
    if go is None or not program.exists():
        return None
    try:
        stamp = json.loads((where / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return program if stamp == _stamp(go) else None


def build(
    where: Path, timeout: float = 1800, announce: Callable[[str], None] | None = None
) -> Path:
    """Builds the program into ``where`` unless it is ready there; returns its path.
    ``announce`` is told what is built, with which toolchain, before a build starts.
    Raises ``RuntimeError`` with one line (go build's output is kept in ``where``'s
    ``build.log``)."""
    go = toolchain()
    if go is None:
        raise RuntimeError(MISSING)
    done = ready(where, go)
    if done is not None:
        return done
    if announce is not None:
        announce(f"River {VERSION}'s clients with {go} in {where}")
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    log = where / LOG
    command = [go, "build", "-buildvcs=false", "-o", str(where / PROGRAM), "."]
    with log.open("w") as out:
        try:
            code = subprocess.run(
                command, cwd=_source(), stdout=out, stderr=subprocess.STDOUT,
                timeout=timeout, check=False,
            ).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"go build took over {timeout:.0f}s; see {log}") from None
    if code != 0:
        raise RuntimeError(f"go build failed (exit {code}); see {log}")
    (where / STAMP).write_text(json.dumps(_stamp(go)))
    return where / PROGRAM
