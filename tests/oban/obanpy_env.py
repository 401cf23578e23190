"""oban-py's own environment for the partner process (``tests/oban/partner``), built by
``qctl.systems.oban.obanpy`` (as the demo's) in ``tests/oban/.venv-obanpy`` (git-ignored).

``make harness`` (``scripts/build_harness.sh``, which ``make test`` and ``.ci/run`` run
before the tests, under its own limit) builds it once; afterwards it is reused as long as
its stamp names the same requirement and interpreter, so no test pays for pip. Without a
Python 3.12 the partner's tests skip, unless ``QCTL_REQUIRE_OBAN=1`` (CI), which fails them.

The standard library alone, and ``qctl.systems.oban``'s package (which imports none of
qctl's dependencies): ``make harness`` runs this with any Python 3 from the repository's
root, before the project's own environment exists (``python3 -m tests.oban.obanpy_env``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from qctl.systems.oban import obanpy

VENV = Path(__file__).resolve().parent / ".venv-obanpy"
MISSING = obanpy.MISSING


def ready() -> Path | None:
    return obanpy.ready(VENV)


def build(timeout: float = 1800) -> Path:
    return obanpy.build(VENV, timeout)


def main(args: list[str]) -> int:
    """``make harness``: build, or say in one line why not. Without an interpreter this is
    no failure unless ``QCTL_REQUIRE_OBAN=1``. ``--check`` (``.ci/run``) only says whether
    there is an interpreter."""
    if args == ["--check"]:
        if obanpy.interpreter() is None:
            print(f"tests/oban: {MISSING}", file=sys.stderr)
            return 1
        return 0
    if obanpy.interpreter() is None and os.environ.get("QCTL_REQUIRE_OBAN") != "1":
        return 0
    try:
        build(float(os.environ.get("HARNESS_TIMEOUT", "1800")))
    except RuntimeError as exc:
        print(f"harness: oban-py partner: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
