"""Start-up cost of the command line: wall time of ``qctl --help`` and ``qctl queues list``
(on a scratch embedded database) against ``python -c pass``; 20 runs each, median.

    python bench/cli_startup.py [--runs N]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QCTL = str(Path(sys.executable).parent / "qctl")


def median_seconds(cmd: list[str], env: dict[str, str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 20
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp}
        dsn = f"sqlite:///{tmp}/bench.db"
        subprocess.run(
            [QCTL, "--dsn", dsn, "db", "migrate"], env=env, check=True, stdout=subprocess.DEVNULL
        )
        subprocess.run(
            [QCTL, "--dsn", dsn, "jobs", "enqueue", "bench.kind"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        base = median_seconds([sys.executable, "-c", "pass"], env, runs)
        cases = {
            "python -c pass": base,
            "qctl --help": median_seconds([QCTL, "--help"], env, runs),
            "qctl queues list": median_seconds([QCTL, "--dsn", dsn, "queues", "list"], env, runs),
            # The same without a table: the difference is tabulate's import.
            "  ... -o json": median_seconds(
                [QCTL, "--dsn", dsn, "queues", "list", "-o", "json"], env, runs
            ),
        }
    print(f"median of {runs} runs")
    print(f"{'command':<20} {'seconds':>8} {'x python':>9}")
    for name, seconds in cases.items():
        print(f"{name:<20} {seconds:8.3f} {seconds / base:9.1f}")


if __name__ == "__main__":
    main()
