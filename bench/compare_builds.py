"""Two builds of qctl side by side on the paths an operator waits on: ``qctl --help``, a
plain command (``jobs list`` on SQLite), and ``qctl top``'s first frame on an azync and a
DBOS database (SQLite), beside a minimal Textual app's. Each measurement takes the two
builds in turn (A B A B ...), so a slow minute on the machine hits both alike; the
figures are medians and the ratio is the candidate's over the baseline's.

    .venv/bin/python bench/compare_builds.py --baseline /tmp/before/.venv/bin/qctl \
        [--runs 15] [--frames 7]

The baseline is any other checkout's installed ``qctl`` (``git worktree add /tmp/before
REV && make -C /tmp/before .venv/.installed``); the candidate is this checkout's. Prints a
Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tui_bench import FLOOR_APP, env, first_frames

CANDIDATE = str(Path(sys.executable).parent / "qctl")


def timed(command: list[str], environ: dict[str, str]) -> float:
    t0 = time.monotonic()
    subprocess.run(command, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def in_turn(commands: dict[str, list[str]], environ: dict[str, str], runs: int) -> dict[str, float]:
    """Median wall seconds of each command, the commands run in turn ``runs`` times
    (after one warm-up each)."""
    for command in commands.values():
        timed(command, environ)
    out: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            out[name].append(timed(command, environ))
    return {name: statistics.median(v) for name, v in out.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", required=True, help="the other build's qctl executable")
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--frames", type=int, default=7)
    a = p.parse_args()
    builds = {"baseline": a.baseline, "candidate": CANDIDATE}
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        environ = env(tmp)
        azync = f"sqlite:///{tmp / 'azync.db'}"
        subprocess.run([CANDIDATE, "--dsn", azync, "db", "migrate"], env=environ, check=True)
        for n in range(50):
            subprocess.run(
                [CANDIDATE, "--dsn", azync, "jobs", "enqueue", f"bench.k{n % 5}"],
                env=environ,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        dbos = tmp / "dbos.sqlite"
        dbos_cli = Path(sys.executable).with_name("dbos")
        subprocess.run(
            [str(dbos_cli), "migrate", "--sys-db-url", f"sqlite:///{dbos}"],
            env=environ,
            check=True,
            capture_output=True,
        )
        for label, args in [
            ("qctl --help", ["--help"]),
            ("qctl jobs list (SQLite, 50 jobs)", ["--dsn", azync, "jobs", "list"]),
        ]:
            medians = in_turn({b: [q, *args] for b, q in builds.items()}, environ, a.runs)
            rows.append((label, medians["baseline"], medians["candidate"]))
        for label, args in [
            ("qctl top first frame, azync (SQLite)", ["--dsn", azync, "top"]),
            ("qctl top first frame, DBOS (SQLite)", ["--dsn", f"sqlite:///{dbos}", "top"]),
        ]:
            commands = {b: [q, *args] for b, q in builds.items()}
            frames = first_frames({**commands, "floor": FLOOR_APP}, tmp, a.frames)
            med = {name: statistics.median(v) for name, v in frames.items()}
            rows.append((label, med["baseline"], med["candidate"]))
            rows.append((f"  (a minimal Textual app in the same run: {med['floor']:.3f} s)", 0, 0))
    print("| path | baseline (s) | candidate (s) | candidate / baseline |")
    print("|---|---|---|---|")
    for label, before, after in rows:
        if not before:
            print(f"| {label} | | | |")
            continue
        print(f"| {label} | {before:.3f} | {after:.3f} | {after / before:.2f}x |")


if __name__ == "__main__":
    main()
