"""River's clients of the demo (``qctl/systems/river/riverdemo``), built by
``qctl.systems.river.riverclients`` (as the demo's) in ``tests/go/bin/riverdemo`` (git-ignored),
so that no test builds into the operator's cache.

``make harness`` (``scripts/build_harness.sh``) builds it once with the Go harness;
afterwards it is reused as long as its stamp names the same sources and toolchain.
Without Go it skips, unless ``QCTL_REQUIRE_GO=1`` (CI).

The standard library alone, and ``qctl.systems.river``'s package (which imports none of
qctl's dependencies): ``make harness`` runs this with any Python 3 from the repository's
root (``python3 -m tests.river.riverdemo_env``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from qctl.systems.river import riverclients

DIR = Path(__file__).resolve().parent.parent / "go" / "bin" / "riverdemo"


def main() -> int:
    """``make harness``: build, or say in one line why not."""
    if riverclients.toolchain() is None and os.environ.get("QCTL_REQUIRE_GO") != "1":
        return 0
    try:
        riverclients.build(DIR, float(os.environ.get("HARNESS_TIMEOUT", "1800")))
    except RuntimeError as exc:
        print(f"harness: River demo's clients: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
