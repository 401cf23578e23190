"""oban-py's own environment for the partner process (``tests/oban/partner``): a Python
3.12+ virtual environment in ``tests/oban/.venv-obanpy`` (git-ignored) holding ``oban`` from
PyPI, outside the project's own ``.venv`` (whose Python is 3.11; oban-py needs 3.12).

``make harness`` (``scripts/build_harness.sh``, which ``make test`` and ``.ci/run`` run
before the tests, under its own limit) builds it once; afterwards it is reused as long as
its stamp names the same requirement and interpreter, so no test pays for pip.

The interpreter: ``$QCTL_OBANPY_PYTHON`` when set, else the first of ``python3.12``,
``python3.13``, ``python3`` on ``PATH`` and pyenv's installed 3.12+ versions that really
runs as Python 3.12 or newer (a pyenv shim for a version not selected does not).
Without one the partner's tests skip, unless ``QCTL_REQUIRE_OBAN=1`` (CI), which fails them.

This module uses the standard library alone: ``make harness`` runs it with any Python 3,
before the project's own environment exists (``python3 tests/oban/obanpy_env.py``).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REQUIREMENT = "oban==0.7.0"
HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-obanpy"
STAMP = VENV / "qctl-partner.json"
LOG = VENV / "install.log"
MINIMUM = (3, 12)
MISSING = "no Python 3.12 or newer (python3.12 on PATH, or pyenv's) for oban-py"


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
    """A Python 3.12 or newer to build the environment with, or None."""
    chosen = os.environ.get("QCTL_OBANPY_PYTHON")
    if chosen:
        return chosen if (_version(chosen) or (0, 0)) >= MINIMUM else None
    for python in _candidates():
        if (_version(python) or (0, 0)) >= MINIMUM:
            return python
    return None


def _stamp(python: str) -> dict[str, str]:
    return {"requirement": REQUIREMENT, "interpreter": os.path.realpath(python)}


def ready(python: str | None = None) -> Path | None:
    """The environment's own ``bin/python`` when it is built for ``REQUIREMENT`` with this
    machine's interpreter, else None."""
    python = python or interpreter()
    venv_python = VENV / "bin" / "python"
    if python is None or not venv_python.exists():
        return None
    try:
        stamp = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return None
    return venv_python if stamp == _stamp(python) else None


def build(timeout: float = 1800) -> Path:
    """Builds the environment unless it is ready; returns its ``bin/python``. Raises
    ``RuntimeError`` with one line (pip's output is kept in ``install.log``)."""
    python = interpreter()
    if python is None:
        raise RuntimeError(MISSING)
    done = ready(python)
    if done is not None:
        return done
    shutil.rmtree(VENV, ignore_errors=True)
    steps = [
        [python, "-m", "venv", str(VENV)],
        [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", REQUIREMENT],
    ]
    for step in steps:
        VENV.mkdir(parents=True, exist_ok=True)
        # A second try: the index's answer can fail once on a loaded machine.
        for _ in range(2):
            with LOG.open("a") as log:
                try:
                    code = subprocess.run(
                        step, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False
                    ).returncode
                except subprocess.TimeoutExpired:
                    raise RuntimeError(
                        f"building {VENV.name} took over {timeout:.0f}s; see {LOG}"
                    ) from None
            if code == 0:
                break
        if code != 0:
            raise RuntimeError(f"{' '.join(step[1:4])} failed (exit {code}); see {LOG}")
    STAMP.write_text(json.dumps(_stamp(python)))
    return VENV / "bin" / "python"


def main(args: list[str]) -> int:
    """``make harness``: build, or say in one line why not. Without an interpreter this is
    no failure unless ``QCTL_REQUIRE_OBAN=1``. ``--check`` (``.ci/run``) only says whether
    there is an interpreter."""
    if args == ["--check"]:
        if interpreter() is None:
            print(f"tests/oban: {MISSING}", file=sys.stderr)
            return 1
        return 0
    if interpreter() is None and os.environ.get("QCTL_REQUIRE_OBAN") != "1":
        return 0
    try:
        build(float(os.environ.get("HARNESS_TIMEOUT", "1800")))
    except RuntimeError as exc:
        print(f"harness: oban-py partner: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
