"""oban-py's own environment: a Python 3.12+ virtual environment holding ``oban`` from
PyPI, outside qctl's (oban-py needs Python 3.12; qctl runs on 3.11). The demo's real nodes
run in one under ``$XDG_CACHE_HOME/qctl/`` (``demo_venv``), the tests' oban-py partner in
``tests/oban/.venv-obanpy``; each is built once and reused while its stamp names the same
requirement and interpreter.

The interpreter: ``$QCTL_OBANPY_PYTHON`` when set, else the first of ``python3.12``,
``python3.13``, ``python3`` on ``PATH`` and pyenv's installed 3.12+ versions that really
runs as Python 3.12 or newer (a pyenv shim for a version not selected does not).

The standard library alone: ``make harness`` runs this before qctl's own environment
exists (``tests/oban/obanpy_env.py``).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from qctl.core.paths import demo_cache

VERSION = "0.7.0"
REQUIREMENT = f"oban=={VERSION}"
MINIMUM = (3, 12)
MISSING = "no Python 3.12 or newer (python3.12 on PATH, or pyenv's) for oban-py"
STAMP = "qctl-obanpy.json"
LOG = "install.log"
"""pip's output, in the environment's directory: named when a build fails."""


def demo_venv() -> Path:
    """The demo's environment: ``$XDG_CACHE_HOME/qctl/obanpy-<version>``."""
    return demo_cache(f"obanpy-{VERSION}")


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 2:
        return None
    return int(parts[0]), int(parts[1])


def _candidates() -> list[str]:
    found = [shutil.which(name) for name in ("python3.12", "python3.13", "python3")]
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    found += sorted(glob.glob(f"{pyenv_root}/versions/3.1[2-9]*/bin/python3"))
    return [path for path in found if path]


def interpreter() -> str | None:
    """A Python 3.12 or newer to build an environment with, or None."""
    chosen = os.environ.get("QCTL_OBANPY_PYTHON")
    if chosen:
        return chosen if (_version(chosen) or (0, 0)) >= MINIMUM else None
    for python in _candidates():
        if (_version(python) or (0, 0)) >= MINIMUM:
            return python
    return None


def _stamp(python: str) -> dict[str, str]:
    return {"requirement": REQUIREMENT, "interpreter": os.path.realpath(python)}


def ready(venv: Path, python: str | None = None) -> Path | None:
    """``venv``'s own ``bin/python`` when it is built for ``REQUIREMENT`` with this
    machine's interpreter, else None."""
    python = python or interpreter()
    venv_python = venv / "bin" / "python"
    if python is None or not venv_python.exists():
        return None
    try:
        stamp = json.loads((venv / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return venv_python if stamp == _stamp(python) else None


def build(venv: Path, timeout: float = 1800, announce: Callable[[str], None] | None = None) -> Path:
    """Builds ``venv`` unless it is ready; returns its ``bin/python``. ``announce`` is told
    what is built, with which interpreter, before a build starts. Raises ``RuntimeError``
    with one line (pip's output is kept in ``venv``'s ``install.log``)."""
    python = interpreter()
    if python is None:
        raise RuntimeError(MISSING)
    done = ready(venv, python)
    if done is not None:
        return done
    if announce is not None:
        announce(f"oban-py {VERSION} with {python} in {venv}")
    shutil.rmtree(venv, ignore_errors=True)
    log = venv / LOG
    steps = [
        [python, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", REQUIREMENT],
    ]
    for step in steps:
        venv.mkdir(parents=True, exist_ok=True)
        # A second try: the index's answer can fail once on a loaded machine.
        for _ in range(2):
            with log.open("a") as out:
                try:
                    code = subprocess.run(
                        step, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False
                    ).returncode
                except subprocess.TimeoutExpired:
                    raise RuntimeError(
                        f"building {venv.name} took over {timeout:.0f}s; see {log}"
                    ) from None
            if code == 0:
                break
        if code != 0:
            raise RuntimeError(f"{' '.join(step[1:4])} failed (exit {code}); see {log}")
    (venv / STAMP).write_text(json.dumps(_stamp(python)))
    return venv / "bin" / "python"
